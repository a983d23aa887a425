// Letting time pass between samples: wall time on a live host; on the emulator, its virtual clock is advanced by the
// same amount (at once in virtual time, after as much wall time with `--wall`); on a recording (a snapshot of several
// instants), the next recorded instant, in the recording's own time.
import type { Backend } from '../backend.js';
import { onStop, stopRequested } from '../cleanup.js';
import { isAdvanceable, isVirtual } from '../monitor/pace.js';
import type { Io } from './io.js';

/** Wait `ms`: sleep on the wall clock (not for an emulator in virtual time), and advance an emulator's time. */
export async function pace(backend: Backend, io: Io, ms: number): Promise<void> {
  if (!isVirtual(backend)) await io.sleep(ms);
  if (isAdvanceable(backend)) await backend.advanceMs(ms);
}

/** A recording of one instant: nothing moves, so no time-based verdict can be given. */
export function isFrozenCapture(backend: Backend): boolean {
  return backend.recording !== undefined && backend.recording.timesMs.length <= 1;
}

/** How a long-running command learns that SIGINT/SIGTERM asked it to stop. */
export interface StopWatch {
  /** True once a stop was requested. */
  stopped(): boolean;
  /** Resolves when a stop is requested (never otherwise). */
  readonly requested: Promise<void>;
  /** Aborted when a stop is requested: ends a pending sleep and its timer. */
  readonly signal: AbortSignal;
  /** Unregister (call when the command ends). */
  dispose(): void;
}

/** Register with the process-wide stop handlers for the length of one command. */
export function watchForStop(): StopWatch {
  const abort = new AbortController();
  const requested = new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve()));
  if (stopRequested()) abort.abort();
  const dispose = onStop(() => abort.abort());
  return { stopped: () => abort.signal.aborted, requested, signal: abort.signal, dispose };
}

/**
 * Let the next sample's time come: on a recording, advance to its next instant (false at its
 * end); otherwise pace `ms` (false when a stop was requested meanwhile).
 */
export async function nextInstant(backend: Backend, io: Io, ms: number, stop: StopWatch): Promise<boolean> {
  if (stop.stopped()) return false;
  if (backend.recording) return backend.recording.advance();
  if (isVirtual(backend)) await new Promise((resolve) => setImmediate(resolve));
  else await Promise.race([io.sleep(ms, stop.signal), stop.requested]);
  if (stop.stopped()) return false;
  if (isAdvanceable(backend)) await backend.advanceMs(ms);
  return true;
}
