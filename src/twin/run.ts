// Running a twin and comparing it with its capture. The twin is judged by the same monitor and observation as
// `health` (so its verdict is the one `health --from` prints); a replay from an earlier instant samples the twin at
// every later instant's time and says where it first disagrees with what the capture recorded, the way a
// record/replay tool reports a divergence: a head that stood in one and moved in the other, a waiter asleep in one
// only, a state, a port, a device gone, or a finding the twin did not reach within the tolerance.
import { emuBackendOf } from '../emu/index.js';
import { EmuUnit } from '../emu/unit.js';
import { Monitor } from '../monitor/monitor.js';
import { observationMs, observe } from '../monitor/observation.js';
import { realSleep } from '../monitor/pace.js';
import type { Round, UnitRound } from '../monitor/round.js';
import { observationOf, seedWaiterKey, verdictOf } from './build.js';
import type { EngineView, TwinFinding, TwinFixture, TwinObservation } from './fixture.js';
import { CAUSE_AT_MS, causeForm, TWIN_SETTLE_MS, type TwinRunOptions, twinUnitOptions } from './options.js';

/** The windows a twin is judged with (health's options). */
export interface JudgeWindows {
  stallMs: number;
  strandMs: number;
}

/** A twin's run: its unit, the rounds taken (each at its time), and its verdict. */
export interface TwinRunResult {
  readonly unit: EmuUnit;
  readonly rounds: readonly { readonly atMs: number; readonly round: Round }[];
  readonly verdict: readonly TwinFinding[];
}

/** Where a replay first disagreed with the capture. */
export interface Divergence {
  readonly instant: number;
  readonly afterMs: number;
  /** What disagreed, in a sentence. */
  readonly what: string;
  /** A fault that would make the twin do what the capture did, when one is known. */
  readonly hint: string | null;
}

/** A replay's outcome. */
export interface ReplayResult extends TwinRunResult {
  readonly divergence: Divergence | null;
}

/** The same finding: its code, and where. */
export function sameFinding(a: TwinFinding, b: TwinFinding): boolean {
  return a.code === b.code && a.unit === b.unit && a.engine === b.engine && a.port === b.port;
}

/** `SD201 hfi1_0 sdma5`: a finding by its code and place. */
export function findingPlace(f: TwinFinding): string {
  return [f.code, f.unit, f.engine !== null ? `sdma${f.engine}` : null, f.port !== null ? `port ${f.port}` : null]
    .filter((x) => x !== null)
    .join(' ');
}

/** Whether two verdicts hold the same findings (by code and place). */
export function sameVerdict(a: readonly TwinFinding[], b: readonly TwinFinding[]): boolean {
  return a.every((x) => b.some((y) => sameFinding(x, y))) && b.every((y) => a.some((x) => sameFinding(x, y)));
}

/** The unit's round of `round` (the twin has one unit). */
function unitRound(round: Round): UnitRound | undefined {
  return round.units[0];
}

/**
 * Run the twin `f`: a round at each of `atMs` (ascending, from 0), then health's observation from the last of them;
 * its verdict is that observation's findings (notes left out).
 */
export async function runTwin(
  f: TwinFixture,
  o: TwinRunOptions,
  w: JudgeWindows,
  atMs: readonly number[] = [0],
  then: 'observe' | 'stop' = 'observe',
): Promise<TwinRunResult> {
  const unit = new EmuUnit(twinUnitOptions(f, o));
  const backend = emuBackendOf(unit, TWIN_SETTLE_MS);
  const monitor = new Monitor(backend, { stallMs: w.stallMs, strandMs: w.strandMs, requireUnit: true });
  try {
    const rounds: { atMs: number; round: Round }[] = [];
    await backend.units();
    for (const t of atMs) {
      if (t > unit.nowMs) backend.advanceMs(t - unit.nowMs);
      rounds.push({ atMs: unit.nowMs, round: await monitor.round() });
    }
    const first = rounds.at(-1)?.round;
    if (then === 'stop' && first) return { unit, rounds, verdict: verdictOf(first.findings) };
    const { round } = await observe(monitor, { ...w, sleep: realSleep, ...(first ? { first } : {}) });
    return { unit, rounds, verdict: verdictOf(round.findings) };
  } finally {
    await monitor.close();
  }
}

/** Replay `f` to each of its later instants and to its verdict; the first disagreement with the capture, or null. */
export async function replayTwin(f: TwinFixture, o: TwinRunOptions, w: JudgeWindows, toleranceMs: number): Promise<ReplayResult> {
  const obs = f.observations;
  const lastMs = obs.at(-1)?.afterMs ?? 0;
  // Every instant's time, and enough after the last one for a finding the capture showed late to come within the tolerance.
  const grid = new Set<number>([0, ...obs.map((x) => x.afterMs)]);
  const step = Math.max(1, Math.ceil(Math.min(w.stallMs, w.strandMs) / 2));
  if (obs.length > 0) for (let t = 0; t <= lastMs + toleranceMs; t += step) grid.add(t);
  const times = [...grid].sort((a, b) => a - b);
  const run = await runTwin(f, o, w, times);
  const views = run.rounds.map((r) => {
    const u = unitRound(r.round);
    return { atMs: r.atMs, obs: u ? observationOf(u, r.round.findings, -1, r.atMs) : null };
  });
  const at = (t: number) => views.find((v) => v.atMs === Math.max(t, TWIN_SETTLE_MS))?.obs ?? null;
  const known = knownWaiters(f);
  let prevTwin = at(0);
  let prevCapture: TwinObservation | null = seedObservation(f);
  for (const x of obs) {
    const twin = at(x.afterMs);
    if (!twin || !prevTwin || !prevCapture) break;
    // A waiter's sleep is compared within the tolerance: a capture dates it only to its first sample (a lower bound).
    const twinHolds = (w: string, fromMs: number, toMs: number) =>
      views.some((v) => v.obs !== null && v.atMs >= fromMs && v.atMs <= toMs && holds(v.obs.waiters, w));
    const what = firstDifference(prevCapture, x, prevTwin, twin, known, {
      asleepNear: (w) => twinHolds(w, x.afterMs - toleranceMs, x.afterMs + toleranceMs),
      awakeNear: (w) => {
        const by = views.filter((v) => v.obs !== null && v.atMs <= x.afterMs + toleranceMs).at(-1)?.obs;
        return by !== undefined && by !== null && !holds(by.waiters, w);
      },
    });
    if (what) return { ...run, divergence: { instant: x.instant, afterMs: x.afterMs, ...what } };
    for (const finding of x.findings) {
      const reached = views.some(
        (v) =>
          v.obs !== null && Math.abs(v.atMs - x.afterMs) <= toleranceMs && v.obs.findings.some((g) => sameFinding(g, finding)),
      );
      if (!reached) {
        return {
          ...run,
          divergence: {
            instant: x.instant,
            afterMs: x.afterMs,
            what: `the capture shows ${findingPlace(finding)}; the twin did not reach it within ${toleranceMs} ms`,
            hint: hintFor(finding, prevCapture.afterMs),
          },
        };
      }
    }
    prevTwin = twin;
    prevCapture = x;
  }
  if (!sameVerdict(run.verdict, f.verdict)) {
    const missing = f.verdict.filter((v) => !run.verdict.some((g) => sameFinding(g, v)));
    const extra = run.verdict.filter((g) => !f.verdict.some((v) => sameFinding(g, v)));
    const what = [
      missing.length ? `the capture's ${missing.map(findingPlace).join(', ')} not reached` : null,
      extra.length ? `the twin also shows ${extra.map(findingPlace).join(', ')}` : null,
    ]
      .filter((s) => s !== null)
      .join('; ');
    const last = obs.at(-1);
    return {
      ...run,
      divergence: {
        instant: last?.instant ?? f.source.instant,
        afterMs: lastMs,
        what: `at the verdict: ${what}`,
        hint: missing[0] ? verdictHint(f, missing[0]) : null,
      },
    };
  }
  return { ...run, divergence: null };
}

/** The seed instant as an observation (engines' heads and rings from the seed), to compare the first later one with. */
function seedObservation(f: TwinFixture): TwinObservation {
  const engines: EngineView[] = f.seed.engines.map((e) => ({
    engine: e.engine,
    state: null,
    descqHead: e.descqHead,
    inFlight: e.inFlight.reduce((n, t) => n + t.numDesc, 0),
  }));
  return { instant: f.source.instant, afterMs: 0, gone: false, engines, waiters: [], ports: [], findings: [] };
}

/** The waiters the capture names (at its seed instant or later): the only ones compared (a workload's are the twin's). */
function knownWaiters(f: TwinFixture): Set<string> {
  const out = new Set<string>();
  for (const x of f.observations) for (const w of x.waiters) out.add(w);
  for (const w of f.seed.waiters) out.add(seedWaiterKey(w));
  return out;
}

/** Whether `keys` holds the waiter `key`: the same sender, on the same engine where both name one (`sdma?`: not known). */
function holds(keys: readonly string[] | Set<string>, key: string): boolean {
  const who = (k: string) => k.replace(/ on sdma(\d+|\?)$/, '');
  const engine = (k: string) => / on sdma(\d+|\?)$/.exec(k)?.[1] ?? '?';
  for (const k of keys) {
    if (who(k) !== who(key)) continue;
    if (engine(k) === '?' || engine(key) === '?' || engine(k) === engine(key)) return true;
  }
  return false;
}

/** A head that stood with work in flight from `a` to `b`. */
function stood(a: EngineView | undefined, b: EngineView | undefined): boolean {
  return (a?.inFlight ?? 0) > 0 && (b?.inFlight ?? 0) > 0 && a?.descqHead === b?.descqHead && a?.descqHead !== null;
}

/** A head that moved from `a` to `b`. */
function moved(a: EngineView | undefined, b: EngineView | undefined): boolean {
  return a?.descqHead != null && b?.descqHead != null && a.descqHead !== b.descqHead;
}

const ms = (t: number) => `${Math.round(t)}`;

/** The first thing the twin does otherwise than the capture between two instants, with a fault that would explain it. */
function firstDifference(
  pc: TwinObservation,
  c: TwinObservation,
  pt: TwinObservation,
  t: TwinObservation,
  known: Set<string>,
  near: { asleepNear: (w: string) => boolean; awakeNear: (w: string) => boolean },
): { what: string; hint: string | null } | null {
  const mid = (pc.afterMs + c.afterMs) / 2;
  if (c.gone !== t.gone) {
    return c.gone
      ? { what: "the capture's device is gone (registers all-ones); the twin's is not", hint: `--fault device-gone@${ms(mid)}` }
      : { what: "the twin's device is gone; the capture's is not", hint: null };
  }
  if (c.gone) return null;
  for (const ce of c.engines) {
    const te = t.engines.find((e) => e.engine === ce.engine);
    if (!te) continue;
    const id = ce.engine;
    if (ce.state !== null && te.state !== null && ce.state !== te.state) {
      const halt = ce.state === 's50_HwHaltWait';
      return {
        what: `sdma${id} is in ${ce.state} in the capture, ${te.state} in the twin`,
        hint: halt ? `--fault halt-stuck@${ms(mid)}:${id}` : null,
      };
    }
    const pce = pc.engines.find((e) => e.engine === id);
    const pte = pt.engines.find((e) => e.engine === id);
    if (stood(pce, ce) && moved(pte, te)) {
      return {
        what: `sdma${id}'s head stood with ${ce.inFlight} descriptors in flight in the capture (at ${ce.descqHead}); it moved in the twin`,
        hint: `--fault stop-fetch@${ms(mid)}:${id} (or fabric-stall@${ms(mid)} when its port had no credits)`,
      };
    }
    if (moved(pce, ce) && stood(pte, te)) {
      return {
        what: `sdma${id}'s head moved in the capture; it stood with ${te.inFlight} descriptors in flight in the twin`,
        hint: null,
      };
    }
  }
  for (const w of c.waiters) {
    if (holds(known, w) && !holds(t.waiters, w) && !near.asleepNear(w)) {
      const engine = /on sdma(\d+)$/.exec(w)?.[1];
      const kind = w.startsWith('QP') ? 'qp' : w.startsWith('PSM') ? 'psm' : 'ipoib';
      const fault = kind === 'ipoib' ? 'ipoib-timeout' : `lost-wakeup:${kind}`;
      return {
        what: `${w} is asleep in the capture, not in the twin`,
        hint: engine !== undefined && !holds(pc.waiters, w) ? `--fault ${fault}@${ms(pc.afterMs)}:${engine}` : null,
      };
    }
  }
  for (const w of t.waiters) {
    if (holds(known, w) && !holds(c.waiters, w) && !near.awakeNear(w)) {
      return {
        what: `${w} is asleep in the twin, not in the capture (woken there: traffic the twin does not carry)`,
        hint: '--workload (traffic on its engine wakes it)',
      };
    }
  }
  for (const cp of c.ports) {
    const tp = t.ports.find((p) => p.port === cp.port);
    if (tp && cp.state !== null && tp.state !== null && cp.state !== tp.state) {
      return {
        what: `port ${cp.port} is ${cp.state} in the capture, ${tp.state} in the twin`,
        hint: cp.state === 'ACTIVE' ? `--fault link-up@${ms(mid)}:${cp.port}` : `--fault link-down@${ms(mid)}:${cp.port}`,
      };
    }
  }
  return null;
}

/**
 * What would bring the capture's finding `g` about in the twin: a PSM writer's stall ends within its 1 s wait (it
 * gives up and retries), so a twin started near its end sees none; an earlier instant still holds it.
 */
function verdictHint(f: TwinFixture, g: TwinFinding): string | null {
  if (g.code === 'SD203' && f.source.instant > 0)
    return `--from-instant ${Math.max(0, f.source.instant - 2)} (a PSM writer's stall lasts at most its 1 s wait)`;
  return hintFor(g, 0);
}

/** A fault that would bring `f` about, from `atMs` on (null when none is known). */
function hintFor(f: TwinFinding, atMs: number): string | null {
  const t = ms(atMs);
  switch (f.code) {
    case 'SD101':
      return f.engine === null ? null : `--fault stop-fetch@${t}:${f.engine}`;
    case 'SD102':
      return f.engine === null ? null : `--fault halt-stuck@${t}:${f.engine}`;
    case 'SD109':
      return `--fault fabric-stall@${t}${f.port === null ? '' : `:${f.port}`}`;
    case 'SD201':
      return f.engine === null ? null : `--fault lost-wakeup@${t}:${f.engine}`;
    case 'SD203':
      return f.engine === null ? null : `--fault lost-wakeup:psm@${t}:${f.engine}`;
    case 'SD207':
      return f.engine === null ? null : `--fault ipoib-timeout@${t}:${f.engine}`;
    case 'SD301':
      return `--fault device-gone@${t}`;
    case 'SD306':
    case 'SD309':
      return `--fault link-down@${t}${f.port === null ? '' : `:${f.port}`}`;
    default:
      return null;
  }
}

/** The twin's verdict over health's observation (its window for these options), from its seed. */
export async function twinVerdict(f: TwinFixture, o: TwinRunOptions, w: JudgeWindows): Promise<TwinRunResult> {
  return runTwin(f, o, w, [0]);
}

/** Health's observation length for these windows (ms): how long a twin runs to its verdict. */
export function verdictWindowMs(w: JudgeWindows): number {
  return observationMs(w.stallMs);
}

/** One finding of the capture under a change: whether the cause form recreates it as captured, and under the change. */
export interface ChangeOutcome {
  readonly finding: TwinFinding;
  /** When it first showed as captured (ms after the seed instant), or null when the twin does not recreate it. */
  readonly asCapturedMs: number | null;
  /** When it first showed under the change, or null: it does not come back. */
  readonly changedMs: number | null;
}

/** A change tried against the twin: each finding of the capture, as captured and under the change, from its cause. */
export interface ChangeResult {
  readonly outcomes: readonly ChangeOutcome[];
  /** Findings the changed run shows that the capture did not. */
  readonly newFindings: readonly TwinFinding[];
  /** The faults that replayed the findings' causes. */
  readonly causes: readonly string[];
  readonly windowMs: number;
}

/** The first round (its time) whose findings hold `f`, or null. */
function firstShown(run: TwinRunResult, f: TwinFinding): number | null {
  for (const r of run.rounds) if (verdictOf(r.round.findings).some((g) => sameFinding(g, f))) return r.atMs;
  return null;
}

/**
 * Try `change` (another order, other parameters) against the capture's findings: the cause form of the twin, once as
 * captured and once changed, each sampled over health's window; a finding comes back when the changed run shows it.
 */
export async function tryChange(
  f: TwinFixture,
  o: TwinRunOptions,
  change: Pick<TwinRunOptions, 'variant' | 'params'>,
  w: JudgeWindows,
): Promise<ChangeResult> {
  const windowMs = CAUSE_AT_MS + observationMs(w.stallMs);
  const step = Math.max(1, Math.ceil(Math.min(w.stallMs, w.strandMs) / 2));
  const times: number[] = [];
  for (let t = 0; t <= windowMs; t += step) times.push(t);
  if (times.at(-1) !== windowMs) times.push(windowMs);
  const base = { ...o, form: 'cause' as const };
  const captured = await runTwin(f, { ...base, variant: 'kernel', params: [] }, w, times, 'stop');
  const changed = await runTwin(f, { ...base, ...change }, w, times, 'stop');
  const outcomes = f.verdict.map((finding) => ({
    finding,
    asCapturedMs: firstShown(captured, finding),
    changedMs: firstShown(changed, finding),
  }));
  const seen = new Map<string, TwinFinding>();
  for (const r of changed.rounds) {
    for (const g of verdictOf(r.round.findings)) if (!f.verdict.some((v) => sameFinding(v, g))) seen.set(findingPlace(g), g);
  }
  return { outcomes, newFindings: [...seen.values()], causes: causeForm(f).faults, windowMs };
}
