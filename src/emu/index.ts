// The emulated backend: one unit (hfi1_0, or hfi2_0 for --driver hfi2) run for --at-ms of virtual time before it is sampled.
import type { Backend, ChipKind, DriverBuild, UnitInfo } from '../backend.js';
import { StoppedError } from '../cleanup.js';
import { Hfi1SdmaError, usageError } from '../errors.js';
import type { TwinFixture } from '../twin/fixture.js';
import { TWIN_SETTLE_MS, twinUnitOptions } from '../twin/options.js';
import { parseFault } from './faults.js';
import { resolveFlavour } from './flavour.js';
import { enableTraceEvents } from './trace-events.js';
import { EmuUnit, type EmuVariant } from './unit.js';
import { warmUp } from './warm-up.js';

export { FAULTS, type FaultSpec, parseFault } from './faults.js';
export type { LogKindName, LogRecord } from './log.js';
export { type EmuTotals, EmuUnit, type EmuUnitOptions } from './unit.js';
export { DEFAULT_WORKLOAD, WORKLOADS } from './workload.js';

/** Emulator options as the CLI passes them (the README's emulator options). */
export interface EmuCliOptions {
  seed: number;
  /** How many engines (`--engines N`, or the length of `--engines A-B`). */
  engines: number | undefined;
  /** The first engine's absolute index (`--engines A-B` gives A; `--engines N` gives 0). */
  firstEngine?: number | undefined;
  /** `--chip wfr|jkr` (default wfr). */
  chip?: ChipKind | undefined;
  /** `--driver upstream|cornelis|hfi2` (default upstream; hfi2 names the unit hfi2_0). */
  driver?: DriverBuild | undefined;
  /** `--ports 1|2` (default 1). */
  ports?: number | undefined;
  /** `--active-ports LIST` (default every port). */
  activePorts?: readonly number[] | undefined;
  descqCnt: number | undefined;
  workload: string | undefined;
  atMs: number | undefined;
  fault: string[];
  /** `--param NAME=VALUE` (repeatable): module parameters the emulator renders and follows (params.ts). */
  param?: string[] | undefined;
  /** `--wall`: between samples, let as much wall time pass as virtual time (default: virtual time runs on its own). */
  wall?: boolean | undefined;
  /** `--stepped`: run the stepped model, every event stepped (the fast model's oracle), not the fast one. */
  stepped?: boolean | undefined;
  /** `--trace-events`: the sleep and wake-up trace events recorded and rendered in tracefs (trace-events.ts). */
  traceEvents?: boolean | undefined;
  /** `--from CAPTURE`: the twin to start from instead of driver load (its flavour is the capture's). */
  twin?: TwinFixture | undefined;
  /** The order of sdma_check_progress (`emu twin --variant`, the library's `variant`); default kernel. */
  variant?: EmuVariant | undefined;
}

/** Virtual time run before sampling when --at-ms is not given and no fault is scheduled. */
export const DEFAULT_AT_MS = 20;

/**
 * The virtual time to run before sampling: --at-ms, else 20 ms (the rings reach their steady
 * state within microseconds at these rates), else, with faults, 100 ms past the last one so
 * that its effect shows.
 */
export function defaultAtMs(opts: Pick<EmuCliOptions, 'atMs' | 'fault' | 'engines' | 'firstEngine' | 'ports' | 'twin'>): number {
  if (opts.atMs !== undefined) return opts.atMs;
  const window = opts.twin ? twinWindow(opts.twin) : faultWindow(opts);
  // A twin starts at its capture's instant: sampled as soon as its conditions have taken effect.
  if (opts.twin && opts.fault.length === 0) return TWIN_SETTLE_MS;
  const last = Math.max(0, ...opts.fault.map((f) => parseFault(f, window).atMs));
  return opts.fault.length > 0 ? Math.max(DEFAULT_AT_MS, last + 100) : DEFAULT_AT_MS;
}

/** The engines a fault may name under these options: the window firstEngine..firstEngine+engines−1. */
function faultWindow(opts: Pick<EmuCliOptions, 'engines' | 'firstEngine' | 'ports'>): {
  firstEngine: number;
  count: number;
  ports: number;
} {
  const firstEngine = opts.firstEngine ?? 0;
  return { firstEngine, count: opts.engines ?? 16 - firstEngine, ports: opts.ports ?? 1 };
}

/** The engines and ports a twin's faults may name. */
function twinWindow(t: TwinFixture): { firstEngine: number; count: number; ports: number } {
  return { firstEngine: t.unit.firstEngine, count: t.unit.engines, ports: t.unit.ports };
}

/** The options a twin takes from its capture: given with --from, they are refused rather than silently ignored. */
const FIXED_BY_CAPTURE = [
  ['engines', '--engines'],
  ['chip', '--chip'],
  ['driver', '--driver'],
  ['ports', '--ports'],
  ['activePorts', '--active-ports'],
  ['descqCnt', '--descq-cnt'],
] as const;

/** Build the twin the CLI options describe (--from): its capture's unit and state, the run's own seed, workload and faults. */
function twinUnitFromOptions(twin: TwinFixture, opts: EmuCliOptions): EmuUnit {
  for (const [key, flag] of FIXED_BY_CAPTURE) {
    if (opts[key] !== undefined) {
      throw usageError(
        `${flag}: the capture fixes it (${twin.unit.name} as captured); drop ${flag} to run its twin, or --param to change a module parameter`,
      );
    }
  }
  for (const f of opts.fault) parseFault(f, twinWindow(twin));
  const unit = new EmuUnit(
    twinUnitOptions(twin, {
      seed: opts.seed,
      workload: opts.workload,
      faults: opts.fault,
      params: opts.param ?? [],
      model: opts.stepped === true || opts.traceEvents === true ? 'stepped' : 'fast',
      variant: opts.variant,
    }),
  );
  if (opts.traceEvents) enableTraceEvents(unit);
  return unit;
}

/** Build (but do not run) the unit the CLI options describe; option errors are usage errors. */
export function emuUnitFromOptions(opts: EmuCliOptions): EmuUnit {
  if (opts.twin) return twinUnitFromOptions(opts.twin, opts);
  const flavour = resolveFlavour(opts);
  const faults = opts.fault.map((f) => parseFault(f, flavour));
  const d = opts.descqCnt;
  if (d !== undefined && (!Number.isInteger(d) || d < 0 || d > 0xffff_ffff)) {
    throw usageError(
      `--descq-cnt is the sdma_descq_cnt module parameter, an unsigned integer (64-32768, a power of two, is used as given; anything else means 2048), got ${d}`,
    );
  }
  const unit = new EmuUnit({
    seed: opts.seed,
    engines: flavour.count,
    firstEngine: flavour.firstEngine,
    chip: flavour.chip.name,
    driver: flavour.driver,
    ports: flavour.ports,
    activePorts: flavour.activePorts,
    descqCnt: opts.descqCnt,
    workload: opts.workload,
    faults,
    params: opts.param ?? [],
    // The trace switch sees every sleep and wake-up only when each is stepped (trace-events.ts).
    model: opts.stepped === true || opts.traceEvents === true ? 'stepped' : 'fast',
    ...(opts.variant ? { variant: opts.variant } : {}),
  });
  if (opts.traceEvents) enableTraceEvents(unit);
  return unit;
}

/** The emulated backend: the contract plus a control to let virtual time pass. */
export interface EmuBackend extends Backend {
  /** Advance the unit's virtual time (watch, progress, health and export pace with it). */
  advanceMs(ms: number): void;
  /** The emulated unit itself. */
  readonly model: EmuUnit;
  /** The virtual time it runs to before its first sample (ms). */
  readonly atMs: number;
  /**
   * How time passes between samples: `virtual` (the default), the emulator is advanced at once, as fast as it
   * computes; `wall`, a command waits as much wall time as it advances (`--wall`, an open-ended watch, emu serve).
   */
  pace: 'virtual' | 'wall';
}

/** Create the emulated backend: unit 0, run to `atMs` (default DEFAULT_AT_MS) on first use. */
export function createEmuBackend(opts: EmuCliOptions): EmuBackend {
  return emuBackendOf(emuUnitFromOptions(opts), defaultAtMs(opts), opts.wall === true ? 'wall' : 'virtual');
}

/** The backend of a built unit, run to `atMs` on first use (a twin's unit, say). */
export function emuBackendOf(unit: EmuUnit, atMs: number, pace: EmuBackend['pace'] = 'virtual'): EmuBackend {
  // Run to --at-ms on first use, in steps that let a stop signal through (warm-up.ts).
  let warm: Promise<EmuUnit> | null = null;
  const ready = (): Promise<EmuUnit> => {
    // Stopped before --at-ms: the model is wherever it got to, not the host asked for; nothing is shown of it.
    warm ??= warmUp(unit, atMs).then((done) => {
      if (!done) throw new StoppedError();
      return unit;
    });
    return warm;
  };
  return {
    kind: 'emu',
    emulated: true,
    origin: { host: null, capturedAtMs: null, toolVersion: null, emulated: true },
    model: unit,
    atMs,
    pace,
    async units(): Promise<UnitInfo[]> {
      return [(await ready()).info];
    },
    async unit(n: number | string) {
      if (typeof n === 'string' ? n !== unit.info.name : n !== unit.info.unit) {
        const asked = typeof n === 'string' ? n : `${unit.flavour.module}_${n}`;
        throw new Hfi1SdmaError('E_NO_DEVICE', `the emulator has one unit, ${unit.info.name}; there is no ${asked}`);
      }
      return ready();
    },
    advanceMs(ms: number) {
      if (warm === null) {
        unit.runUntilMs(atMs);
        warm = Promise.resolve(unit);
      }
      unit.advance(ms);
    },
    async close() {},
  };
}
