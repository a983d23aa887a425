// The monitor from code: the observation loop every command and the exporter render. Each round samples every
// unit's engines, waiters and ports, judges them, and states the findings with their codes.
import type { Backend } from '../backend.js';
import { usageError } from '../errors.js';
import { Monitor, type MonitorTracks, rounds } from '../monitor/monitor.js';
import { isAdvanceable, realSleep } from '../monitor/pace.js';
import type { Round } from '../monitor/round.js';
import { checkNumber, checkOneOf, checkOptions, checkPeriodMs, checkSignal, checkText, shown } from './check.js';

/** How the monitor judges. */
export interface CreateMonitorOptions {
  /** No head movement this long while in flight is a stall (ms above 0, default 1000). */
  stallMs?: number;
  /** A halt shorter than this is a recovery (ms above 0, default: stallMs, so a halt is judged as a stall is). */
  recoveryMs?: number;
  /** A waiter must hold this long, and 3 rounds, to be stranded (ms above 0, default 200). */
  strandMs?: number;
  /** Only this unit (number or name). */
  unit?: number | string;
  /** Waiters: read each round (default), `strict` (a failed read rejects the round) or `off`. */
  waiters?: 'read' | 'strict' | 'off';
  /** Read every port's link each round (default true). */
  ports?: boolean;
  /** A unit whose read takes longer is not read this round (`failed`, ms above 0); unbounded when absent. */
  readTimeoutMs?: number;
}

const MONITOR_OPTIONS = ['stallMs', 'recoveryMs', 'strandMs', 'unit', 'waiters', 'ports', 'readTimeoutMs'] as const;

/** How `rounds` paces itself. */
export interface MonitorRoundsOptions {
  /** Time between rounds (ms above 0); a recording goes instant by instant instead. */
  intervalMs: number;
  /** Stop after this many rounds (a whole number, 1 or more). */
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

/** The options of createMonitor, each checked. */
function checkMonitorOptions(given: CreateMonitorOptions | undefined): CreateMonitorOptions {
  const where = 'createMonitor';
  const o: CreateMonitorOptions = checkOptions(where, given, MONITOR_OPTIONS);
  for (const name of ['stallMs', 'recoveryMs', 'strandMs', 'readTimeoutMs'] as const) {
    if (o[name] !== undefined) checkPeriodMs(where, name, o[name]);
  }
  if (typeof o.unit === 'string') checkText(where, 'unit', o.unit, 'a unit name (hfi1_0) or number');
  else if (o.unit !== undefined) checkNumber(where, 'unit', o.unit, { min: 0, integer: true, what: 'a unit number or a name' });
  if (o.waiters !== undefined) checkOneOf(where, 'waiters', o.waiters, ['read', 'strict', 'off'] as const);
  if (o.ports !== undefined) checkOneOf(where, 'ports', o.ports, [true, false] as const);
  return o;
}

/** The options of rounds(), each checked. */
function checkRoundsOptions(given: MonitorRoundsOptions): MonitorRoundsOptions {
  const where = 'rounds';
  if (given === undefined) throw usageError(`${where}: give the options, at least { intervalMs }`);
  const r = checkOptions(where, given, ['intervalMs', 'count', 'signal', 'wall']);
  const intervalMs = checkPeriodMs(where, 'intervalMs', r.intervalMs);
  if (r.count !== undefined) checkNumber(where, 'count', r.count, { min: 1, integer: true, what: 'a count of rounds' });
  checkSignal(where, r.signal);
  if (r.wall !== undefined) checkOneOf(where, 'wall', r.wall, [true, false] as const);
  return { ...r, intervalMs };
}

/** A monitor over `backend`. */
export function createMonitor(backend: Backend, options?: CreateMonitorOptions): Hfi1Monitor {
  const fns = backend === null || typeof backend !== 'object' ? [] : [backend.units, backend.unit, backend.close];
  if (fns.length === 0 || fns.some((f) => typeof f !== 'function')) {
    throw usageError(`createMonitor: backend must be a Backend (from openBackend or createEmuBackend); got ${shown(backend)}`);
  }
  const o = checkMonitorOptions(options);
  const m = new Monitor(backend, { ...o, waiters: o.waiters ?? 'read' });
  return {
    backend,
    round: () => m.round(),
    rounds(given) {
      const r = checkRoundsOptions(given);
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
