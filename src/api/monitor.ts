// The monitor from code: the observation loop every command and the exporter render. Each round samples every
// unit's engines, waiters and ports, judges them, and states the findings with their codes.
import type { Backend } from '../backend.js';
import { Monitor, type MonitorTracks, rounds } from '../monitor/monitor.js';
import { isAdvanceable, realSleep } from '../monitor/pace.js';
import type { Round } from '../monitor/round.js';

/** How the monitor judges. */
export interface CreateMonitorOptions {
  /** No head movement this long while in flight is a stall (ms, default 1000). */
  stallMs?: number;
  /** A halt shorter than this is a recovery (ms, default: stallMs, so a halt is judged as a stall is). */
  recoveryMs?: number;
  /** A waiter must hold this long, and 3 rounds, to be stranded (ms, default 200). */
  strandMs?: number;
  /** Only this unit (number or name). */
  unit?: number | string;
  /** Waiters: read each round (default), `strict` (a failed read rejects the round) or `off`. */
  waiters?: 'read' | 'strict' | 'off';
  /** Read every port's link each round (default true). */
  ports?: boolean;
  /** A unit whose read takes longer is not read this round (`failed`, ms); unbounded when absent. */
  readTimeoutMs?: number;
}

/** How `rounds` paces itself. */
export interface MonitorRoundsOptions {
  /** Time between rounds (ms); a recording goes instant by instant instead. */
  intervalMs: number;
  /** Stop after this many rounds. */
  count?: number;
  /** Stops the rounds (a pending wait ends at once). */
  signal?: AbortSignal;
  /**
   * Wait the interval in wall time. Default: yes, except on the emulator, whose virtual time is simply advanced
   * by the interval between rounds (a test runs as fast as the model).
   */
  wall?: boolean;
}

/** The monitor of one backend. */
export interface Hfi1Monitor {
  readonly backend: Backend;
  /** One round now. */
  round(): Promise<Round>;
  /** Rounds, one per interval (per recorded instant), until the signal, the count or a recording's end. */
  rounds(o: MonitorRoundsOptions): AsyncGenerator<Round>;
  /** What it has learnt so far (tracks of every engine and waiter), to start another monitor from. */
  state(): MonitorTracks;
  /** Close what the monitor opened itself (the backend stays the caller's). */
  close(): Promise<void>;
}

/** A monitor over `backend`. */
export function createMonitor(backend: Backend, o: CreateMonitorOptions = {}): Hfi1Monitor {
  const m = new Monitor(backend, { ...o, waiters: o.waiters ?? 'read' });
  return {
    backend,
    round: () => m.round(),
    rounds(r) {
      const virtual = r.wall !== true && backend.kind === 'emu' && isAdvanceable(backend);
      return rounds(m, {
        intervalMs: r.intervalMs,
        ...(r.count === undefined ? {} : { count: r.count }),
        ...(r.signal ? { signal: r.signal } : {}),
        sleep: virtual ? async () => {} : realSleep,
      });
    },
    state: () => m.state(),
    close: () => m.close(),
  };
}
