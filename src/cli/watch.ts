// `watch`: sample every interval and classify each engine. On a TTY a screen redrawn in place;
// otherwise (or with --json) one NDJSON line per engine per sample. Memory stays bounded: only
// the previous sample of each engine is kept.
import type { Argv } from 'yargs';
import type { EngineSample, Unit } from '../backend.js';
import type { Classification } from '../progress/classify.js';
import { freeCount, inFlight } from '../progress/ring.js';
import { parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { engineJson, errorHistoryJson } from './engine-json.js';
import { table } from './format.js';
import type { Paint } from './io.js';
import { goneStatus, Observer, WarningSayer } from './observe.js';
import { nextInstant, watchForStop } from './pace.js';
import { selectedUnits, withBackend } from './units.js';

/** One NDJSON line of `watch --json` (docs/json.md): EngineJson plus the verdict fields. */
export function watchLine(s: EngineSample, descqCnt: number, c: Classification, t: number) {
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
  };
}

/** A bar of `width` cells showing fill in [0, 1]. */
export function bar(fill: number, width: number): string {
  const n = Math.max(0, Math.min(width, Math.round(fill * width)));
  return `${'#'.repeat(n)}${'.'.repeat(width - n)}`;
}

function rate(v: number | null): string {
  if (v === null) return '-';
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)}M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  return String(Math.round(v));
}

/** Colour a verdict for the screen. */
export function verdictCell(c: Classification, paint: Paint): string {
  const text = c.reason === 'moving' || c.reason === 'empty' ? c.verdict : `${c.verdict} (${c.reason})`;
  switch (c.verdict) {
    case 'stalled':
    case 'halted':
    case 'gone':
      return paint(['bold', 'red'], text.toUpperCase());
    case 'backpressure':
      return paint('yellow', text);
    case 'unknown':
      return paint('dim', text);
    case 'progressing':
      return paint('green', text);
    default:
      return text;
  }
}

/** The screen for one round of samples. */
export function renderScreen(rows: { unit: Unit; s: EngineSample; c: Classification }[], header: string, paint: Paint): string {
  const body = rows.map(({ unit, s, c }) => {
    const w = s.sw;
    const cnt = unit.info.descqCnt;
    const inflight = w ? inFlight(w.descqHead, w.descqTail) : null;
    return [
      `${unit.info.name}/${s.engine}`,
      s.gone ? paint('red', 'GONE') : (s.state ?? '-'),
      w ? String(w.swHead) : '-',
      s.csr && !s.gone ? String(s.csr.hwHead) : '-',
      w ? String(w.swTail) : '-',
      inflight === null ? '-' : String(inflight),
      inflight === null ? '' : bar(inflight / (cnt - 1), 16),
      w ? String(freeCount(cnt, w.descqHead, w.descqTail)) : '-',
      rate(c.descPerSec),
      rate(c.txPerSec),
      String(c.stallCount),
      c.errCount === null ? '-' : c.errCountRise > 0 ? paint('yellow', `${c.errCount} (+${c.errCountRise})`) : String(c.errCount),
      verdictCell(c, paint),
    ];
  });
  const header2 = [
    'engine',
    'state',
    'H(SW)',
    'H(HW)',
    'T(SW)',
    'inflight',
    'ring',
    'free',
    'desc/s',
    'tx/s',
    'stalls',
    'errs',
    'verdict',
  ];
  return `${header}\n${table(header2, body, new Set([2, 3, 4, 5, 7, 8, 9, 10, 11]))}`;
}

export const watchCommand: CommandSpec = {
  command: 'watch',
  describe: 'live view: heads, in-flight bar, rates and a verdict per engine (NDJSON with --json)',
  builder: (y: Argv) =>
    y
      .option('interval-ms', { type: 'string', default: '1000', describe: 'time between samples' })
      .option('count', { type: 'string', describe: 'stop after this many samples (default: until interrupted)' })
      .option('stall-ms', { type: 'string', default: '1000', describe: 'no head movement this long while in flight is a stall' })
      .example('$0 watch', 'a screen redrawn every second')
      .example('$0 watch --json --count 10 | jq .verdict', 'NDJSON for scripts')
      .example('$0 --sysroot node17.tar.gz watch', 'replay a recorded snapshot in its own time, to its end'),
  async run(args, ctx: CliContext) {
    const intervalMs = parseIntArg('--interval-ms', args.intervalMs, 10, 3_600_000);
    const count =
      args.count === undefined ? Number.POSITIVE_INFINITY : parseIntArg('--count', args.count, 1, Number.MAX_SAFE_INTEGER);
    const stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 86_400_000);
    const screen = ctx.io.isTTY && !ctx.global.json;
    return withBackend(ctx, async (backend) => {
      const units = await selectedUnits(backend, ctx.global.unit);
      const observer = new Observer(backend, units, { stallMs });
      const warnings = new WarningSayer(ctx.io);
      const stop = watchForStop();
      const rec = backend.recording;
      const source = rec ? `recording ${rec.source} (${rec.timesMs.length} instants)` : `backend ${backend.kind}`;
      let t0: number | null = null;
      try {
        for (let i = 0; i < count; i++) {
          if (i > 0 && !(await nextInstant(backend, ctx.io, intervalMs, stop))) break;
          const rows = await observer.round();
          warnings.say(units);
          const first = rows[0];
          if (t0 === null && first) t0 = first.s.timeMs;
          if (screen) {
            const at = rec ? `instant ${rec.position() + 1}/${rec.timesMs.length}` : `sample ${i + 1}  every ${intervalMs} ms`;
            const header = `hfi1-sdma watch  ${source}  ${at}  stall ≥ ${stallMs} ms  (Ctrl-C to stop)`;
            ctx.io.stdout(`\x1b[H\x1b[2J${renderScreen(rows, header, ctx.paint)}`);
          } else {
            let out = '';
            for (const { unit, s, c } of rows)
              out += `${JSON.stringify(watchLine(s, unit.info.descqCnt, c, s.timeMs - (t0 ?? s.timeMs)))}\n`;
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
