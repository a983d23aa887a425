// What the read commands share: the monitor they render, the warnings and unit problems they say once,
// their exit status after a round, and how they name where the numbers come from.
import { hostname } from 'node:os';
import type { Argv } from 'yargs';
import type { Backend, EngineSample, Unit } from '../backend.js';
import { EXIT_CODES, type Hfi1SdmaError } from '../errors.js';
import { goneAction } from '../monitor/findings.js';
import { Monitor, type MonitorOptions, type MonitorTracks } from '../monitor/monitor.js';
import { fittedStrandMs, judged, observe } from '../monitor/observation.js';
import type { Provenance, Round, UnitRound } from '../monitor/round.js';
import { parseIntArg } from './args.js';
import { sysrootOf } from './backend-select.js';
import type { CliContext } from './context.js';
import type { Io } from './io.js';
import type { StopWatch } from './pace.js';
import { missingSources } from './units.js';

/** The options of a read command's monitor: the --unit selection, every port, the reduced-view note on a host. */
export function commandMonitorOptions(backend: Backend, ctx: CliContext, o: MonitorOptions = {}): MonitorOptions {
  const live = backend.kind === 'hw' && !backend.recording && sysrootOf(ctx.global) === '/';
  return {
    unit: ctx.global.unit,
    requireUnit: true,
    host: live ? hostname() : null,
    ...(backend.kind === 'hw' && !backend.recording ? { reduced: missingSources } : {}),
    ...o,
  };
}

/** The monitor a read command renders (commandMonitorOptions), starting from `tracks` when given. */
export function commandMonitor(backend: Backend, ctx: CliContext, o: MonitorOptions = {}, tracks?: MonitorTracks): Monitor {
  return new Monitor(backend, commandMonitorOptions(backend, ctx, o), tracks);
}

/**
 * Says on stderr each distinct source warning of the units so far (every round's, not only the last's) that
 * `said` does not hold yet; a command that renders several rounds passes the same set each time.
 */
export function sayWarnings(io: Io, round: Round, said: Set<string> = new Set()): void {
  for (const u of round.units) {
    for (const w of u.warnings) {
      const key = `${u.info.name}\0${w.key}\0${w.path}`;
      if (said.has(key)) continue;
      said.add(key);
      io.stderr(`hfi1-sdma: warning: ${w.message.startsWith(w.path) ? w.message : `${w.path}: ${w.message}`}\n`);
    }
  }
}

/** The one line that says a unit is gone and what to do. */
export function goneMessage(u: Pick<UnitRound, 'info'>): string {
  return `${u.info.name}: device gone: its registers read all-ones (the adapter was reset or fell off the PCI bus); ${goneAction(u.info)}`;
}

/**
 * The exit status of a read command after its last round, saying on stderr what went wrong: a unit that could
 * not be read exits as reading it alone would (65 malformed, 77 permission, 69 unavailable); a gone unit 69.
 * The other units were shown all the same.
 */
export function roundStatus(io: Io, round: Round): number {
  let status = 0;
  for (const u of round.units) {
    if (u.status === 'failed') {
      io.stderr(`hfi1-sdma: ${u.error?.message ?? `${u.info.name}: ${u.problem ?? 'could not be read'}`}\n`);
      if (status === 0) status = (u.error as Hfi1SdmaError | null)?.exitCode ?? EXIT_CODES.E_UNAVAILABLE;
    }
  }
  for (const u of round.units) {
    if (u.status !== 'gone') continue;
    io.stderr(`hfi1-sdma: ${goneMessage(u)}\n`);
    if (status === 0) status = EXIT_CODES.E_DEVICE_GONE;
  }
  for (const info of round.vanished) {
    io.stderr(`hfi1-sdma: ${info.name}: vanished (no longer listed); ${goneAction(info)}\n`);
    if (status === 0) status = EXIT_CODES.E_DEVICE_GONE;
  }
  return status;
}

/** `--stall-ms` of the commands that judge as health does (engines, show): health's flag, default and bounds. */
export function withStallMs<T>(y: Argv<T>) {
  return y.option('stall-ms', {
    type: 'string',
    default: '1000',
    describe: "judge as 'health --stall-ms' does: no head movement this long while in flight is a stall (observes up to 2 ×)",
  });
}

/**
 * The monitor options of `--stall-ms`: the stall threshold, and the strand threshold within the observation it
 * gives (a strand is confirmed within health's window, as health requires of its --strand-ms).
 */
export function stallOptions(raw: unknown): Pick<MonitorOptions, 'stallMs' | 'strandMs'> {
  const stallMs = parseIntArg('--stall-ms', raw ?? '1000', 1, 3_600_000);
  return { stallMs, strandMs: fittedStrandMs(stallMs) };
}

/**
 * The round a follow-up command (show, engines, waiters) renders: observed as health observes, until nothing is left
 * to judge (`enough`: every engine judged and no waiter being confirmed, by default) and never longer than health's
 * window; on a recording, every instant (what it recorded is judged as it was). So a stall or a halt health names is
 * named here too, and an idle host answers at once.
 */
export async function judgedRound(
  monitor: Monitor,
  ctx: CliContext,
  stop: StopWatch,
  enough: (round: Round) => boolean = judged,
  first?: Round,
): Promise<Round> {
  const o = { stallMs: monitor.stallMs, strandMs: monitor.strandMs, sleep: ctx.io.sleep, signal: stop.signal, enough };
  return (await observe(monitor, first ? { ...o, first } : o)).round;
}

function utc(ms: number): string {
  return `${new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')} UTC`;
}

/** Where the numbers come from, for a header: `backend snapshot node17.tar.gz (host vm, captured …, 3 instants)`. */
export function provenanceText(p: Provenance): string {
  if (p.backend === 'emu') return "backend emu (the emulator, not this host's adapter)";
  const parts: string[] = [];
  if (p.host) parts.push(`host ${p.host}`);
  if (p.capturedAtMs !== null) parts.push(`captured ${utc(p.capturedAtMs)}`);
  if (p.instants !== null) parts.push(`${p.instants} instant${p.instants === 1 ? '' : 's'}`);
  if (p.toolVersion) parts.push(`by hfi1-sdma ${p.toolVersion}`);
  if (p.emulated) parts.push('emulated: not an adapter');
  const what = p.backend === 'snapshot' ? `backend snapshot ${p.source ?? ''}`.trimEnd() : 'backend hw';
  return parts.length ? `${what} (${parts.join(', ')})` : what;
}

/** The provenance in JSON: every field, null where unknown; capture time as ISO text too. */
export function provenanceJson(p: Provenance) {
  return { ...p, capturedAt: p.capturedAtMs === null ? null : new Date(p.capturedAtMs).toISOString() };
}

/** Says each distinct source warning (by key) once per run, on stderr: for the one-sample commands (fit, ring, progress). */
export class WarningSayer {
  private readonly said = new Set<string>();

  constructor(private readonly io: Io) {}

  /** Print the warnings of `units` not said yet. */
  say(units: readonly Unit[]): void {
    for (const unit of units) {
      for (const w of unit.warnings?.() ?? []) {
        const key = `${unit.info.name}\0${w.key}\0${w.path}`;
        if (this.said.has(key)) continue;
        this.said.add(key);
        this.io.stderr(`hfi1-sdma: warning: ${w.message.startsWith(w.path) ? w.message : `${w.path}: ${w.message}`}\n`);
      }
    }
  }
}

/** Exit status of a one-sample command: 69 (E_DEVICE_GONE) after saying so on stderr when its unit reads as gone, else 0. */
export function goneStatus(io: Io, rows: readonly { unit: Unit; s: EngineSample }[]): number {
  const gone = [...new Set(rows.filter((r) => r.s.gone).map((r) => r.unit))];
  for (const unit of gone) io.stderr(`hfi1-sdma: ${goneMessage(unit)}\n`);
  return gone.length > 0 ? EXIT_CODES.E_DEVICE_GONE : 0;
}
