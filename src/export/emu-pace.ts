// Pacing the emulator behind the exporter: before each round, virtual time catches up with the
// wall time since the last one, but never by more than a cap per round nor for longer than a wall
// budget, and in small slices that yield to the event loop (so scrapes, signals and timers are
// served while it runs). When the emulator cannot keep up, virtual time falls behind wall time;
// that is said once.

/** How the exporter paces the emulator. */
export interface EmuPaceOptions {
  /** Let `ms` of virtual time pass (the emulated backend's control). */
  advanceMs: (ms: number) => void;
  /** At most this much virtual time per round. */
  maxVirtualMsPerRound: number;
  /** At most this much wall time simulating per round. */
  wallBudgetMs: number;
  /** Virtual ms simulated between two yields to the event loop. */
  sliceMs: number;
  /** The wall clock (ms). */
  wallNowMs: () => number;
  /** Let the event loop run (default: one turn through setImmediate). */
  yieldToLoop?: () => Promise<void>;
  /** True once the exporter is stopping: simulation ends at the next slice. */
  stopped: () => boolean;
  /** Called once, when virtual time first falls behind wall time by more than one round's cap. */
  onBehind: (lagMs: number, o: EmuPaceOptions) => void;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The exporter's before-round hook for the emulator; resolves to the virtual ms it simulated. */
export function emuPacer(o: EmuPaceOptions): (elapsedMs: number) => Promise<number> {
  const yieldToLoop = o.yieldToLoop ?? nextTurn;
  let lagMs = 0;
  let warned = false;
  return async (elapsedMs: number) => {
    const targetMs = Math.min(Math.max(0, elapsedMs), o.maxVirtualMsPerRound);
    const t0 = o.wallNowMs();
    let doneMs = 0;
    while (doneMs < targetMs && !o.stopped() && o.wallNowMs() - t0 < o.wallBudgetMs) {
      const stepMs = Math.min(o.sliceMs, targetMs - doneMs);
      o.advanceMs(stepMs);
      doneMs += stepMs;
      await yieldToLoop();
    }
    lagMs += Math.max(0, elapsedMs) - doneMs;
    if (!warned && lagMs > o.maxVirtualMsPerRound) {
      warned = true;
      o.onBehind(lagMs, o);
    }
    return doneMs;
  };
}
