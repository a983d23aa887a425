// A twin as the emulator's options: the capture's flavour, the seed, and the run's own choices (seed, workload,
// faults, variant, parameters). Two forms: `state`, the seed as recorded (a stranded QP asleep, a stalled chip
// stopped), and `cause`, the same instant with each finding's cause replayed a moment after it (the stranded QP
// awake and the window of sdma_check_progress opened under it, the chip stopped at 1 ms): the form a change is
// tried against, since a fix acts on how a finding comes about, not on a state that holds it already.

import type { SeedCondition, SeedWaiter, UnitSeed } from '../emu/seed.js';
import type { EmuModel, EmuUnitOptions, EmuVariant } from '../emu/unit.js';
import type { TwinFixture, TwinTraffic } from './fixture.js';

/** The workload a twin runs unless told: the traffic the capture shows (TwinFixture.traffic). */
export const TWIN_WORKLOAD = 'captured';
/**
 * The twin is first observed this long after its seed instant (ms): the conditions have taken effect by then (a
 * halt's error interrupt, a link's way down to s20_Idle), as they had at the instant.
 */
export const TWIN_SETTLE_MS = 2;
/** When the cause form replays a finding's cause (ms after the seed instant). */
export const CAUSE_AT_MS = 1;
/** What an awakened waiter offers of its engine's rate in the cause form. */
const CAUSE_LOAD = 0.5;

/** How one run of a twin goes. */
export interface TwinRunOptions {
  seed: number;
  workload?: string | undefined;
  faults?: readonly string[] | undefined;
  variant?: EmuVariant | undefined;
  /** Module parameters over the capture's (`NAME=VALUE`; one of the same name replaces the capture's). */
  params?: readonly string[] | undefined;
  model?: EmuModel | undefined;
  form?: 'state' | 'cause';
}

/** The capture's parameters with `over` laid on them. */
export function mergedParams(capture: readonly string[], over: readonly string[] = []): string[] {
  const name = (p: string) => p.split('=', 1)[0]?.trim() ?? '';
  const given = new Set(over.map(name));
  return [...capture.filter((p) => !given.has(name(p))), ...over];
}

/** The seed with each finding's cause taken out of it, and the faults that replay those causes. */
export function causeForm(f: TwinFixture): { seed: UnitSeed; faults: string[]; replayed: string[] } {
  const faults: string[] = [];
  const replayed: string[] = [];
  const at = `@${CAUSE_AT_MS}`;
  for (const c of f.seed.conditions) {
    faults.push(`${c.fault}${at}${conditionTarget(c)}`);
    replayed.push(c.fault);
  }
  const codes = (code: string, engine: number) =>
    f.verdict.some((v) => v.code === code && (v.engine === null || v.engine === engine));
  const waiters: SeedWaiter[] = f.seed.waiters.map((w) => {
    const cause =
      w.kind === 'qp' && codes('SD201', w.engine)
        ? `lost-wakeup:qp${at}:${w.engine}`
        : w.kind === 'psm' && codes('SD203', w.engine)
          ? `lost-wakeup:psm${at}:${w.engine}`
          : w.kind === 'ipoib' && (w.stuck === true || codes('SD207', w.engine))
            ? `ipoib-timeout${at}:${w.engine}`
            : null;
    if (cause === null || faults.some((x) => x.endsWith(`:${w.engine}`) && x.startsWith(cause.split('@')[0] as string))) return w;
    faults.push(cause);
    replayed.push(cause.split('@')[0] as string);
    const { stuck: _stuck, timeouts: _timeouts, ...awake } = w;
    return { ...awake, awake: { load: CAUSE_LOAD } };
  });
  return { seed: { ...f.seed, waiters, conditions: [] }, faults, replayed };
}

/** `:ENGINE` or `:PORT` of a condition's fault, or nothing. */
function conditionTarget(c: SeedCondition): string {
  return c.engine !== undefined ? `:${c.engine}` : c.port !== undefined ? `:${c.port}` : '';
}

/** The seed with the capture's traffic added: a sender per entry, awake, unless an asleep one of the seed is it. */
function withTraffic(seed: UnitSeed, f: TwinFixture): UnitSeed {
  const same = (w: SeedWaiter, t: TwinTraffic) => w.kind === t.kind && JSON.stringify(w.identity) === JSON.stringify(t.identity);
  const senders: SeedWaiter[] = f.traffic
    .filter((t) => !seed.waiters.some((w) => w.engine === t.engine && same(w, t) && w.awake !== undefined))
    .map((t) => ({
      kind: t.kind,
      engine: t.engine,
      need: t.numDesc,
      ownPending: 0,
      asleepMs: 0,
      identity: t.identity,
      awake: { load: t.load },
    }));
  return { ...seed, waiters: [...seed.waiters, ...senders] };
}

/** The emulator's options for one run of the twin `f`. */
export function twinUnitOptions(f: TwinFixture, o: TwinRunOptions): EmuUnitOptions {
  const u = f.unit;
  const cause = o.form === 'cause' ? causeForm(f) : null;
  const workload = o.workload ?? TWIN_WORKLOAD;
  const base = cause?.seed ?? f.seed;
  return {
    seed: o.seed,
    unit: u.unit,
    ...(u.pci !== '' ? { pci: u.pci } : {}),
    chip: u.chip,
    driver: u.driver,
    ports: u.ports,
    activePorts: u.activePorts,
    firstEngine: u.firstEngine,
    engines: u.engines,
    descqCnt: u.descqCnt,
    idleCntNs: u.idleCntNs,
    workload: workload === TWIN_WORKLOAD ? 'idle' : workload,
    faults: [...(cause?.faults ?? []), ...(o.faults ?? [])],
    params: mergedParams(u.params, o.params),
    variant: o.variant ?? 'kernel',
    model: o.model ?? 'fast',
    from: workload === TWIN_WORKLOAD ? withTraffic(base, f) : base,
  };
}
