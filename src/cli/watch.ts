// `watch`: sample every interval and classify each engine. On a TTY a screen redrawn in place;
// otherwise (or with --json) one NDJSON line per engine per sample. Memory stays bounded: only
// the previous sample of each engine is kept.
import type { Argv } from 'yargs';
import type { EngineSample, LinkState, Unit } from '../backend.js';
import type { Classification } from '../progress/classify.js';
import { parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { engineJson, errorHistoryJson } from './engine-json.js';
import type { Paint } from './io.js';
import { linkActive, linkHeader, readLink } from './link.js';
import { goneStatus, Observer, WarningSayer } from './observe.js';
import { isFrozenCapture, nextInstant, watchForStop } from './pace.js';
import { selectedUnits, withBackend } from './units.js';
import { strandMsArg, WaiterObserver, waitCell, waitCounts, waiterFields, waitKey } from './waiters-observe.js';
import { fitLine, ScreenPainter, type ScreenRow, tableLines } from './watch-screen.js';

export { bar, verdictCell } from './watch-screen.js';

/** One NDJSON line of `watch --json` (docs/json.md): EngineJson plus the verdict fields. */
export function watchLine(s: EngineSample, descqCnt: number, c: Classification, t: number, linkState: string | null = null) {
  return {
    t,
    ...engineJson(s, descqCnt),
    verdict: c.verdict,
    reason: c.reason,
    descPerSec: c.descPerSec === null ? null : Math.round(c.descPerSec),
    txPerSec: c.txPerSec === null ? null : Math.round(c.txPerSec),
    stallCount: c.stallCount,
    stallMaxMs: c.stallMaxMs,
    stuckSinceMs: c.stuckSinceMs,
    orphanedWork: c.orphanedWork,
    ...errorHistoryJson(c),
    linkState,
  };
}

/** Wall-clock time of day as the screen shows it: `HH:MM:SS` (local time). */
export function clockTime(epochMs: number): string {
  const d = new Date(epochMs);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** The lines of one screen: a title, one line per unit with a known link, the time line, the table. */
export function screenLines(
  rows: readonly ScreenRow[],
  links: ReadonlyMap<Unit, LinkState | null>,
  title: string,
  timeLine: string,
  paint: Paint,
  width: number,
): string[] {
  const lines = [title];
  for (const [unit, link] of links) {
    const l = linkHeader(link);
    if (l) lines.push(`${unit.info.name} ${linkActive(link) ? l : paint('yellow', l)}`);
  }
  lines.push(timeLine, ...tableLines(rows, paint, width));
  return lines.map((l) => fitLine(l, width));
}

export const watchCommand: CommandSpec = {
  command: 'watch',
  describe: 'live view: a verdict per engine, rates, how long a head is stuck, the link; fits the terminal (NDJSON with --json)',
  builder: (y: Argv) =>
    y
      .option('interval-ms', { type: 'string', default: '1000', describe: 'time between samples' })
      .option('count', { type: 'string', describe: 'stop after this many samples (default: until interrupted)' })
      .option('stall-ms', { type: 'string', default: '1000', describe: 'no head movement this long while in flight is a stall' })
      .option('strand-ms', {
        type: 'string',
        default: '200',
        describe: 'a waiter asleep on a running, empty, quiet engine this long (and 3 samples) is stranded',
      })
      .example('$0 watch', 'a screen redrawn every second')
      .example('$0 watch --json --count 10 | jq .verdict', 'NDJSON for scripts')
      .example('$0 --sysroot node17.tar.gz watch', 'replay a recorded snapshot in its own time, to its end'),
  async run(args, ctx: CliContext) {
    const intervalMs = parseIntArg('--interval-ms', args.intervalMs, 10, 3_600_000);
    const count =
      args.count === undefined ? Number.POSITIVE_INFINITY : parseIntArg('--count', args.count, 1, Number.MAX_SAFE_INTEGER);
    const stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 86_400_000);
    const strandMs = strandMsArg(args.strandMs);
    const screen = ctx.io.isTTY && !ctx.global.json;
    return withBackend(ctx, async (backend) => {
      const units = await selectedUnits(backend, ctx.global.unit);
      const observer = new Observer(backend, units, { stallMs });
      const waiters = new WaiterObserver({ strandMs, frozen: isFrozenCapture(backend) });
      const warnings = new WarningSayer(ctx.io);
      const stop = watchForStop();
      const rec = backend.recording;
      const source = rec ? `recording ${rec.source} (${rec.timesMs.length} instants)` : `backend ${backend.kind}`;
      const painter = new ScreenPainter(ctx.io.stdout);
      const wallNow = ctx.io.nowMs ?? (() => Date.now());
      let t0: number | null = null;
      try {
        for (let i = 0; i < count; i++) {
          if (i > 0 && !(await nextInstant(backend, ctx.io, intervalMs, stop))) break;
          const engineRows = await observer.round();
          const uws = await waiters.round(units, engineRows);
          const counts = waitCounts(uws);
          const rows: ScreenRow[] = engineRows.map((r) => ({
            ...r,
            wait: waitCell(
              uws.find((u) => u.unit === r.unit),
              counts.get(waitKey(r.unit, r.s.engine)),
            ),
          }));
          const links = new Map<Unit, LinkState | null>();
          for (const unit of units) links.set(unit, await readLink(unit));
          warnings.say(units);
          const first = rows[0];
          if (t0 === null && first) t0 = first.s.timeMs;
          if (screen) {
            // A terminal that reports no width (0 under some pseudo-terminals) gets 80 columns.
            const width = ctx.io.columns ? Math.max(40, ctx.io.columns) : 80;
            const title = `hfi1-sdma watch  ${source}  every ${intervalMs} ms  stall ≥ ${stallMs} ms  Ctrl-C stops`;
            const at = rec
              ? `instant ${rec.position() + 1}/${rec.timesMs.length} (+${rec.timesMs[rec.position()] ?? 0} ms)`
              : backend.kind === 'emu' && first
                ? `virtual ${first.s.timeMs.toFixed(0)} ms  sample ${i + 1}`
                : `sample ${i + 1}`;
            const timeLine = `${clockTime(wallNow())}  ${at}`;
            painter.frame(screenLines(rows, links, title, timeLine, ctx.paint, width), width);
          } else {
            let out = '';
            for (const { unit, s, c } of rows) {
              const linkState = links.get(unit)?.state ?? null;
              const line = watchLine(s, unit.info.descqCnt, c, s.timeMs - (t0 ?? s.timeMs), linkState);
              const wf = waiterFields(
                uws.find((u) => u.unit === unit),
                counts,
                unit,
                s.engine,
              );
              out += `${JSON.stringify({ ...line, ...wf })}\n`;
            }
            ctx.io.stdout(out);
          }
          // A gone device does not come back: say so and end.
          if (rows.some((r) => r.s.gone)) return goneStatus(ctx.io, rows);
        }
        return 0;
      } finally {
        stop.dispose();
      }
    });
  },
};
