// hfi1-sdma/emulator: the emulated backend, driven from code. It is a Backend like any other (the monitor and
// every command read it the same way), plus what only an emulator can do: let virtual time pass, inject a fault
// now or at a time, and write or serve a sysroot that the live backend reads as it reads a host. Every argument
// is checked here, in the library's words: the model underneath trusts what it is given.
import type { Backend, ChipKind, DriverBuild } from '../backend.js';

export type * from '../backend.js';

import { type Hfi1SdmaError, usageError } from '../errors.js';
import { checkNumber, checkOneOf, checkOptions, checkSignal, checkText, checkTimeMs, shown } from './check.js';
import { inLibraryTerms } from './library-terms.js';
import { remember } from './opened.js';

/** The faults the emulator injects (`hfi1-sdma explain` and the README describe each). */
export type FaultName =
  | 'stop-fetch'
  | 'lost-interrupt'
  | 'head-writeback-stall'
  | 'engine-error'
  | 'link-down'
  | 'link-up'
  | 'freeze'
  | 'slow'
  | 'device-gone'
  | 'lost-wakeup'
  | 'netdev-unregister'
  | 'halt-stuck'
  | 'link-flap'
  | 'fabric-stall'
  | 'ipoib-timeout';

/**
 * A fault with its parameter, to fire now: `engine-error:<bit>` (0-23 or a name such as `GenMismatch`),
 * `slow:<factor>`, `lost-wakeup` or `lost-wakeup:qp|psm|ipoib`, or one of the other names alone.
 */
export type Fault =
  | Exclude<FaultName, 'engine-error' | 'slow' | 'lost-wakeup'>
  | `engine-error:${number | string}`
  | `slow:${number}`
  | 'lost-wakeup'
  | `lost-wakeup:${'qp' | 'psm' | 'ipoib'}`;

/** A fault at a virtual time: `NAME[:PARAM]@MS[:ENGINE]`, or `@MS[:PORT]` for the link and fabric faults. */
export type ScheduledFault = `${Fault}@${number}` | `${Fault}@${number}:${number}`;

/** The workloads the emulator runs. */
export type WorkloadName = 'mixed' | 'line-rate' | 'qp' | 'psm' | 'small' | 'ipoib' | 'idle';

/** A workload's parameters: `key=value`, several joined by commas (`size` is `LO-HI` bytes, `load` a fraction or `max`). */
export type WorkloadKey = 'load' | 'spread' | 'qps' | 'psms' | 'ipoib' | 'window' | 'size' | 'frag' | 'gbps';

/** A workload by name, with parameters: `mixed`, `mixed:gbps=10`, `qp:qps=4,load=0.5`. */
export type Workload = WorkloadName | `${WorkloadName}:${WorkloadKey}=${string}`;

/** What the emulated host is: the options of the command line's emulator, by name. */
export interface EmulatorOptions {
  /** Seed of every random choice (default 1): the same seed and options give the same run. */
  seed?: number;
  /** Engines: how many (1-16, default 16 from `firstEngine`). */
  engines?: number;
  /** The first engine's absolute index (an hfi2 function's window, e.g. 8 with `engines: 8`; default 0). */
  firstEngine?: number;
  /** `wfr` (Omni-Path 100, the default) or `jkr` (CN5000). */
  chip?: ChipKind;
  /** `upstream` (default), `cornelis` or `hfi2` (the unit is then hfi2_0). */
  driver?: DriverBuild;
  /** Ports (1 or 2), and those whose link comes up (default: every port). */
  ports?: 1 | 2;
  activePorts?: readonly number[];
  /** The sdma_descq_cnt module parameter (a power of two from 64 to 32768; any other unsigned value means 2048). */
  descqCnt?: number;
  /** The workload (default `mixed`). */
  workload?: Workload;
  /** Virtual ms to run before the first sample (default 20, or 100 ms past the last fault). */
  atMs?: number;
  /** Faults at virtual times, e.g. `stop-fetch@1000:3`, `lost-wakeup:qp@50:1`, `link-down@500` (every port). */
  faults?: readonly ScheduledFault[];
  /** Stops the warm-up to `atMs` (a long one runs in steps that let the event loop through). */
  signal?: AbortSignal;
}

/** Counts of what the emulator did since it started. */
export interface EmulatorTotals {
  readonly descriptors: number;
  readonly txSubmitted: number;
  readonly txCompleted: number;
  readonly txAborted: number;
  readonly waitersAsleep: number;
  readonly lostWakeups: number;
  /** The invariants of the model that did not hold (none in a sound run). */
  readonly invariantViolations: readonly string[];
}

/** How `serve` keeps the tree. */
export interface ServeOptions {
  /** Stops serving (required: a served tree is kept until then). */
  signal: AbortSignal;
  /** Wall ms between rewrites of the tree (10-60000, default 100). */
  intervalMs?: number;
  /** Virtual ms per wall ms (0.001-1000, default 1). */
  speed?: number;
}

/** The emulated backend. Once closed, every method rejects with E_USAGE. */
export interface Emulator extends Backend {
  readonly kind: 'emu';
  /** Always: its unit is the emulator's, not an adapter (as its UnitInfo says). */
  readonly emulated: true;
  /** Its virtual time now (ms): 0 until first used, when it runs to `atMs` (any method but `injectFault` does). */
  readonly nowMs: number;
  /**
   * Let `ms` (finite, ≥ 0) of virtual time pass, in steps of bounded wall time that yield to the event loop.
   * `signal` stops it between steps, where it got to: the promise rejects with the signal's reason (an
   * AbortError DOMException when it has none).
   */
  advance(ms: number, opts?: { signal?: AbortSignal }): Promise<void>;
  /** Let `ms` (finite, ≥ 0) of virtual time pass at once, without yielding (what the monitor's rounds do). */
  advanceMs(ms: number): void;
  /**
   * Inject a fault: `NAME[:PARAM]@MS[:ENGINE|PORT]` as the option takes it, or `NAME[:PARAM]` to fire now on
   * `target` (an engine or, for link faults, a port; every engine or port when absent). A bad one is E_USAGE
   * naming the faults.
   */
  injectFault(fault: Fault, target?: number): void;
  injectFault(fault: ScheduledFault): void;
  /** Write its host once under `dir` (a new or empty directory, or one it wrote before), as `emu write` does. */
  writeSysroot(dir: string): Promise<void>;
  /** Keep its host live under `dir` until `signal` aborts, virtual time following wall time × `speed`. */
  serve(dir: string, opts: ServeOptions): Promise<void>;
  /** What it did so far. */
  totals(): EmulatorTotals;
}

const OPTIONS = [
  'seed',
  'engines',
  'firstEngine',
  'chip',
  'driver',
  'ports',
  'activePorts',
  'descqCnt',
  'workload',
  'atMs',
  'faults',
  'signal',
] as const;

/** The options, each checked in the library's words (the emulator's own checks name the command's flags). */
function checkEmulatorOptions(given: EmulatorOptions | undefined): EmulatorOptions {
  const where = 'createEmuBackend';
  const o: EmulatorOptions = checkOptions(where, given, OPTIONS);
  const n = (name: keyof EmulatorOptions, rule: Parameters<typeof checkNumber>[3]) => {
    if (o[name] !== undefined) checkNumber(where, name, o[name], rule);
  };
  n('seed', { min: 0, max: 0xffff_ffff, integer: true, what: 'a seed' });
  n('engines', { min: 1, max: 16, integer: true, what: 'a count of engines' });
  n('firstEngine', { min: 0, max: 15, integer: true, what: 'an engine index' });
  n('descqCnt', { min: 0, max: 0xffff_ffff, integer: true, what: 'the sdma_descq_cnt module parameter' });
  n('atMs', { min: 0, max: 86_400_000, what: 'a virtual time in ms' });
  if (o.chip !== undefined) checkOneOf(where, 'chip', o.chip, ['wfr', 'jkr'] as const);
  if (o.driver !== undefined) checkOneOf(where, 'driver', o.driver, ['upstream', 'cornelis', 'hfi2'] as const);
  if (o.ports !== undefined) checkOneOf(where, 'ports', o.ports, [1, 2] as const);
  if (o.activePorts !== undefined) {
    if (!Array.isArray(o.activePorts))
      throw usageError(`${where}: activePorts must be an array of port numbers; got ${shown(o.activePorts)}`);
    for (const p of o.activePorts) checkNumber(where, 'activePorts', p, { min: 1, max: 2, integer: true, what: 'port numbers' });
  }
  if (o.workload !== undefined) checkText(where, 'workload', o.workload, 'a workload (e.g. "mixed:gbps=10")');
  if (o.faults !== undefined) {
    if (!Array.isArray(o.faults))
      throw usageError(`${where}: faults must be an array (e.g. ["stop-fetch@1000:3"]); got ${shown(o.faults)}`);
    for (const f of o.faults) checkText(where, 'faults', f, 'faults written NAME[:PARAM]@MS[:ENGINE]');
  }
  checkSignal(where, o.signal);
  return o;
}

/** The error for a method called after close(). */
function closedError(what: string): Hfi1SdmaError {
  return usageError(`${what}: the emulator was closed; create another with createEmuBackend()`);
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('the emulator was stopped', 'AbortError');
}

/** Create the emulated backend (one unit: hfi1_0, or hfi2_0 with the hfi2 driver), run to `atMs` on first use. */
export async function createEmuBackend(options?: EmulatorOptions): Promise<Emulator> {
  const o = checkEmulatorOptions(options);
  const [{ createEmuBackend: create }, { warmUp }, { invariantViolations }] = await Promise.all([
    import('../emu/index.js'),
    import('../emu/warm-up.js'),
    import('../emu/invariants.js'),
  ]);
  const inner = inLibraryTerms('createEmuBackend', () =>
    create({
      seed: o.seed ?? 1,
      engines: o.engines,
      firstEngine: o.firstEngine,
      chip: o.chip,
      driver: o.driver,
      ports: o.ports,
      activePorts: o.activePorts,
      descqCnt: o.descqCnt,
      workload: o.workload,
      atMs: o.atMs,
      fault: [...(o.faults ?? [])],
    }),
  );
  const u = inner.model;
  // The warm-up, here where a signal can stop it (the backend's own runs on first use otherwise).
  if (o.signal) {
    o.signal.throwIfAborted();
    if (!(await warmUp(u, inner.atMs, { stopped: () => o.signal?.aborted === true }))) throw abortError(o.signal);
  }
  let closed = false;
  const open = (what: string) => {
    if (closed) throw closedError(what);
  };
  const emulator: Emulator = {
    kind: 'emu',
    emulated: true,
    origin: { host: null, capturedAtMs: null, toolVersion: null, emulated: true },
    async units() {
      open('units()');
      return inner.units();
    },
    async unit(n) {
      open('unit()');
      return inner.unit(n);
    },
    async close() {
      closed = true;
      await inner.close();
    },
    get nowMs() {
      return u.nowMs;
    },
    advanceMs(ms) {
      open('advanceMs()');
      inner.advanceMs(checkTimeMs('advanceMs(ms)', 'ms', ms));
    },
    async advance(ms, opts) {
      open('advance()');
      checkTimeMs('advance(ms)', 'ms', ms);
      const signal = checkSignal('advance()', checkOptions('advance()', opts, ['signal']).signal);
      await inner.units(); // the warm-up first
      if (!(await warmUp(u, u.nowMs + ms, { stopped: () => signal?.aborted === true }))) {
        throw abortError(signal as AbortSignal);
      }
    },
    injectFault(fault: string, target?: number) {
      open('injectFault()');
      const where = `injectFault(${shown(fault)})`;
      checkText('injectFault()', 'fault', fault, 'a fault (e.g. "stop-fetch", or "stop-fetch@1000:3")');
      if (target !== undefined) checkNumber(where, 'target', target, { min: 0, integer: true, what: 'an engine or a port' });
      if (fault.includes('@')) {
        if (target !== undefined) throw usageError(`${where}: the fault names its time and target; give no target`);
        inLibraryTerms(where, () => u.injectFault(fault));
        return;
      }
      inLibraryTerms(where, () => u.injectFault(`${fault}@${u.nowMs}${target === undefined ? '' : `:${target}`}`));
    },
    async writeSysroot(dir) {
      open('writeSysroot()');
      checkText('writeSysroot(dir)', 'dir', dir, 'a directory');
      const { writeSysroot, closeSysroot } = await import('../emu/sysroot.js');
      await inner.units();
      try {
        await inLibraryTerms('writeSysroot(dir)', () => writeSysroot(u, dir));
      } finally {
        closeSysroot(u, dir);
      }
    },
    async serve(dir, opts) {
      open('serve()');
      const where = 'serve(dir, opts)';
      checkText(where, 'dir', dir, 'a directory');
      const s = checkOptions(where, opts, ['signal', 'intervalMs', 'speed']);
      const signal = checkSignal(where, s.signal);
      if (!signal) throw usageError(`${where}: signal is required (an AbortSignal that ends serving)`);
      const intervalMs =
        s.intervalMs === undefined
          ? 100
          : checkNumber(where, 'intervalMs', s.intervalMs, { min: 10, max: 60_000, what: 'wall ms between rewrites' });
      const speed =
        s.speed === undefined
          ? 1
          : checkNumber(where, 'speed', s.speed, { min: 0.001, max: 1000, what: 'virtual ms per wall ms' });
      const [{ serveSysroot }, { closeSysroot }] = await Promise.all([import('../emu/serve.js'), import('../emu/sysroot.js')]);
      await inner.units();
      try {
        await inLibraryTerms(where, () => serveSysroot(u, dir, { speed, intervalMs, signal }));
      } finally {
        closeSysroot(u, dir);
      }
    },
    totals() {
      open('totals()');
      const t = u.totals();
      return {
        descriptors: t.descriptors,
        txSubmitted: t.txSubmitted,
        txCompleted: t.txCompleted,
        txAborted: t.txAborted,
        waitersAsleep: t.waitersAsleep,
        lostWakeups: t.lostWakeups,
        invariantViolations: invariantViolations(u),
      };
    },
  };
  remember(emulator, { kind: 'emu', unit: u, ready: () => inner.units() });
  return emulator;
}
