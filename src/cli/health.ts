// `health`: a Nagios plugin. Observes every engine long enough to confirm a stall (two-stage) and a strand
// (three samples), carrying the monitor's tracks between runs in a state file, then prints one status line
// (the worst finding first, at most 200 characters), one line per further finding, and the perfdata; the
// whole output stays within --max-bytes (1,024 by default, NRPE's buffer). --json prints the same as one
// document. Exit codes (Nagios plugin API): 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (also for a usage error).
import { tmpdir } from 'node:os';
import type { Argv } from 'yargs';
import type { Backend } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { BRIEF_WORDS, briefLines, OFF_HOST_KINDS } from '../monitor/brief.js';
import type { Finding } from '../monitor/findings.js';
import type { MonitorTracks } from '../monitor/monitor.js';
import { fittedStrandMs, observationMs, observe } from '../monitor/observation.js';
import type { Round } from '../monitor/round.js';
import type { StateKey } from '../monitor/state.js';
import { checkStateOption, defaultStatePath, loadState, saveState, stateKey } from '../monitor/state-file.js';
import { DEFAULT_STRAND_MS, STRAND_SAMPLES } from '../progress/strand.js';
import { parseIntArg } from './args.js';
import { sysrootOf } from './backend-select.js';
import type { CliContext, CommandSpec } from './context.js';
import {
  COUNTS,
  countsOf,
  DEFAULT_CRITICAL,
  DEFAULT_WARNING,
  findingLevel,
  type Level,
  levelOf,
  NAGIOS,
  parseThresholds,
  statusOf,
  type Thresholds,
} from './health-levels.js';
import { commandMonitor, provenanceJson } from './observe.js';
import { watchForStop } from './pace.js';
import { documentStamp, stamped } from './stamp.js';
import { withBackend } from './units.js';
import { strandMsArg } from './waiters-observe.js';

export { NAGIOS } from './health-levels.js';

/** The longest status line (the Nagios plugin guidelines' advice for the first line). */
const FIRST_LINE_MAX = 200;

/** The name every output line starts with, saying what was observed unless it is this host. */
function subject(backend: Backend): string {
  if (backend.recording) return `snapshot ${backend.recording.source}: `;
  if (backend.kind === 'emu') return 'emulator: ';
  return backend.origin?.emulated ? 'emulated sysroot: ' : '';
}

/** What `--brief` adds to its first line when the numbers are not this host's adapter. */
function briefTag(backend: Backend | undefined): string {
  if (!backend) return '';
  if (backend.recording) return ' (snapshot)';
  if (backend.kind === 'emu') return ' (emulator)';
  return backend.origin?.emulated ? ' (emulated sysroot)' : '';
}

/** How an answer is printed: the Nagios text, one JSON document, or the brief lines. */
type Form = 'text' | 'json' | 'brief';

function formOf(ctx: CliContext, brief: boolean): Form {
  if (brief) return 'brief';
  return ctx.global.json ? 'json' : 'text';
}

class Stopped extends Error {}

/** Why a capture of one instant cannot be judged. */
const FROZEN =
  'a capture of a single instant shows no movement, so no stall or rate can be judged from it; take a snapshot of several samples';

/** Why a capture of too few instants cannot say OK. */
function tooFewInstants(instants: number): string {
  return `a capture of ${instants} instants cannot confirm a stall or a stranded waiter (each needs ${STRAND_SAMPLES} samples); take a snapshot of ${STRAND_SAMPLES} samples or more`;
}

/** Where the tracks come from and go to between runs, or null when none is kept (the emulator, a recording, an emulated sysroot unless --state names a file, --state none). */
interface StateUse {
  path: string;
  key: StateKey;
  createDir: boolean;
  note: string | null;
}

/** Whether this run keeps a state, and the tracks it starts from. */
async function openState(
  backend: Backend,
  ctx: CliContext,
  raw: unknown,
): Promise<{ use: StateUse | null; tracks: MonitorTracks | undefined }> {
  const given = raw === undefined ? undefined : String(raw);
  if (given === 'none' || backend.kind === 'emu' || backend.recording) return { use: null, tracks: undefined };
  // An emulated sysroot (emu write/serve) is a rehearsal, not a host: it keeps a state only when asked.
  if (given === undefined && backend.origin?.emulated) return { use: null, tracks: undefined };
  const sysroot = sysrootOf(ctx.global);
  const uid = process.getuid?.() ?? 0;
  const path = given ?? defaultStatePath('health', sysroot, { uid, env: ctx.io.env, tmpdir: tmpdir() });
  const host = sysroot === '/' ? (await import('node:os')).hostname() : null;
  let infos: Awaited<ReturnType<Backend['units']>> = [];
  try {
    infos = await backend.units();
  } catch {
    // the monitor's first round says why the units cannot be listed
  }
  const key = await stateKey(sysroot, host, infos);
  const { tracks, note } = await loadState(path, key, Date.now());
  return { use: { path, key, createDir: given === undefined, note }, tracks };
}

/** One leveled finding. */
interface Line {
  level: Level;
  f: Finding;
}

const LEVEL_ORDER: Record<Level, number> = { CRITICAL: 0, WARNING: 1, UNKNOWN: 2, OK: 3 };

/** Cut text to `max` characters, ending `…` when cut. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** The lower of a finding's level and a cap (UNKNOWN is never capped: it says nothing could be judged). */
function capLevel(level: Level, cap: Level): Level {
  if (level === 'UNKNOWN') return level;
  return LEVEL_ORDER[level] < LEVEL_ORDER[cap] ? cap : level;
}

/**
 * The judged observation: status, problem and note lines, counts and perfdata. A finding whose cause lies off this
 * host (OFF_HOST_KINDS) is levelled at most `offHost`, and below CRITICAL it counts for nothing in the status.
 */
function judge(round: Round, warning: Thresholds, critical: Thresholds, offHost: Level = 'CRITICAL') {
  const capped = (f: Finding) => offHost !== 'CRITICAL' && OFF_HOST_KINDS.has(f.kind);
  const all = countsOf(round.findings);
  const counts = offHost === 'CRITICAL' ? all : countsOf(round.findings.filter((f) => !capped(f)));
  const lines: Line[] = round.findings.map((f) =>
    capped(f)
      ? { level: capLevel(findingLevel(f, all, warning, critical), offHost), f }
      : { level: findingLevel(f, counts, warning, critical), f },
  );
  const problems = lines.filter((l) => l.level !== 'OK').sort((a, b) => LEVEL_ORDER[a.level] - LEVEL_ORDER[b.level]);
  // Below its thresholds a counted finding is shown only where the user set one for its count.
  const notes = lines.filter(
    (l) => l.level === 'OK' && (l.f.count === null || warning[l.f.count] !== undefined || critical[l.f.count] !== undefined),
  );
  const levels = [...problems.map((l) => l.level), ...COUNTS.map((k) => levelOf(k, counts[k], warning, critical))];
  const engines = round.units.flatMap((u) => u.engines);
  const perf = [
    `engines=${engines.length}`,
    ...COUNTS.map((k) => `${k}=${counts[k]};${warning[k] ?? ''};${critical[k] ?? ''}`),
    `backpressure=${engines.filter((e) => e.verdict.verdict === 'backpressure').length}`,
  ].join(' ');
  return { status: statusOf(levels), problems, notes, counts, perf, engines };
}

/** The Nagios text: the status line (≤ 200 characters), the further lines, the perfdata; within `maxBytes`. */
function nagiosText(
  backend: Backend,
  round: Round,
  j: ReturnType<typeof judge>,
  status: Level,
  extraNotes: readonly string[],
  maxBytes: number,
): string {
  const units = round.units.length;
  const undetermined = j.engines.filter((e) => e.verdict.verdict === 'unknown');
  const reasons = [...new Set(undetermined.map((e) => e.verdict.reason))].join(', ');
  const [worst] = j.problems;
  // A console shows only this line: the codes of the others are on it too.
  const others = [...new Set(j.problems.slice(1).map((l) => l.f.code))];
  const more =
    j.problems.length > 1
      ? ` (+${j.problems.length - 1} more: ${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''})`
      : '';
  let summary: string;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const on = `on ${count(units, 'unit')}`;
  if (worst) summary = `${worst.f.code} ${worst.f.text}`;
  else if (undetermined.length > 0)
    summary = `${count(j.engines.length - undetermined.length, 'engine')} ${on} healthy, ${undetermined.length} not yet determined (${reasons})`;
  else summary = `${count(j.engines.length, 'engine')} ${on} healthy`;
  const head = `HFI1-SDMA ${status} - ${subject(backend)}`;
  const first = `${head}${cut(summary, FIRST_LINE_MAX - head.length - more.length)}${more}`;
  // The state's notes come before the findings' notes: they say why this run may see less than the last.
  const body = [
    ...j.problems.map((l) => `${l.level}: ${l.f.code} ${l.f.text}${l.f.action ? `; ${l.f.action}` : ''}`),
    ...extraNotes,
    ...j.notes.map((l) => `${l.f.code} ${l.f.text}`),
  ];
  const perf = ` | ${j.perf}`;
  const bytes = (s: string) => Buffer.byteLength(s);
  let budget = maxBytes > 0 ? maxBytes - bytes(first) - bytes(perf) - 2 : Number.POSITIVE_INFINITY;
  const kept: string[] = [];
  for (let i = 0; i < body.length; i++) {
    const line = body[i] as string;
    const left = body.length - i - 1;
    const tail = left > 0 ? `(${left} more line${left > 1 ? 's' : ''}: health --json shows them all)` : '';
    if (bytes(line) + 1 + (left > 0 ? bytes(tail) + 1 : 0) > budget) {
      const dropped = body.length - i;
      kept.push(`(${dropped} more line${dropped > 1 ? 's' : ''}: health --json shows them all)`);
      break;
    }
    kept.push(line);
    budget -= bytes(line) + 1;
  }
  if (kept.length === 0) return `${first}${perf}\n`;
  return `${first}\n${kept.join('\n')}${perf}\n`;
}

/** The UNKNOWN answer: one line, exit 3. */
function unknown(ctx: CliContext, what: string, backend?: Backend, form: Form = formOf(ctx, false)): number {
  const who = backend ? subject(backend) : ctx.global.backend === 'emu' ? 'emulator: ' : '';
  if (form === 'json')
    ctx.io.stdout(
      `${JSON.stringify(stamped(documentStamp(backend ?? null, ctx), { status: 'UNKNOWN', code: NAGIOS.UNKNOWN, summary: `${who}${what}`, findings: [] }))}\n`,
    );
  else if (form === 'brief') ctx.io.stdout(`UNKNOWN ${cut(what.replace(/\s+/g, ' '), FIRST_LINE_MAX - 8)}${briefTag(backend)}\n`);
  else
    ctx.io.stdout(
      `HFI1-SDMA UNKNOWN - ${who}${cut(what, FIRST_LINE_MAX - 20 - who.length)}${what.length > FIRST_LINE_MAX - 20 - who.length ? `\n${what}` : ''}\n`,
    );
  return NAGIOS.UNKNOWN;
}

/**
 * A unit's files vanished during the check (the device fell off the bus, or its driver was unloaded):
 * the gone finding (CRITICAL by default), not UNKNOWN. No perfdata: how many engines went is not known.
 */
function wentAway(
  ctx: CliContext,
  message: string,
  backend: Backend,
  warning: Thresholds,
  critical: Thresholds,
  form: Form,
): number {
  const level = levelOf('gone', 1, warning, critical);
  const text = `a unit went away during the check (the device fell off the bus or its driver was unloaded): ${message}`;
  if (form === 'json')
    ctx.io.stdout(
      `${JSON.stringify(stamped(documentStamp(backend, ctx), { status: level, code: NAGIOS[level], summary: text, findings: [] }))}\n`,
    );
  else if (form === 'brief') ctx.io.stdout(`${level} SD301 ${BRIEF_WORDS.gone}${briefTag(backend)}\n`);
  else ctx.io.stdout(`HFI1-SDMA ${level} - ${subject(backend)}${cut(text, 150)}\n${level}: ${text}\n`);
  return NAGIOS[level];
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
        describe: `a waiter asleep on a running, empty, quiet engine this long (and 3 samples) is stranded; at most 2 × --stall-ms (default ${DEFAULT_STRAND_MS}, or 2 × --stall-ms when that is shorter)`,
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
      .option('state', {
        type: 'string',
        describe:
          'carry the observation between runs in FILE (none: do not); default /run/hfi1-sdma/health.state as root, $XDG_RUNTIME_DIR/hfi1-sdma/ or /tmp/hfi1-sdma-UID/ otherwise',
      })
      .option('max-bytes', {
        type: 'string',
        default: '1024',
        describe: 'the most the text output may be (0: no limit); NRPE takes 1024',
      })
      .option('brief', {
        type: 'boolean',
        describe:
          'one line per problem, code and place first, no numbers (CRITICAL SD201 hfi1_0 sdma5 stranded), OK when healthy: the same bytes on every healthy host, for clush -b and dshbak -c',
      })
      .option('off-host', {
        type: 'string',
        describe:
          'the highest level of a finding whose cause lies off this host (SD109: the fabric withholds credits): critical (default), warning or ok',
      })
      .epilogue(
        `Counts: ${COUNTS.join(', ')} (engines; units for gone, unreadable and noport; ports for linkdown; waiters for stranded and probable; episodes for psmstall). Watches for 2 × --stall-ms (five samples, --stall-ms/2 apart, and more --strand-ms/2 apart while a waiter's verdict is being confirmed: a PSM writer's stall lasts at most 1 s), carrying what it saw to the next run (--state), so that a stall or a strand seen across runs is confirmed and its age spans them. A sender stranded on a running, empty, quiet engine (a lost wake-up) is CRITICAL once certain; a probable one is WARNING after 30 s. A full ring is healthy unless you set -w full=N: a saturated link fills rings. A snapshot is replayed instant by instant; one of a single instant is UNKNOWN, and so are engines that cannot be judged (no sdes or BAR here) when nothing worse is found. Any usage error is UNKNOWN (3).`,
      ),
  async run(args, ctx) {
    let stallMs: number;
    let strandMs: number;
    let timeoutMs: number;
    let maxBytes: number;
    let warning: Thresholds;
    let critical: Thresholds;
    let offHost: Level;
    const brief = args.brief === true;
    const form = formOf(ctx, brief);
    if (brief && ctx.global.json)
      return unknown(ctx, '--brief and --json are two forms of the answer: give one', undefined, 'json');
    try {
      stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 3_600_000);
      // Unset, the strand window fits the observation: a short --stall-ms alone is not refused over a default.
      strandMs = args.strandMs === undefined ? fittedStrandMs(stallMs) : strandMsArg(args.strandMs);
      timeoutMs = parseIntArg('--timeout', args.timeout, 1, 86_400) * 1000;
      maxBytes = parseIntArg('--max-bytes', args.maxBytes, 0, 1 << 30);
      warning = parseThresholds('--warning', args.warning, DEFAULT_WARNING);
      critical = parseThresholds('--critical', args.critical, DEFAULT_CRITICAL);
      offHost = offHostArg(args.offHost);
      // Refused before anything is read: an empty --state, or one inside the tree read.
      checkStateOption(
        args.state === undefined ? undefined : String(args.state),
        ctx.global.backend === 'emu' ? [] : [sysrootOf(ctx.global)],
      );
    } catch (e) {
      return unknown(ctx, (e as Error).message, undefined, form);
    }
    if (maxBytes > 0 && maxBytes < 256)
      return unknown(
        ctx,
        `--max-bytes ${maxBytes} is too small for a status line and its perfdata: give 256 or more, or 0`,
        undefined,
        form,
      );
    if (strandMs > observationMs(stallMs)) {
      return unknown(
        ctx,
        `--strand-ms ${strandMs} is longer than the ${observationMs(stallMs)} ms observation that --stall-ms ${stallMs} gives: lower --strand-ms or raise --stall-ms`,
        undefined,
        form,
      );
    }
    // The plugin's own start-up counts against the caller's timeout: answer a little before it.
    const deadlineMs = timeoutMs - Math.min(1000, timeoutMs / 10);
    if (observationMs(stallMs) >= deadlineMs) {
      return unknown(
        ctx,
        `--stall-ms ${stallMs} needs ${observationMs(stallMs)} ms of observation, too close to --timeout ${timeoutMs / 1000} s: lower --stall-ms or raise --timeout`,
        undefined,
        form,
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
        const { use, tracks } = await openState(backend, ctx, args.state);
        const monitor = commandMonitor(backend, ctx, { stallMs, strandMs }, tracks);
        const { round, stopped } = await observe(monitor, { stallMs, strandMs, sleep: ctx.io.sleep, signal: stop.signal });
        if (stopped) throw new Stopped();
        const extra: string[] = [];
        if (use?.note) extra.push(use.note);
        if (use && !monitor.frozen) {
          const note = await saveState(use.path, use.key, monitor.state(), Date.now(), {
            uid: process.getuid?.() ?? 0,
            createDir: use.createDir,
          });
          if (note) extra.push(note);
        }
        if (monitor.frozen) {
          return unknown(ctx, FROZEN, backend, form);
        }
        const j = judge(round, warning, critical, offHost);
        const status = j.status;
        const instants = backend.recording?.timesMs.length ?? Number.POSITIVE_INFINITY;
        if (status === 'OK' && instants < STRAND_SAMPLES) {
          // Nothing found in two instants is not "OK": a stall and a strand each need a third sample.
          return unknown(ctx, tooFewInstants(instants), backend, form);
        }
        if (timedOut) return NAGIOS[status];
        if (form === 'json') {
          ctx.io.stdout(`${JSON.stringify(stamped(documentStamp(backend, ctx), healthJson(round, j, status, use, extra)))}\n`);
        } else if (form === 'brief') {
          ctx.io.stdout(briefText(backend, j, status));
        } else {
          ctx.io.stdout(nagiosText(backend, round, j, status, extra, maxBytes));
        }
        return NAGIOS[status];
      } catch (e) {
        if (e instanceof Stopped) return unknown(ctx, 'interrupted before the observation completed', backend, form);
        if (isHfi1SdmaError(e) && e.code === 'E_DEVICE_GONE') return wentAway(ctx, e.message, backend, warning, critical, form);
        throw e;
      }
    }).catch((e: unknown) => unknown(ctx, isHfi1SdmaError(e) ? e.message : String(e), undefined, form));
    try {
      const first = await Promise.race([check, deadline]);
      if (first !== 'timeout') return first;
      timedOut = true;
      stop.dispose();
      const code = unknown(
        ctx,
        `no answer within --timeout ${timeoutMs / 1000} s (a source did not answer in time)`,
        undefined,
        form,
      );
      // The stuck read cannot be cancelled: end the process rather than overrun.
      ctx.io.exit?.(code);
      return code;
    } finally {
      clearTimeout(timer);
      stop.dispose();
    }
  },
};

/** `--off-host`: critical (the default), warning or ok. */
function offHostArg(raw: unknown): Level {
  if (raw === undefined) return 'CRITICAL';
  const v = String(raw).toUpperCase();
  if (v === 'CRITICAL' || v === 'WARNING' || v === 'OK') return v;
  throw new Error(`--off-host takes critical, warning or ok, got ${JSON.stringify(String(raw))}`);
}

/** health --brief: OK, or one line per problem (code and place first, no numbers), worst first. */
function briefText(backend: Backend, j: ReturnType<typeof judge>, status: Level): string {
  const lines = j.problems.length === 0 ? [status] : briefLines(j.problems.map((l) => ({ ...l.f, level: l.level })));
  lines[0] = `${lines[0]}${briefTag(backend)}`;
  return `${lines.join('\n')}\n`;
}

/**
 * What `health --brief` answers over a backend with the default thresholds (fleet judges each capture with it):
 * the status and the brief lines, the first one tagged when the numbers are not this host's adapter.
 */
export async function briefAnswer(
  backend: Backend,
  ctx: CliContext,
  o: { stallMs?: number; offHost?: Level } = {},
): Promise<{ status: Level; lines: string[] }> {
  const stallMs = o.stallMs ?? 1000;
  const unknownLine = (what: string) => ({ status: 'UNKNOWN' as const, lines: [`UNKNOWN ${what}${briefTag(backend)}`] });
  const strandMs = fittedStrandMs(stallMs);
  const monitor = commandMonitor(backend, ctx, { stallMs, strandMs });
  if (monitor.frozen) return unknownLine(FROZEN);
  const stop = watchForStop();
  try {
    const { round, stopped } = await observe(monitor, { stallMs, strandMs, sleep: ctx.io.sleep, signal: stop.signal });
    if (stopped) throw new Stopped();
    const j = judge(round, DEFAULT_WARNING, DEFAULT_CRITICAL, o.offHost ?? 'CRITICAL');
    const instants = backend.recording?.timesMs.length ?? Number.POSITIVE_INFINITY;
    if (j.status === 'OK' && instants < STRAND_SAMPLES) return unknownLine(tooFewInstants(instants));
    return { status: j.status, lines: briefText(backend, j, j.status).trimEnd().split('\n') };
  } finally {
    stop.dispose();
  }
}

/** health --json: the status, every finding with its level, the counts and thresholds, where the numbers come from. */
function healthJson(round: Round, j: ReturnType<typeof judge>, status: Level, use: StateUse | null, notes: readonly string[]) {
  // `level` is the line's Nagios status under the thresholds; `severity` the finding's own, as every other path says it.
  const line = (l: Line) => ({
    level: l.level,
    severity: l.f.severity,
    code: l.f.code,
    kind: l.f.kind,
    count: l.f.count,
    unit: l.f.unit,
    engine: l.f.engine,
    port: l.f.port,
    text: l.f.text,
    action: l.f.action,
    ageMs: l.f.ageMs,
    ageAtLeast: l.f.ageAtLeast,
  });
  return {
    status,
    code: NAGIOS[status],
    provenance: provenanceJson(round.provenance),
    engines: j.engines.length,
    counts: j.counts,
    findings: [...j.problems, ...j.notes].map(line),
    state: use ? { path: use.path, notes } : null,
  };
}

function thresholdText(t: Thresholds): string {
  return Object.entries(t)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
