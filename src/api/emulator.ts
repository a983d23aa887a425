// hfi1-sdma/emulator: the emulated backend, driven from code. It is a Backend like any other (the monitor and
// every command read it the same way), plus what only an emulator can do: let virtual time pass, inject a fault
// now or at a time, and write or serve a sysroot that the live backend reads as it reads a host.
import type { Backend, ChipKind, DriverBuild } from '../backend.js';
import { usageError } from '../errors.js';

/** What the emulated host is: the options of the command line's emulator, by name. */
export interface EmulatorOptions {
  /** Seed of every random choice (default 1): the same seed and options give the same run. */
  seed?: number;
  /** Engines: how many (default 16 from `firstEngine`). */
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
  /** The sdma_descq_cnt module parameter (a power of two from 64 to 32768; anything else means 2048). */
  descqCnt?: number;
  /** A workload by name, with parameters: `mixed` (default), `line-rate`, `qp`, `psm`, `ipoib:…`, `idle`, … */
  workload?: string;
  /** Virtual ms to run before the first sample (default 20, or 100 ms past the last fault). */
  atMs?: number;
  /** Faults `NAME[:PARAM]@MS[:ENGINE|PORT]`, e.g. `stop-fetch@1000:3`, `lost-wakeup:qp@50:1`. */
  faults?: readonly string[];
  /** Stops the warm-up to `atMs` (a long one runs in steps that let the event loop through). */
  signal?: AbortSignal;
}

/** Counts of what the emulator did since it started. */
export interface EmulatorTotals {
  descriptors: number;
  txSubmitted: number;
  txCompleted: number;
  txAborted: number;
  waitersAsleep: number;
  lostWakeups: number;
  /** The invariants of the model that did not hold (none in a sound run). */
  invariantViolations: readonly string[];
}

/** The emulated backend. */
export interface Emulator extends Backend {
  readonly kind: 'emu';
  /** Its virtual time now (ms). */
  readonly nowMs: number;
  /**
   * Let `ms` of virtual time pass, in steps of bounded wall time that yield to the event loop; `signal` stops it
   * between steps (AbortError), where it got to.
   */
  advance(ms: number, opts?: { signal?: AbortSignal }): Promise<void>;
  /** Let `ms` of virtual time pass at once (what the monitor's rounds do between samples). */
  advanceMs(ms: number): void;
  /**
   * Inject a fault: `NAME[:PARAM]@MS[:ENGINE|PORT]` as the option takes it, or `NAME[:PARAM]` to fire now (on
   * `target`, an engine or, for link faults, a port; every engine or port when absent). Usage errors name the faults.
   */
  injectFault(fault: string, target?: number): void;
  /** Write its host once under `dir` (a new or empty directory, or one it wrote before), as `emu write` does. */
  writeSysroot(dir: string): Promise<void>;
  /** Keep its host live under `dir` until `signal` aborts, virtual time following wall time × `speed`. */
  serve(dir: string, opts: { signal: AbortSignal; intervalMs?: number; speed?: number }): Promise<void>;
  /** What it did so far. */
  totals(): EmulatorTotals;
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('the emulator was stopped', 'AbortError');
}

/** Create the emulated backend (one unit: hfi1_0, or hfi2_0 with the hfi2 driver), run to `atMs` on first use. */
export async function createEmuBackend(o: EmulatorOptions = {}): Promise<Emulator> {
  const [{ createEmuBackend: create }, { warmUp }, { invariantViolations }] = await Promise.all([
    import('../emu/index.js'),
    import('../emu/warm-up.js'),
    import('../emu/invariants.js'),
  ]);
  const inner = create({
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
  });
  const u = inner.model;
  // The warm-up, here where a signal can stop it (the backend's own runs on first use otherwise).
  if (o.signal) {
    o.signal.throwIfAborted();
    if (!(await warmUp(u, inner.atMs, { stopped: () => o.signal?.aborted === true }))) throw abortError(o.signal);
  }
  const emulator: Emulator = {
    kind: 'emu',
    units: () => inner.units(),
    unit: (n) => inner.unit(n),
    close: () => inner.close(),
    get nowMs() {
      return u.nowMs;
    },
    advanceMs: (ms) => inner.advanceMs(ms),
    async advance(ms, opts = {}) {
      await inner.units(); // the warm-up first
      if (!(await warmUp(u, u.nowMs + ms, { stopped: () => opts.signal?.aborted === true }))) {
        throw abortError(opts.signal as AbortSignal);
      }
    },
    injectFault(fault, target) {
      if (fault.includes('@')) {
        if (target !== undefined) throw usageError(`injectFault(${JSON.stringify(fault)}): the fault names its time and target`);
        u.injectFault(fault);
        return;
      }
      u.injectFault(`${fault}@${u.nowMs}${target === undefined ? '' : `:${target}`}`);
    },
    async writeSysroot(dir) {
      const { writeSysroot, closeSysroot } = await import('../emu/sysroot.js');
      await inner.units();
      try {
        await writeSysroot(u, dir);
      } finally {
        closeSysroot(u, dir);
      }
    },
    async serve(dir, opts) {
      const [{ serveSysroot }, { closeSysroot }] = await Promise.all([import('../emu/serve.js'), import('../emu/sysroot.js')]);
      await inner.units();
      try {
        await serveSysroot(u, dir, { speed: opts.speed ?? 1, intervalMs: opts.intervalMs ?? 100, signal: opts.signal });
      } finally {
        closeSysroot(u, dir);
      }
    },
    totals() {
      const t = u.totals();
      const violations = invariantViolations(u);
      return {
        descriptors: t.descriptors,
        txSubmitted: t.txSubmitted,
        txCompleted: t.txCompleted,
        txAborted: t.txAborted,
        waitersAsleep: t.waitersAsleep,
        lostWakeups: t.lostWakeups,
        invariantViolations: violations,
      };
    },
  };
  return emulator;
}
