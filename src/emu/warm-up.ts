// Running the emulator to the virtual time a command starts at (--at-ms, `emu run --duration-ms`)
// without holding the process: the model advances in steps of bounded wall time, and between steps
// the event loop runs, so SIGINT/SIGTERM are acted on within a step, and a requested stop ends the
// run early. Stepping does not change what the model does (the same event log).
import { performance } from 'node:perf_hooks';
import { stopRequested } from '../cleanup.js';
import { runBounded } from './serve.js';
import type { EmuUnit } from './unit.js';

/** Most wall ms of simulation between two turns of the event loop. */
export const WARM_UP_STEP_WALL_MS = 50;

/** How a warm-up looks at the clock and learns of a stop (the process's stop signal by default). */
export interface WarmUpOptions {
  stopped?: () => boolean;
  nowMs?: () => number;
}

/** Let the event loop run (signals, I/O) before the next step. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Run `u` to virtual time `ms` in steps of at most WARM_UP_STEP_WALL_MS of wall time, yielding
 * between steps. False when a stop was requested first (the unit is left where it got to).
 */
export async function warmUp(u: EmuUnit, ms: number, o: WarmUpOptions = {}): Promise<boolean> {
  const now = o.nowMs ?? (() => performance.now());
  const stopped = o.stopped ?? stopRequested;
  for (;;) {
    if (stopped()) return false;
    if (u.nowMs >= ms) return true;
    runBounded(u, ms, now, WARM_UP_STEP_WALL_MS);
    if (u.nowMs < ms) await yieldToEventLoop();
  }
}
