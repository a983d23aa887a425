// `emu twin --from CAPTURE`: the emulator started from a capture's instant. It says what it took from the capture,
// what it assumed and what it left; replays the later instants and says where it first diverges; runs on to its
// verdict and compares it with the capture's; tries a change (`--variant`, `--param`) against the findings' causes;
// and writes a fixture and a test that pins the verdict (`--emit-test DIR`).
import type { Argv } from 'yargs';
import { isVariant, VARIANTS } from '../emu/race/variants.js';
import type { EmuVariant } from '../emu/unit.js';
import { usageError } from '../errors.js';
import type { TwinFinding, TwinFixture, TwinRun } from '../twin/fixture.js';
import { TWIN_STALL_MS, TWIN_STRAND_MS } from '../twin/load.js';
import { TWIN_WORKLOAD, type TwinRunOptions } from '../twin/options.js';
import { type ChangeResult, type Divergence, findingPlace, type JudgeWindows, sameFinding } from '../twin/run.js';
import { parseIntArg } from './args.js';
import type { CliContext } from './context.js';
import { keyValues } from './format.js';
import { documentStamp, stamped } from './stamp.js';

/** The orders a twin runs (the race explorer's others are its own). */
const TWIN_VARIANTS: readonly EmuVariant[] = ['kernel', 'kernel-sample-first'];

/** The options `emu twin` adds. */
export function twinOptions(y: Argv): Argv {
  return y
    .option('emit-test', {
      type: 'string',
      describe: 'twin: write DIR/<capture>.twin.json (the twin, minimised) and DIR/<capture>.test.ts asserting its verdict',
    })
    .option('stall-ms', {
      type: 'string',
      describe: `twin: the stall window the verdicts are judged with (default ${TWIN_STALL_MS})`,
    })
    .option('strand-ms', { type: 'string', describe: `twin: the strand window (default ${TWIN_STRAND_MS})` })
    .option('tolerance-ms', {
      type: 'string',
      describe: "twin: how far from a later instant's time the twin may show that instant's finding (default: health's window)",
    });
}

/** What `emu twin --json` prints. */
export interface TwinJson {
  source: TwinFixture['source'];
  unit: TwinFixture['unit'];
  notes: TwinFixture['notes'];
  run: TwinRun;
  capture: { verdict: readonly TwinFinding[] };
  twin: { verdict: readonly TwinFinding[]; replayed: number; divergence: Divergence | null; virtualMs: number };
  change: {
    variant: EmuVariant;
    params: readonly string[];
    causes: readonly string[];
    findings: { code: string; place: string; asCapturedMs: number | null; changedMs: number | null }[];
    newFindings: readonly TwinFinding[];
  } | null;
  emitted: { fixture: string; test: string; dropped: readonly string[] } | null;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function levelOf(v: readonly TwinFinding[]): string {
  if (v.some((f) => f.severity === 'critical')) return 'CRITICAL';
  if (v.some((f) => f.severity === 'warning')) return 'WARNING';
  if (v.some((f) => f.severity === 'unknown')) return 'UNKNOWN';
  return 'OK';
}

function verdictLine(v: readonly TwinFinding[]): string {
  return v.length === 0 ? 'OK (no finding)' : `${levelOf(v)} ${v.map(findingPlace).join(', ')}`;
}

/** The run options of this invocation, pinned as a test would pin them. */
function runOf(ctx: CliContext, w: JudgeWindows, variant: EmuVariant): TwinRun {
  const g = ctx.global;
  return {
    seed: g.seed,
    workload: g.workload ?? TWIN_WORKLOAD,
    faults: [...g.fault],
    variant,
    params: [...(g.param ?? [])],
    stallMs: w.stallMs,
    strandMs: w.strandMs,
  };
}

function render(j: TwinJson, f: TwinFixture): string {
  const s = j.source;
  const where = [
    s.host ? `host ${s.host}` : null,
    s.capturedAt ? `captured ${s.capturedAt}` : null,
    s.toolVersion ? `by hfi1-sdma ${s.toolVersion}` : null,
    s.emulated ? 'emulated: not an adapter' : null,
    s.redacted ? 'redacted' : null,
  ].filter((x) => x !== null);
  const pairs: [string, string][] = [
    [
      'twin of',
      `${s.file}: ${j.unit.name} at instant ${s.instant} of ${s.instants} (${secs(s.timeMs)})${where.length ? ` (${where.join(', ')})` : ''}`,
    ],
  ];
  const list = (key: string, lines: readonly string[]) => {
    for (const [i, l] of lines.entries()) pairs.push([i === 0 ? key : '', l]);
  };
  list('taken', f.notes.taken);
  list('assumed', f.notes.assumed);
  list('not taken', f.notes.notTaken);
  const r = j.run;
  pairs.push([
    'run',
    `seed ${r.seed}, workload ${r.workload}${r.faults.length ? `, faults ${r.faults.join(' ')}` : ''}${r.params.length ? `, --param ${r.params.join(' ')}` : ''}, ${j.twin.virtualMs} ms of virtual time`,
  ]);
  const d = j.twin.divergence;
  const later = f.observations.length;
  pairs.push([
    'replay',
    later === 0
      ? 'from the last instant: nothing to replay'
      : d === null
        ? `instants ${s.instant + 1}-${s.instant + later}: as captured`
        : `diverged at instant ${d.instant} (${secs(d.afterMs)} after instant ${s.instant}): ${d.what}`,
  ]);
  if (d?.hint) pairs.push(['', `to replay what the capture did, try ${d.hint}`]);
  pairs.push(['verdict', `capture ${verdictLine(j.capture.verdict)}`]);
  const same = d === null;
  pairs.push(['', `twin    ${verdictLine(j.twin.verdict)}${same ? ': the same' : ''}`]);
  if (j.change) {
    const c = j.change;
    const what = [c.variant !== 'kernel' ? c.variant : null, c.params.length ? `--param ${c.params.join(' ')}` : null]
      .filter((x) => x !== null)
      .join(', ');
    pairs.push([
      'change',
      `${what}: each finding's cause replayed at 1 ms (${c.causes.join(', ') || 'none'}), ${secs(changeWindow(c))} watched`,
    ]);
    for (const x of c.findings) {
      const as =
        x.asCapturedMs === null
          ? 'not recreated as captured (the change cannot be judged on it)'
          : `as captured at ${secs(x.asCapturedMs)}`;
      const changed = x.changedMs === null ? 'does not come back' : `comes back at ${secs(x.changedMs)}`;
      pairs.push(['', `${x.place}: ${as}; with the change it ${changed}`]);
    }
    if (c.newFindings.length) pairs.push(['', `new with the change: ${c.newFindings.map(findingPlace).join(', ')}`]);
  }
  if (j.emitted) {
    pairs.push(['emitted', `${j.emitted.fixture} and ${j.emitted.test}`]);
    if (j.emitted.dropped.length) pairs.push(['', `minimised: left out ${j.emitted.dropped.join(', ')}`]);
  }
  return keyValues(pairs);
}

function changeWindow(c: NonNullable<TwinJson['change']>): number {
  return Math.max(0, ...c.findings.map((x) => Math.max(x.asCapturedMs ?? 0, x.changedMs ?? 0)), 2000);
}

/** Whether the change keeps every finding from coming back, each recreated as captured first. */
function changeHolds(c: ChangeResult): boolean {
  return c.outcomes.length > 0 && c.outcomes.every((o) => o.asCapturedMs !== null && o.changedMs === null);
}

/**
 * `emu twin`. Exit 0 when the twin reaches the capture's verdict without diverging (with a change: when no finding of
 * the capture comes back under it, each recreated as captured); 1 otherwise; the usual codes for bad input.
 */
export async function emuTwin(args: Record<string, unknown>, ctx: CliContext): Promise<number> {
  const f = ctx.global.twin;
  if (!f) throw usageError('emu twin needs --from CAPTURE (a .tar.gz from hfi1-sdma snapshot, or a twin .json)');
  const w: JudgeWindows = {
    stallMs: args.stallMs === undefined ? TWIN_STALL_MS : parseIntArg('--stall-ms', args.stallMs, 1, 3_600_000),
    strandMs: args.strandMs === undefined ? TWIN_STRAND_MS : parseIntArg('--strand-ms', args.strandMs, 1, 3_600_000),
  };
  const variantName = args.variant === undefined ? 'kernel' : String(args.variant);
  if (!(TWIN_VARIANTS as readonly string[]).includes(variantName)) {
    throw usageError(
      `--variant ${variantName}: a twin runs ${TWIN_VARIANTS.join(' or ')}${isVariant(variantName) ? ` (${VARIANTS.filter((v) => !(TWIN_VARIANTS as readonly string[]).includes(v)).join(' and ')} are emu race's)` : ''}`,
    );
  }
  const variant = variantName as EmuVariant;
  const { observationMs } = await import('../monitor/observation.js');
  const toleranceMs =
    args.toleranceMs === undefined ? observationMs(w.stallMs) : parseIntArg('--tolerance-ms', args.toleranceMs, 0, 3_600_000);
  const run = runOf(ctx, w, variant);
  const changing = variant !== 'kernel' || run.params.length > 0;
  const o: TwinRunOptions = {
    seed: run.seed,
    workload: run.workload,
    faults: run.faults,
    variant: changing ? 'kernel' : variant,
    params: changing ? [] : run.params,
    model: ctx.global.stepped === true ? 'stepped' : 'fast',
  };
  const { replayTwin, tryChange } = await import('../twin/run.js');
  const replay = await replayTwin(f, o, w, toleranceMs);
  const change = changing ? await tryChange(f, o, { variant, params: run.params }, w) : null;
  let emitted: TwinJson['emitted'] = null;
  if (args.emitTest !== undefined) {
    const dir = String(args.emitTest);
    if (dir === '') throw usageError('--emit-test needs a directory');
    if (replay.divergence) {
      throw usageError(
        `--emit-test: the twin diverges from the capture (${replay.divergence.what}): a test of it would pin the wrong verdict; start from another instant (--from-instant) or give the faults that replay it`,
      );
    }
    const [{ minimise }, { emitTest }] = await Promise.all([import('../twin/minimise.js'), import('../twin/emit.js')]);
    const m = await minimise(f, { ...o, variant, params: run.params }, w);
    const paths = await emitTest(m.fixture, run, dir);
    emitted = { ...paths, dropped: m.dropped };
  }
  const j: TwinJson = {
    source: f.source,
    unit: f.unit,
    notes: f.notes,
    run,
    capture: { verdict: f.verdict },
    twin: {
      verdict: replay.verdict,
      replayed: f.observations.length,
      divergence: replay.divergence,
      virtualMs: Math.round(replay.unit.nowMs),
    },
    change: change
      ? {
          variant,
          params: run.params,
          causes: change.causes,
          findings: change.outcomes.map((x) => ({
            code: x.finding.code,
            place: findingPlace(x.finding),
            asCapturedMs: x.asCapturedMs,
            changedMs: x.changedMs,
          })),
          newFindings: change.newFindings,
        }
      : null,
    emitted,
  };
  // The document is about the capture's host, as a snapshot's are.
  const stamp = { ...documentStamp(null, ctx), ...(f.source.host ? { host: f.source.host } : {}) };
  ctx.io.stdout(ctx.global.json ? `${JSON.stringify(stamped(stamp, j))}\n` : render(j, f));
  if (change) return changeHolds(change) ? 0 : 1;
  return replay.divergence === null && replay.verdict.every((g) => f.verdict.some((v) => sameFinding(v, g))) ? 0 : 1;
}
