// `health`: a Nagios plugin. Observes every engine long enough to confirm a stall (two-stage),
// then prints one status line with perfdata and one line per finding.
// Exit codes (Nagios plugin API): 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (also for a usage error).
import type { Argv } from 'yargs';
import type { Backend, LinkState, Unit } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { STRAND_SAMPLES } from '../progress/strand.js';
import { parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import {
  COUNTS,
  countsOf,
  DEFAULT_CRITICAL,
  DEFAULT_WARNING,
  findings,
  type Level,
  levelOf,
  NAGIOS,
  type Observed,
  parseThresholds,
  type Thresholds,
} from './health-findings.js';
import { blindWords, waiterFindings, waiterNotes } from './health-waiters.js';
import { readLink } from './link.js';
import { Observer, type Row } from './observe.js';
import { isFrozenCapture, nextInstant, type StopWatch, watchForStop } from './pace.js';
import { missingSources, selectedUnits, withBackend } from './units.js';
import { strandMsArg, type UnitWaiters, WaiterObserver } from './waiters-observe.js';

export { NAGIOS } from './health-findings.js';

/** Samples in a live observation: 2 × --stall-ms, --stall-ms/2 apart. */
const LIVE_ROUNDS = 5;

/** The observation that --stall-ms asks for, in ms of (wall or virtual) time. */
function observationMs(stallMs: number): number {
  return (LIVE_ROUNDS - 1) * Math.max(1, Math.ceil(stallMs / 2));
}

/** The name every output line starts with, saying what was observed unless it is this host. */
function subject(backend: Backend): string {
  if (backend.recording) return `snapshot ${backend.recording.source}: `;
  return backend.kind === 'emu' ? 'emulator: ' : '';
}

class Stopped extends Error {}

/** Observe every unit: 5 rounds live; every recorded instant on a recording. */
async function observe(
  backend: Backend,
  units: Unit[],
  stallMs: number,
  strandMs: number,
  ctx: CliContext,
  stop: StopWatch,
): Promise<{ observed: Observed[]; uws: UnitWaiters[] }> {
  const observer = new Observer(backend, units, { stallMs, recoveryMs: stallMs });
  const waiters = new WaiterObserver({ strandMs, frozen: isFrozenCapture(backend) });
  const fullRounds = new Map<string, number>();
  let rounds = 0;
  let rows: Row[] = await observer.round();
  let uws = await waiters.round(units, rows);
  for (let i = 1; backend.recording || i < LIVE_ROUNDS; i++) {
    if (!(await nextInstant(backend, ctx.io, Math.max(1, Math.ceil(stallMs / 2)), stop))) {
      if (stop.stopped()) throw new Stopped();
      break;
    }
    rows = await observer.round();
    uws = await waiters.round(units, rows);
    rounds += 1;
    for (const { unit, s, c } of rows) {
      const key = `${unit.info.name}/${s.engine}`;
      if (c.verdict === 'backpressure') fullRounds.set(key, (fullRounds.get(key) ?? 0) + 1);
    }
  }
  const observed: Observed[] = rows.map((r) => ({
    ...r,
    persistentlyFull: rounds > 0 && (fullRounds.get(`${r.unit.info.name}/${r.s.engine}`) ?? 0) >= rounds,
  }));
  return { observed, uws };
}

/** The status line, perfdata and finding lines; returns the level. */
function report(
  backend: Backend,
  units: Unit[],
  observed: Observed[],
  uws: readonly UnitWaiters[],
  links: ReadonlyMap<Unit, LinkState | null>,
  warning: Thresholds,
  critical: Thresholds,
): { level: Level; text: string } {
  const fs = [...findings(observed, links), ...waiterFindings(uws, observed)];
  const counts = countsOf(fs);
  const lines = fs.map((f) => ({ level: levelOf(f.count, counts[f.count], warning, critical), text: f.text }));
  // Engines whose ring cannot be read here (only interrupt counts) and whose counts did not move: idle,
  // or stopped with work in flight. Nothing found on them is not "OK" but not known.
  const blind = unreadableRings(units, observed);
  for (const text of blind) lines.push({ level: 'UNKNOWN', text });
  const order: Record<Level, number> = { CRITICAL: 0, WARNING: 1, UNKNOWN: 2, OK: 3 };
  lines.sort((a, b) => order[a.level] - order[b.level]);
  for (const unit of units) {
    const m = missingSources(unit.info);
    if (m && backend.kind === 'hw') lines.push({ level: 'OK', text: `note: ${m}` });
  }
  for (const text of waiterNotes(uws)) lines.push({ level: 'OK', text });
  const levels = COUNTS.map((k) => levelOf(k, counts[k], warning, critical));
  let level: Level = levels.includes('CRITICAL') ? 'CRITICAL' : levels.includes('WARNING') ? 'WARNING' : 'OK';
  if (blind.length > 0 && level === 'OK') level = 'UNKNOWN';
  const perf = [
    `engines=${observed.length}`,
    ...COUNTS.map((k) => `${k}=${counts[k]};${warning[k] ?? ''};${critical[k] ?? ''}`),
    `backpressure=${observed.filter((o) => o.c.verdict === 'backpressure').length}`,
    ...observed.map(
      ({ unit, s, c }) => `${unit.info.name}_sdma${s.engine}_inflight=${c.inFlight ?? 'U'};;;0;${unit.info.descqCnt - 1}`,
    ),
  ].join(' ');
  const problems = lines.filter((l) => l.level !== 'OK');
  const undetermined = observed.filter((o) => o.c.verdict === 'unknown');
  const reasons = [...new Set(undetermined.map((o) => o.c.reason))].join(', ');
  const summary =
    problems.length > 0
      ? `${problems.length} finding(s): ${problems[0]?.text}${problems.length > 1 ? ' ...' : ''}`
      : undetermined.length > 0
        ? `${observed.length - undetermined.length} engines on ${units.length} unit(s) healthy, ${undetermined.length} not yet determined (${reasons})`
        : `${observed.length} engines on ${units.length} unit(s) healthy`;
  const text = `HFI1-SDMA ${level} - ${subject(backend)}${summary}${blindWords(uws)} | ${perf}\n${lines.map((l) => `${l.level}: ${l.text}\n`).join('')}`;
  return { level, text };
}

/** One line per unit with engines that cannot be judged: no ring state and no interrupt moved. */
function unreadableRings(units: readonly Unit[], observed: readonly Observed[]): string[] {
  const out: string[] = [];
  for (const unit of units) {
    const blind = observed.filter((o) => o.unit === unit && o.c.verdict === 'unknown' && o.c.reason === 'no-ring-state');
    if (blind.length === 0) continue;
    const which = blind.map((o) => `sdma${o.s.engine}`).join(',');
    out.push(
      `${unit.info.name} ${blind.length} engine(s) cannot be judged (${which}): their rings (heads, tails, state) are not readable here and their interrupt counts did not move, so an idle engine and one stopped with work in flight look alike; read debugfs sdes or the BAR (as root) to check them`,
    );
  }
  return out;
}

/**
 * A unit's files vanished during the check (the device fell off the bus, or its driver was unloaded):
 * the gone finding (CRITICAL by default), not UNKNOWN. No perfdata: how many engines went is not known.
 */
function wentAway(ctx: CliContext, message: string, backend: Backend, warning: Thresholds, critical: Thresholds): number {
  const level = levelOf('gone', 1, warning, critical);
  const text = `a unit went away during the check (the device fell off the bus or its driver was unloaded): ${message}`;
  ctx.io.stdout(`HFI1-SDMA ${level} - ${subject(backend)}${text}\n${level}: ${text}\n`);
  return NAGIOS[level];
}

/** The UNKNOWN answer: one line, exit 3. */
function unknown(ctx: CliContext, what: string, backend?: Backend): number {
  const who = backend ? subject(backend) : ctx.global.backend === 'emu' ? 'emulator: ' : '';
  ctx.io.stdout(`HFI1-SDMA UNKNOWN - ${who}${what}\n`);
  return NAGIOS.UNKNOWN;
}

export const healthCommand: CommandSpec = {
  fallback: false,
  command: 'health',
  describe: 'Nagios plugin: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; one line per finding',
  builder: (y: Argv) =>
    y
      .option('stall-ms', { type: 'string', default: '1000', describe: 'no head movement this long while in flight is a stall' })
      .option('strand-ms', {
        type: 'string',
        default: '200',
        describe:
          'a waiter asleep on a running, empty, quiet engine this long (and 3 samples) is stranded; at most 2 × --stall-ms',
      })
      .option('timeout', {
        alias: 't',
        type: 'string',
        default: '10',
        describe: 'seconds the whole check may take; UNKNOWN rather than overrun',
      })
      .option('warning', {
        alias: 'w',
        type: 'string',
        describe: `WARNING when a count exceeds N: name=N|off,... (default ${thresholdText(DEFAULT_WARNING)})`,
      })
      .option('critical', {
        alias: 'c',
        type: 'string',
        describe: `CRITICAL when a count exceeds N: name=N|off,... (default ${thresholdText(DEFAULT_CRITICAL)})`,
      })
      .epilogue(
        `Counts: ${COUNTS.join(', ')} (engines; stranded and probable count waiters, psmstall PSM stall episodes). Watches for 2 × --stall-ms (five samples, --stall-ms/2 apart) so that a stall that began before or early in the check is confirmed by a second sample; a halt or non-running state lasting --stall-ms is a halt. A QP stranded on a running, empty, quiet engine (a lost wake-up) is CRITICAL; PSM writer stalls (a writer gives up after 1 s and retries) and waiters orphaned on a stopped engine are WARNING; kinds of waiter this host cannot see are named, never taken as none. A snapshot is replayed instant by instant; a snapshot of one instant is UNKNOWN, one of two when nothing worse is found, and so are engines that cannot be judged (no sdes or BAR here, interrupt counts still) when nothing worse is found. Any usage error is UNKNOWN (3).`,
      ),
  async run(args, ctx) {
    let stallMs: number;
    let strandMs: number;
    let timeoutMs: number;
    let warning: Thresholds;
    let critical: Thresholds;
    try {
      stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 3_600_000);
      strandMs = strandMsArg(args.strandMs);
      timeoutMs = parseIntArg('--timeout', args.timeout, 1, 86_400) * 1000;
      warning = parseThresholds('--warning', args.warning, DEFAULT_WARNING);
      critical = parseThresholds('--critical', args.critical, DEFAULT_CRITICAL);
    } catch (e) {
      return unknown(ctx, (e as Error).message);
    }
    if (strandMs > observationMs(stallMs)) {
      return unknown(
        ctx,
        `--strand-ms ${strandMs} is longer than the ${observationMs(stallMs)} ms observation that --stall-ms ${stallMs} gives: lower --strand-ms or raise --stall-ms`,
      );
    }
    // The plugin's own start-up counts against the caller's timeout: answer a little before it.
    const deadlineMs = timeoutMs - Math.min(1000, timeoutMs / 10);
    if (observationMs(stallMs) >= deadlineMs) {
      return unknown(
        ctx,
        `--stall-ms ${stallMs} needs ${observationMs(stallMs)} ms of observation, too close to --timeout ${timeoutMs / 1000} s: lower --stall-ms or raise --timeout`,
      );
    }
    const stop = watchForStop();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    // A wall-clock deadline by nature (the caller's timeout is wall time), whatever clock paces the samples.
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), deadlineMs);
    });
    const check = withBackend(ctx, async (backend) => {
      try {
        const units = await selectedUnits(backend, ctx.global.unit);
        const { observed, uws } = await observe(backend, units, stallMs, strandMs, ctx, stop);
        if (isFrozenCapture(backend)) {
          return unknown(
            ctx,
            'a capture of a single instant shows no movement, so no stall or rate can be judged from it; take a snapshot of several samples',
            backend,
          );
        }
        const links = new Map<Unit, LinkState | null>();
        for (const unit of units) links.set(unit, await readLink(unit));
        const { level, text } = report(backend, units, observed, uws, links, warning, critical);
        const instants = backend.recording?.timesMs.length ?? Number.POSITIVE_INFINITY;
        if (level === 'OK' && instants < STRAND_SAMPLES) {
          // Nothing found in two instants is not "OK": a stall and a strand each need a third sample.
          return unknown(
            ctx,
            `a capture of ${instants} instants cannot confirm a stall or a stranded waiter (each needs ${STRAND_SAMPLES} samples); take a snapshot of ${STRAND_SAMPLES} samples or more`,
            backend,
          );
        }
        if (!timedOut) ctx.io.stdout(text);
        return NAGIOS[level];
      } catch (e) {
        if (e instanceof Stopped) return unknown(ctx, 'interrupted before the observation completed', backend);
        if (isHfi1SdmaError(e) && e.code === 'E_DEVICE_GONE') return wentAway(ctx, e.message, backend, warning, critical);
        throw e;
      }
    }).catch((e: unknown) => unknown(ctx, isHfi1SdmaError(e) ? e.message : String(e)));
    try {
      const first = await Promise.race([check, deadline]);
      if (first !== 'timeout') return first;
      timedOut = true;
      stop.dispose();
      const code = unknown(ctx, `no answer within --timeout ${timeoutMs / 1000} s (a source did not answer in time)`);
      // The stuck read cannot be cancelled: end the process rather than overrun.
      ctx.io.exit?.(code);
      return code;
    } finally {
      clearTimeout(timer);
      stop.dispose();
    }
  },
};

function thresholdText(t: Thresholds): string {
  return Object.entries(t)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
