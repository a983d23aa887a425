// Letting time pass between rounds: wall time on a live host; on the emulator its virtual clock is advanced by
// the same amount, at once (virtual time: the emulator runs as fast as it computes) or after as much wall time when
// it follows the wall clock (`--wall`, an open-ended watch); on a recording (a snapshot of several instants), the
// next recorded instant, in the recording's own time.
import type { Backend } from '../backend.js';

/** A backend whose time can be advanced (the emulator), and whether its time follows the wall clock. */
interface Advanceable {
  advanceMs(ms: number): void | Promise<void>;
  pace?: 'virtual' | 'wall';
}

/** Whether the backend's time can be advanced (the emulator). */
export function isAdvanceable(b: unknown): b is Advanceable {
  return typeof b === 'object' && b !== null && typeof (b as Partial<Advanceable>).advanceMs === 'function';
}

/** Sleep `ms` of wall time, ending early (resolving) when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real sleep: ends early on abort, never keeps the process alive past it. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Whether the backend is an emulator whose time runs on its own (no wall-clock wait between samples). */
export function isVirtual(b: unknown): boolean {
  return isAdvanceable(b) && b.pace !== 'wall';
}

/** Let other work in (a stop signal's handler) between two stretches of emulation. */
const yieldNow = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Let the next round's time come: on a recording, advance to its next instant (false at its end); on an emulator
 * in virtual time, advance it `ms` at once; otherwise sleep `ms` and advance an emulator's virtual time by as much
 * (false when `signal` aborted meanwhile).
 */
export async function nextInstant(backend: Backend, ms: number, sleep: Sleep, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  if (backend.recording) return backend.recording.advance();
  if (isVirtual(backend)) {
    await yieldNow();
    if (signal?.aborted) return false;
    await (backend as unknown as Advanceable).advanceMs(ms);
    return true;
  }
  await sleep(ms, signal);
  if (signal?.aborted) return false;
  if (isAdvanceable(backend)) await backend.advanceMs(ms);
  return true;
}
