// Every way out of the process, made clean: temporary trees and files registered here are removed
// when the process ends, normally, by an error or by SIGINT/SIGTERM/SIGHUP; a long-running command
// registers how it stops gracefully, and gets one second to do so before the process exits.
import { rmSync } from 'node:fs';

const temporaries = new Map<number, string>();
const stoppers = new Map<number, () => void>();
let nextId = 1;
let installed = false;
/** The process's exit runs removeTemporaries (the command line, or a library that made a temporary). */
let exitHooked = false;
let stopping = false;
/** The exit status of the signal that requested the stop (128 + its number). */
let stopStatus = 0;

/** Signals that end a command, with the status a shell expects (128 + signal number). */
const SIGNALS: Readonly<Record<'SIGINT' | 'SIGTERM' | 'SIGHUP', number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/** How long a graceful stop may take before the process exits anyway (ms). */
export const STOP_GRACE_MS = 1000;

/**
 * Remove `path` (a file or a whole tree) if the process ends before the returned function is
 * called. Call the returned function once the path is removed or handed over (renamed into place).
 */
export function removeOnExit(path: string): () => void {
  // A library's temporaries go when its process ends too (its signals are its own to handle).
  hookExit(process);
  const id = nextId++;
  temporaries.set(id, path);
  return () => {
    temporaries.delete(id);
  };
}

/**
 * Register how a long-running command stops (close its listener, end its loop). On the first
 * SIGINT/SIGTERM every registered stopper runs and the process has STOP_GRACE_MS to end on its
 * own. Returns the function that unregisters it.
 */
export function onStop(stop: () => void): () => void {
  const id = nextId++;
  stoppers.set(id, stop);
  return () => {
    stoppers.delete(id);
  };
}

/** Remove every registered temporary now, synchronously; failures are ignored (best effort). */
export function removeTemporaries(): void {
  for (const [id, path] of temporaries) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // nothing more can be done on the way out
    }
    temporaries.delete(id);
  }
}

/** True once a stop signal arrived: loops check it between steps. */
export function stopRequested(): boolean {
  return stopping;
}

/** The exit status a command stopped by a signal before it did its work returns (130 for SIGINT, 143 for SIGTERM). */
export function stoppedStatus(): number {
  return stopStatus === 0 ? SIGNALS.SIGTERM : stopStatus;
}

function hookExit(proc: NodeJS.Process): void {
  if (exitHooked) return;
  exitHooked = true;
  proc.on('exit', removeTemporaries);
}

/** A run stopped by a signal before its command did its work: nothing is printed, and it exits with `status`. */
export class StoppedError extends Error {
  constructor(readonly status: number = stoppedStatus()) {
    super('stopped before the command did its work');
    this.name = 'StoppedError';
  }
}

/**
 * Install the process-wide handlers (the command-line entry calls this once; tests that run
 * main() in-process do not). A second signal, or a stop that overruns its grace, exits at once.
 */
export function installExitHandlers(proc: NodeJS.Process = process): void {
  if (installed) return;
  installed = true;
  if (proc === process) hookExit(proc);
  else proc.on('exit', removeTemporaries);
  for (const [name, status] of Object.entries(SIGNALS)) {
    proc.on(name, () => {
      removeTemporaries();
      // A command that listens for the signal itself stops on its own, within the same grace.
      const handledElsewhere = stoppers.size > 0 || proc.listenerCount(name) > 1;
      if (stopping || !handledElsewhere) proc.exit(status);
      stopping = true;
      stopStatus = status;
      for (const stop of stoppers.values()) {
        try {
          stop();
        } catch {
          // a failing stopper must not keep the process alive; the grace timer ends it
        }
      }
      setTimeout(() => proc.exit(status), STOP_GRACE_MS).unref();
    });
  }
}
