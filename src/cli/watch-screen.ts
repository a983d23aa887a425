// The `watch` screen on a terminal: a layout chosen from the width (every line fits), and a
// painter that rewrites only the lines that changed since the previous frame (a full redraw on
// the first frame and when the width changes).
import type { EngineSample, Unit } from '../backend.js';
import type { Classification } from '../progress/classify.js';
import { freeCount, inFlight } from '../progress/ring.js';
import { table, visibleLength } from './format.js';
import type { Paint } from './io.js';

/** One engine of a frame. */
export interface ScreenRow {
  unit: Pick<Unit, 'info'>;
  s: EngineSample;
  c: Classification;
  /** Waiters on the engine: the count, `!` after it when one is stranded, `-` when not listed (absent: `-`). */
  wait?: string;
  /** Waiters on it certainly and probably stranded (its verdict says so: an idle engine with a stranded waiter). */
  stranded?: number;
  probable?: number;
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

/** A duration as the screen shows it: `850ms`, `12.3s`, `4m05s`, `2h07m`. */
export function shortDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * How long the head has not moved with work in flight (the classifier's stuckSinceMs), `≥` before it when the
 * head stood still since the first sample (the stall began earlier), or `-`.
 */
export function stuckFor(s: EngineSample, c: Classification): string {
  if (c.stuckSinceMs === null) return '-';
  return `${c.stuckAtLeast ? '≥' : ''}${shortDuration(Math.max(0, s.timeMs - c.stuckSinceMs))}`;
}

/** Colour a verdict for the screen; an engine with a stranded waiter says so, whatever its own verdict. */
export function verdictCell(c: Classification, paint: Paint, strand: { stranded?: number; probable?: number } = {}): string {
  const n = strand.stranded ?? 0;
  const p = strand.probable ?? 0;
  if (n > 0) return paint(['bold', 'red'], `STRANDED (${n} WAITER${n > 1 ? 'S' : ''})`);
  if (p > 0 && c.verdict !== 'stalled' && c.verdict !== 'halted' && c.verdict !== 'gone') {
    return paint('yellow', `stranded? (${p} waiter${p > 1 ? 's' : ''})`);
  }
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

interface Column {
  head: string;
  right?: boolean;
  cell: (r: ScreenRow, paint: Paint) => string;
}

const inflightOf = (r: ScreenRow) => (r.s.sw ? inFlight(r.s.sw.descqHead, r.s.sw.descqTail) : null);

const COL = {
  engine: { head: 'engine', cell: (r) => `${r.unit.info.name}/${r.s.engine}` },
  state: { head: 'state', cell: (r, p) => (r.s.gone ? p('red', 'GONE') : (r.s.state ?? '-')) },
  // The state name without its sNN_ prefix (s99_Running is Running), for narrow terminals.
  shortState: { head: 'state', cell: (r, p) => (r.s.gone ? p('red', 'GONE') : (r.s.state ?? '-').replace(/^s\d+_/, '')) },
  swHead: { head: 'H(SW)', right: true, cell: (r) => (r.s.sw ? String(r.s.sw.swHead) : '-') },
  hwHead: { head: 'H(HW)', right: true, cell: (r) => (r.s.csr && !r.s.gone ? String(r.s.csr.hwHead) : '-') },
  swTail: { head: 'T(SW)', right: true, cell: (r) => (r.s.sw ? String(r.s.sw.swTail) : '-') },
  inflight: { head: 'inflight', right: true, cell: (r) => String(inflightOf(r) ?? '-') },
  ring16: { head: 'ring', cell: (r) => ringCell(r, 16) },
  ring8: { head: 'ring', cell: (r) => ringCell(r, 8) },
  free: {
    head: 'free',
    right: true,
    cell: (r) => (r.s.sw ? String(freeCount(r.unit.info.descqCnt, r.s.sw.descqHead, r.s.sw.descqTail)) : '-'),
  },
  descRate: { head: 'desc/s', right: true, cell: (r) => rate(r.c.descPerSec) },
  txRate: { head: 'tx/s', right: true, cell: (r) => rate(r.c.txPerSec) },
  stalls: { head: 'stalls', right: true, cell: (r) => String(r.c.stallCount) },
  stuck: { head: 'stuck', right: true, cell: (r) => stuckFor(r.s, r.c) },
  errs: {
    head: 'errs',
    right: true,
    cell: (r, p) =>
      r.c.errCount === null
        ? '-'
        : r.c.errCountRise > 0
          ? p('yellow', `${r.c.errCount} (+${r.c.errCountRise})`)
          : String(r.c.errCount),
  },
  wait: { head: 'wait', right: true, cell: (r, p) => (r.wait?.endsWith('!') ? p(['bold', 'red'], r.wait) : (r.wait ?? '-')) },
  verdict: { head: 'verdict', cell: (r, p) => verdictCell(r.c, p, r) },
} satisfies Record<string, Column>;

function ringCell(r: ScreenRow, width: number): string {
  const n = inflightOf(r);
  return n === null ? '' : bar(n / (r.unit.info.descqCnt - 1), width);
}

/** The layouts, widest first: the first whose lines fit the terminal is used (the verdict before the state when narrow). */
const LAYOUTS: readonly (readonly Column[])[] = [
  [
    COL.engine,
    COL.state,
    COL.swHead,
    COL.hwHead,
    COL.swTail,
    COL.inflight,
    COL.ring16,
    COL.free,
    COL.descRate,
    COL.txRate,
    COL.stalls,
    COL.stuck,
    COL.errs,
    COL.wait,
    COL.verdict,
  ],
  [
    COL.engine,
    COL.state,
    COL.swHead,
    COL.swTail,
    COL.inflight,
    COL.ring8,
    COL.free,
    COL.descRate,
    COL.stuck,
    COL.errs,
    COL.wait,
    COL.verdict,
  ],
  [COL.engine, COL.shortState, COL.inflight, COL.descRate, COL.stuck, COL.wait, COL.verdict],
  [COL.engine, COL.verdict, COL.stuck, COL.wait, COL.inflight],
  [COL.engine, COL.verdict],
];

function render(layout: readonly Column[], rows: readonly ScreenRow[], paint: Paint): string[] {
  const right = new Set(layout.flatMap((c, i) => (c.right ? [i] : [])));
  const text = table(
    layout.map((c) => c.head),
    rows.map((r) => layout.map((c) => c.cell(r, paint))),
    right,
  );
  return text.replace(/\n$/, '').split('\n');
}

/** Cut a line to `width` visible columns, keeping ANSI escapes whole (and resetting after a cut). */
export function fitLine(line: string, width: number): string {
  if (visibleLength(line) <= width) return line;
  let out = '';
  let shown = 0;
  let escaped = false;
  for (let i = 0; i < line.length && shown < width; ) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes take no room
    const m = /^\x1b\[[0-9;]*m/.exec(line.slice(i));
    if (m) {
      out += m[0];
      escaped = true;
      i += m[0].length;
      continue;
    }
    out += line[i];
    shown += 1;
    i += 1;
  }
  return escaped ? `${out}\x1b[0m` : out;
}

/** The table lines for `width` columns: the widest layout that fits, every line cut to the width. */
export function tableLines(rows: readonly ScreenRow[], paint: Paint, width: number): string[] {
  let lines: string[] = [];
  for (const layout of LAYOUTS) {
    lines = render(layout, rows, paint);
    if (lines.every((l) => visibleLength(l) <= width)) return lines;
  }
  return lines.map((l) => fitLine(l, width));
}

/** How much an engine needs looking at: 0 stranded, stalled, halted or gone; 1 probably stranded; 2 backpressure or unknown; 3 healthy. */
function sickness(r: ScreenRow): number {
  if ((r.stranded ?? 0) > 0) return 0;
  if (r.c.verdict === 'stalled' || r.c.verdict === 'halted' || r.c.verdict === 'gone') return 0;
  if ((r.probable ?? 0) > 0) return 1;
  if (r.c.verdict === 'backpressure' || (r.c.verdict === 'unknown' && r.c.reason !== 'warming-up')) return 2;
  return 3;
}

/** An engine that needs looking at before any other: stranded (probably too), stalled, halted or gone. */
export function sickRow(r: ScreenRow): boolean {
  return sickness(r) <= 1;
}

/**
 * The rows that fit `room` table rows: all of them when they fit; else the sickest first (in engine order within
 * the same need), the last row saying how many more there are and what they are.
 */
export function rowsThatFit(rows: readonly ScreenRow[], room: number): { rows: ScreenRow[]; more: string | null } {
  if (rows.length <= room) return { rows: [...rows], more: null };
  const keep = Math.max(0, room - 1);
  const order = rows.map((r, i) => ({ r, i, k: sickness(r) })).sort((a, b) => a.k - b.k || a.i - b.i);
  const shown = new Set(order.slice(0, keep).map((x) => x.i));
  const hidden = rows.filter((_, i) => !shown.has(i));
  const counts = new Map<string, number>();
  for (const r of hidden) counts.set(r.c.verdict, (counts.get(r.c.verdict) ?? 0) + 1);
  const what = [...counts].map(([v, n]) => `${n} ${v}`).join(', ');
  return {
    rows: rows.filter((_, i) => shown.has(i)),
    more: `… ${hidden.length} more engine${hidden.length === 1 ? '' : 's'}: ${what}`,
  };
}

/** Cut a line of words to `width` at a word boundary, ending `…` when cut. */
export function fitWords(line: string, width: number): string {
  if (visibleLength(line) <= width) return line;
  const cut = fitLine(line, Math.max(1, width - 1));
  const space = cut.lastIndexOf(' ');
  return `${space > width / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * Draws frames on a terminal, writing only the lines that changed since the previous frame. A terminal that was
 * resized has moved what it showed (a shorter one scrolls the old frame up), so the lines on screen are no longer
 * where the previous frame put them: any change of size redraws everything.
 */
export class ScreenPainter {
  private prev: string[] | null = null;
  private prevSize: string | null = null;

  constructor(private readonly write: (text: string) => void) {}

  /** Show `lines` (each already fitting `width`, at most `height`); a full redraw on the first frame or a new size. */
  frame(lines: readonly string[], width: number, height: number): void {
    const prev = this.prev;
    const size = `${width}x${height}`;
    let out = '';
    if (prev === null || this.prevSize !== size) {
      out = `\x1b[H\x1b[2J${lines.join('\n')}\n`;
    } else {
      lines.forEach((line, i) => {
        if (prev[i] !== line) out += `\x1b[${i + 1};1H${line}\x1b[K`;
      });
      // Fewer lines than before: clear what is left below; then park the cursor under the frame.
      if (lines.length < prev.length) out += `\x1b[${lines.length + 1};1H\x1b[J`;
      if (out !== '') out += `\x1b[${lines.length + 1};1H`;
    }
    this.prev = [...lines];
    this.prevSize = size;
    if (out !== '') this.write(out);
  }
}
