// `watch`: a round of the monitor every interval. On a TTY a screen redrawn in place that fits the terminal
// (the sickest engines first when they do not all fit, a summary of the worst findings on top); otherwise (or
// with --json) one NDJSON line per engine per round. Memory stays bounded: the monitor keeps only each
// engine's previous sample.
import type { Argv } from 'yargs';
import type { UnitInfo } from '../backend.js';
import { usageError } from '../errors.js';
import type { Finding } from '../monitor/findings.js';
import { rounds } from '../monitor/monitor.js';
import type { EngineRound, Round, UnitRound } from '../monitor/round.js';
import { parseIntArg } from './args.js';
import { sysrootOf } from './backend-select.js';
import { captureOptions, openCaptures } from './capture.js';
import type { CliContext, CommandSpec } from './context.js';
import { engineJson, errorHistoryJson, verdictJson } from './engine-json.js';
import type { Paint } from './io.js';
import { mainPort, portsHeader } from './link.js';
import { commandMonitor, provenanceText, roundStatus, sayWarnings } from './observe.js';
import { watchForStop } from './pace.js';
import { causeJson, portRates } from './port-view.js';
import { type DocumentStamp, documentStamp, stamped } from './stamp.js';
import { withBackend } from './units.js';
import { strandMsArg, waitCell, waiterFields } from './waiters-observe.js';
import { fitLine, fitWords, rowsThatFit, ScreenPainter, type ScreenRow, sickRow, tableLines } from './watch-screen.js';
import { openWatchTrace } from './watch-trace.js';

export { bar, verdictCell } from './watch-screen.js';

/** One NDJSON line of `watch --json` (docs/json.md): EngineJson plus the verdict and waiter fields. */
export function watchLine(e: EngineRound, info: Pick<UnitInfo, 'name' | 'descqCnt'>, t: number, linkState: string | null = null) {
  const s = e.sample;
  return {
    t,
    ...engineJson(s, info),
    ...verdictJson(s, e.verdict),
    ...errorHistoryJson(e.verdict),
    cause: causeJson(e.cause),
    linkState,
    ...waiterFields(e),
  };
}

/** Time of day as the screen shows it: `HH:MM:SS` (local time). */
export function clockTime(epochMs: number): string {
  const d = new Date(epochMs);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** From this width on the screen is wide: the ports' lines carry their counters' rates. */
export const WIDE_COLUMNS = 120;

/** The summary under the time line: the worst findings (warning or worse), at most two, and how many more. */
export function summaryLines(findings: readonly Finding[], paint: Paint): string[] {
  const bad = findings.filter((f) => f.severity === 'critical' || f.severity === 'warning');
  const lines = bad.slice(0, 2).map((f) => {
    const label = f.severity === 'critical' ? paint(['bold', 'red'], 'CRITICAL') : paint('yellow', 'WARNING');
    return `${label} ${f.code} ${f.text}`;
  });
  if (bad.length > 2)
    lines.push(`+${bad.length - 2} more finding${bad.length > 3 ? 's' : ''} ('hfi1-sdma health' lists them all)`);
  return lines;
}

/** The screen rows of a round. */
function screenRows(round: Round): ScreenRow[] {
  return round.units.flatMap((u) =>
    u.engines.map((e) => ({
      unit: u,
      s: e.sample,
      c: e.verdict,
      wait: waitCell(e),
      stranded: e.waiters?.stranded ?? 0,
      probable: e.waiters?.probable ?? 0,
    })),
  );
}

/**
 * The lines of one screen that fit `width` × `height`. The title, the time line and the column header always;
 * then, by need: the sick engines (stranded, stalled, halted, gone, probably stranded), the worst finding, the
 * ports, the other findings, the other engines; a last line says how many engines did not fit.
 */
export function screenLines(
  round: Round,
  title: string,
  timeLine: string,
  paint: Paint,
  width: number,
  height: number,
  notes: readonly string[] = [],
  rates: ReadonlyMap<string, string> = new Map(),
): string[] {
  const ports: string[] = notes.map((n) => paint('cyan', n));
  for (const u of round.units) {
    const l = portsHeader(u.ports);
    // The wide layout adds each port's XmitWait and data rates (since the previous round).
    const r = width >= WIDE_COLUMNS ? rates.get(u.info.name) : undefined;
    const line = l && r ? `${l}  ${r}` : l || r || '';
    if (line) ports.push(`${u.info.name} ${u.ports.some((p) => p.state === 'ACTIVE') ? line : paint('yellow', line)}`);
    if (u.status === 'failed') ports.push(paint('yellow', `${u.info.name} not read: ${u.problem ?? 'unknown error'}`));
  }
  const summary = summaryLines(round.findings, paint);
  const all = screenRows(round);
  // Title, time line, column header, and the line under the frame where the cursor rests.
  let left = Math.max(1, height - 4);
  const sick = all.filter((r) => sickRow(r)).length;
  let rowRoom = Math.min(all.length, Math.max(1, Math.min(left, sick + (sick < all.length ? 1 : 0))));
  left -= rowRoom;
  const take = (lines: readonly string[], max: number) => {
    const n = Math.max(0, Math.min(lines.length, left, max));
    left -= n;
    return lines.slice(0, n);
  };
  const worst = take(summary, 1);
  const shownPorts = take(ports, ports.length);
  const rest = take(summary.slice(1), summary.length);
  const extra = Math.min(all.length - rowRoom, left);
  rowRoom += extra;
  const { rows, more } = rowsThatFit(all, rowRoom);
  const summaryFit = (l: string) => fitWords(l, width);
  const lines = [
    fitWords(title, width),
    ...shownPorts,
    timeLine,
    ...worst.map(summaryFit),
    ...rest.map(summaryFit),
    ...tableLines(rows, paint, width),
  ];
  if (more) lines.push(more);
  return lines.map((l) => fitLine(l, width));
}

/** The title of the screen: what is watched, how often, the stall window. */
function titleOf(round: Round, intervalMs: number, stallMs: number): string {
  const p = round.provenance;
  const rec = p.backend === 'snapshot';
  return `hfi1-sdma watch  ${provenanceText(p)}  ${rec ? 'instant by instant' : `every ${intervalMs} ms`}  stall ≥ ${stallMs} ms  Ctrl-C stops`;
}

/** The time line: wall time live, virtual time on the emulator, the recorded time on a recording. */
function timeLineOf(
  round: Round,
  n: number,
  wallNowMs: number,
  rec: { position(): number; timesMs: readonly number[] } | undefined,
): string {
  const p = round.provenance;
  if (rec) {
    const at = rec.timesMs[rec.position()] ?? 0;
    const when = p.capturedAtMs === null ? '' : `recorded ${clockTime(p.capturedAtMs + at)}  `;
    return `${when}instant ${rec.position() + 1}/${rec.timesMs.length} (+${at} ms)`;
  }
  if (p.backend === 'emu') return `${clockTime(wallNowMs)}  virtual ${round.timeMs.toFixed(0)} ms  sample ${n}`;
  return `${clockTime(wallNowMs)}  sample ${n}`;
}

export const watchCommand: CommandSpec = {
  command: 'watch',
  describe: 'live view: a verdict per engine, rates, how long a head is stuck, the link; fits the terminal (NDJSON with --json)',
  builder: (y: Argv) =>
    captureOptions(y)
      .option('interval-ms', { type: 'string', default: '1000', describe: 'time between samples' })
      .option('count', { type: 'string', describe: 'stop after this many samples (default: until interrupted)' })
      .option('stall-ms', { type: 'string', default: '1000', describe: 'no head movement this long while in flight is a stall' })
      .option('strand-ms', {
        type: 'string',
        default: '200',
        describe: 'a waiter asleep on a running, empty, quiet engine this long (and 3 samples) is stranded',
      })
      .option('trace', {
        type: 'string',
        describe:
          'also write the rounds as a timeline to FILE.json (Chrome trace-event JSON: Perfetto), complete when watch ends',
      })
      .example('$0 watch', 'a screen redrawn every second')
      .example('$0 watch --json --count 10 | jq .verdict', 'NDJSON for scripts')
      .example('$0 --sysroot node17.tar.gz watch', 'replay a recorded snapshot in its own time, to its end')
      .example('sudo $0 watch --capture-dir /var/tmp/hfi1-sdma', 'and keep a snapshot of the first stall, halt or strand')
      .example('$0 watch --count 60 --trace node17.json', 'a minute as a timeline to open in Perfetto'),
  async run(args, ctx: CliContext) {
    const intervalMs = parseIntArg('--interval-ms', args.intervalMs, 10, 3_600_000);
    const count =
      args.count === undefined ? Number.POSITIVE_INFINITY : parseIntArg('--count', args.count, 1, Number.MAX_SAFE_INTEGER);
    const stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 86_400_000);
    const strandMs = strandMsArg(args.strandMs);
    const screen = ctx.io.isTTY && !ctx.global.json;
    const traceTarget = args.trace === undefined ? undefined : String(args.trace);
    if (traceTarget !== undefined && !/\.json$/i.test(traceTarget))
      throw usageError(`--trace must name a .json file (Chrome trace-event JSON), got ${JSON.stringify(traceTarget)}`);
    return withBackend(ctx, async (backend) => {
      // An open-ended watch of the emulator is a live view: its time follows the wall clock, as a host's would.
      if (count === Number.POSITIVE_INFINITY && 'pace' in backend) (backend as { pace: string }).pace = 'wall';
      const trace =
        traceTarget === undefined
          ? null
          : await openWatchTrace(traceTarget, documentStamp(backend, ctx), [sysrootOf(ctx.global)]);
      const monitor = commandMonitor(backend, ctx, { stallMs, strandMs });
      // On the screen a capture's line is shown in the frame (stderr would tear it) and said again at the end.
      const captureLines: string[] = [];
      let last: Round | null = null;
      const captures = openCaptures(args, ctx, backend, (line) => {
        captureLines.push(line);
        if (!screen) ctx.io.stderr(`hfi1-sdma watch: ${line}\n`);
        if (last) trace?.capture(last, line);
      });
      const stop = watchForStop();
      const painter = new ScreenPainter(ctx.io.stdout);
      const wallNow = ctx.io.nowMs ?? (() => Date.now());
      let t0: number | null = null;
      let prev: Round | null = null;
      let n = 0;
      const said = new Set<string>();
      try {
        for await (const round of rounds(monitor, { intervalMs, count, signal: stop.signal, sleep: ctx.io.sleep })) {
          last = round;
          n += 1;
          trace?.add(round);
          sayWarnings(ctx.io, round, said);
          captures?.observe(round);
          t0 ??= round.units.flatMap((u) => u.engines)[0]?.sample.timeMs ?? null;
          if (screen) {
            // A terminal that reports no size (0 under some pseudo-terminals) gets 80 × 24.
            const width = ctx.io.columns ? Math.max(40, ctx.io.columns) : 80;
            const height = ctx.io.rows ? Math.max(4, ctx.io.rows) : 24;
            const lines = screenLines(
              round,
              titleOf(round, intervalMs, stallMs),
              timeLineOf(round, n, wallNow(), backend.recording),
              ctx.paint,
              width,
              height,
              captureLines.slice(-1),
              portRates(prev, round),
            );
            painter.frame(lines, width, height);
          } else {
            ctx.io.stdout(ndjson(round, t0, documentStamp(backend, ctx), backend.kind === 'emu' ? wallNow() : round.timeMs));
          }
          prev = round;
          // A gone device does not come back: say so and end.
          if (round.units.some((u) => u.status === 'gone') || round.vanished.length > 0) break;
        }
      } finally {
        // A capture under way finishes with instants of its own (abandoned, nothing kept, when stopped).
        await captures?.finish(stop.signal.aborted);
        stop.dispose();
        if (screen) for (const line of captureLines) ctx.io.stderr(`hfi1-sdma watch: ${line}\n`);
        if (trace) {
          const events = await trace.close(last);
          ctx.io.stderr(`hfi1-sdma watch: wrote ${trace.target} (${events} trace events, ${n} round${n === 1 ? '' : 's'})\n`);
        }
      }
      return last ? roundStatus(ctx.io, last) : 0;
    });
  },
};

/** The NDJSON lines of a round: one per engine, each stamped with the host and the round's time (epoch ms). */
function ndjson(round: Round, t0: number | null, stamp: DocumentStamp, atMs: number): string {
  let out = '';
  const at = { ...stamp, time: new Date(atMs).toISOString() };
  for (const u of round.units as UnitRound[]) {
    const linkState = mainPort(u.ports)?.state ?? null;
    for (const e of u.engines)
      out += `${JSON.stringify(stamped(at, watchLine(e, u.info, e.sample.timeMs - (t0 ?? e.sample.timeMs), linkState)))}\n`;
  }
  return out;
}
