// `emu serve`: keep a sysroot live, virtual time following wall time (× speed). The only part of
// the emulator that looks at the wall clock; the clock and the sleep are passed in.
import { writeSysroot } from './sysroot.js';
import type { EmuUnit } from './unit.js';

/** How serve paces itself. */
export interface ServeOptions {
  /** Virtual ms per wall ms. */
  speed: number;
  /** Wall ms between refreshes of the sysroot. */
  intervalMs: number;
  /** Stops the loop; the tree is left consistent (the last write completed). */
  signal: AbortSignal;
  nowMs?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Called after each refresh with the virtual time written. */
  onWrite?: (virtualMs: number) => void;
  /** Called when the emulator falls behind wall time × speed (by more than ten intervals' worth of virtual time). */
  onBehind?: (lagMs: number) => void;
  /** Called when, having fallen behind, it has caught up again (to within one interval's worth); `behindMs`: the most it lagged. */
  onCaughtUp?: (behindMs: number) => void;
}

function realSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Most wall ms one refresh may simulate before the event loop gets control back (signals, I/O). */
export const MAX_STEP_WALL_MS = 200;

/** Virtual ms simulated before the first look at the wall clock. */
const SLICE_VIRTUAL_MS = 1;

/** Each unit's slice of virtual time, learnt from the wall time its last slices took. */
const slices = new WeakMap<EmuUnit, number>();

/**
 * Run the unit towards `targetMs` in slices of virtual time, stopping early once `budgetMs` of wall time is spent:
 * the rest is left for the next refresh (virtual time then lags, which the caller reports). The slice doubles
 * after one that took less than half the budget and halves after one that took more than all of it, and is kept
 * for the unit's next run (the fast model skips more in a longer slice). Slicing does not change what the model
 * does (the same state and event log).
 */
export function runBounded(u: EmuUnit, targetMs: number, now: () => number, budgetMs: number): void {
  const start = now();
  let slice = slices.get(u) ?? SLICE_VIRTUAL_MS;
  while (u.nowMs < targetMs) {
    const before = now();
    u.runUntilMs(Math.min(targetMs, u.nowMs + slice));
    const after = now();
    if (after - before < budgetMs / 2) slice = Math.min(slice * 2, 3_600_000);
    else if (after - before > budgetMs) slice = Math.max(slice / 2, SLICE_VIRTUAL_MS);
    if (after - start >= budgetMs) break;
  }
  slices.set(u, slice);
}

/** Run the unit against wall time and rewrite the sysroot every interval until aborted. */
export async function serveSysroot(u: EmuUnit, dir: string, opts: ServeOptions): Promise<number> {
  const now = opts.nowMs ?? (() => performance.now());
  const sleep = opts.sleep ?? realSleep;
  const wall0 = now();
  const virt0 = u.nowMs;
  let writes = 0;
  /** The most virtual time lagged since falling behind; null while keeping up. */
  let behindMs: number | null = null;
  await writeSysroot(u, dir);
  writes++;
  opts.onWrite?.(u.nowMs);
  // Refreshes at a fixed rate: the wait to the next is what is left of the interval after the work of this one, so
  // the work does not add to the period (a refresh that overran starts the next at once, without a burst after it,
  // yet still through the event loop: a stop signal is heard between any two refreshes).
  let due = wall0;
  while (!opts.signal.aborted) {
    due += opts.intervalMs;
    const wait = due - now();
    if (wait <= 0) due = now();
    await sleep(Math.max(0, wait), opts.signal);
    if (opts.signal.aborted) break;
    // Never run more than two intervals' worth at once: when the emulator is slower than wall
    // time × speed, virtual time falls behind but the tree keeps refreshing every interval, so
    // readers see steady movement rather than rare jumps (which would look like stalls).
    const target = virt0 + (now() - wall0) * opts.speed;
    const cap = 2 * opts.intervalMs * opts.speed;
    const lagMs = target - u.nowMs;
    if (behindMs === null && lagMs > 5 * cap) {
      behindMs = lagMs;
      opts.onBehind?.(lagMs);
    } else if (behindMs !== null) {
      behindMs = Math.max(behindMs, lagMs);
      if (lagMs <= cap / 2) {
        opts.onCaughtUp?.(behindMs);
        behindMs = null;
      }
    }
    runBounded(u, Math.min(target, u.nowMs + cap), now, Math.min(opts.intervalMs, MAX_STEP_WALL_MS));
    await writeSysroot(u, dir);
    writes++;
    opts.onWrite?.(u.nowMs);
  }
  return writes;
}
