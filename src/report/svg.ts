// The report's pictures as inline SVG, drawn without a script: one engine's small multiple (ring occupancy,
// head movement, its verdict over time and the kernel log's events on it), and a unit's log timeline, all
// on the capture's one time axis. Tooltips are SVG <title> elements, which a browser shows without a script.
import { durationText } from '../monitor/words.js';
import type { Verdict } from '../progress/classify.js';
import { esc } from './escape.js';
import type { EnginePoint, PlacedEvent } from './model.js';

/** The panel's drawing area (user units; the SVG scales to its box). */
export const PANEL_W = 300;
const PAD_L = 4;
const PAD_R = 4;
const OCC_TOP = 4;
const OCC_H = 38;
const RATE_TOP = 46;
const RATE_H = 20;
const STRIP_TOP = 70;
const STRIP_H = 10;
const TICK_TOP = 82;
const TICK_H = 8;
const AXIS_Y = 100;
export const PANEL_H = 104;

/** Each verdict's colour (the legend says the same in words). */
export const VERDICT_COLOUR: Readonly<Record<Verdict, string>> = {
  progressing: '#2e9e44',
  idle: '#c3ccd5',
  backpressure: '#e69f00',
  stalled: '#d7191c',
  halted: '#7b1fa2',
  gone: '#222222',
  unknown: '#8fb3d9',
};

/** The time axis of a capture: ms from the first round mapped to panel x. */
export interface TimeAxis {
  spanMs: number;
}

function x(axis: TimeAxis, tMs: number, width = PANEL_W): number {
  const inner = width - PAD_L - PAD_R;
  if (axis.spanMs <= 0) return PAD_L + inner / 2;
  return PAD_L + (Math.min(Math.max(tMs, 0), axis.spanMs) / axis.spanMs) * inner;
}

const f1 = (v: number) => (Math.round(v * 10) / 10).toString();

/** A number rounded up to 1, 2 or 5 times a power of ten (at least 1): a scale's top. Pure. */
export function niceCeil(v: number): number {
  if (!(v > 1)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** The filled area of in-flight descriptors: one closed path per run of known values. */
function occupancyPath(points: readonly EnginePoint[], axis: TimeAxis, top: number): string {
  let d = '';
  let run: string[] = [];
  let startX = 0;
  let lastX = 0;
  const base = OCC_TOP + OCC_H;
  const flush = () => {
    if (run.length > 0) d += `M${f1(startX)} ${base}${run.join('')}L${f1(lastX)} ${base}Z`;
    run = [];
  };
  for (const p of points) {
    if (p.inFlight === null) {
      flush();
      continue;
    }
    const px = x(axis, p.tMs);
    if (run.length === 0) startX = px;
    lastX = px;
    run.push(`L${f1(px)} ${f1(base - (Math.min(p.inFlight, top) / top) * OCC_H)}`);
  }
  flush();
  return d;
}

/** Bars of descriptors retired per second, each over the interval that ends at its round. */
function ratePath(points: readonly EnginePoint[], axis: TimeAxis, top: number): string {
  let d = '';
  const base = RATE_TOP + RATE_H;
  for (let i = 1; i < points.length; i++) {
    const p = points[i] as EnginePoint;
    const prev = points[i - 1] as EnginePoint;
    if (p.descPerSec === null || p.descPerSec <= 0) continue;
    const x0 = x(axis, prev.tMs);
    const w = Math.max(0.6, x(axis, p.tMs) - x0 - 0.4);
    const h = Math.max(0.8, (Math.min(p.descPerSec, top) / top) * RATE_H);
    d += `M${f1(x0)} ${base}h${f1(w)}v${f1(-h)}h${f1(-w)}Z`;
  }
  return d;
}

/** Runs of the same verdict and state: the strip's rectangles and the text timeline. */
export interface Run {
  fromMs: number;
  toMs: number;
  verdict: Verdict;
  reason: string;
  state: string | null;
}

/** Consecutive points with the same verdict, reason and state, merged. Pure. */
export function runsOf(points: readonly EnginePoint[]): Run[] {
  const out: Run[] = [];
  for (const p of points) {
    const last = out[out.length - 1];
    if (last && last.verdict === p.verdict && last.reason === p.reason && last.state === p.state) last.toMs = p.tMs;
    else out.push({ fromMs: p.tMs, toMs: p.tMs, verdict: p.verdict, reason: p.reason, state: p.state });
  }
  return out;
}

/** `2.0–9.9 s` (or `at 2.0 s` for one instant). */
export function spanText(fromMs: number, toMs: number): string {
  if (toMs <= fromMs) return `at ${durationText(fromMs)}`;
  return `${durationText(fromMs)} – ${durationText(toMs)}`;
}

function strip(runs: readonly Run[], axis: TimeAxis, timesMs: readonly number[]): string {
  // A run covers from halfway to the previous instant to halfway to the next one.
  const edge = (tMs: number, dir: -1 | 1) => {
    const i = timesMs.indexOf(tMs);
    const other = timesMs[i + dir];
    return other === undefined ? tMs : (tMs + other) / 2;
  };
  let out = '';
  for (const r of runs) {
    const x0 = axis.spanMs <= 0 ? PAD_L : x(axis, edge(r.fromMs, -1));
    const x1 = axis.spanMs <= 0 ? PANEL_W - PAD_R : x(axis, edge(r.toMs, 1));
    const what = `${spanText(r.fromMs, r.toMs)}: ${r.verdict} (${r.reason})${r.state ? `, ${r.state}` : ''}`;
    out += `<rect x="${f1(x0)}" y="${STRIP_TOP}" width="${f1(Math.max(1, x1 - x0))}" height="${STRIP_H}" fill="${VERDICT_COLOUR[r.verdict]}"><title>${esc(what)}</title></rect>`;
  }
  return out;
}

/** The colour of a log event's mark. */
export function eventColour(kind: string): string {
  if (kind === 'engine-error' || kind === 'bad-head' || kind === 'halt-timeout' || kind === 'clean-timeout') return '#d7191c';
  if (kind === 'ring-dump') return '#e69f00';
  if (kind === 'state-change') return '#2b6cb0';
  return '#555555';
}

function ticks(events: readonly PlacedEvent[], axis: TimeAxis, top: number, height: number, width = PANEL_W): string {
  let out = '';
  for (const p of events) {
    if (p.tMs === null || p.tMs < 0 || p.tMs > axis.spanMs) continue;
    const px = x(axis, p.tMs, width);
    out += `<rect x="${f1(px - 1)}" y="${top}" width="2" height="${height}" fill="${eventColour(p.event.kind)}"><title>${esc(`${durationText(p.tMs)}: ${p.event.kind}${p.event.engine === undefined ? '' : ` sdma${p.event.engine}`} (log line ${p.event.line})`)}</title></rect>`;
  }
  return out;
}

/** The scales one unit's panels share. */
export interface PanelScale {
  axis: TimeAxis;
  timesMs: readonly number[];
  inFlightTop: number;
  rateTop: number;
}

/** One engine's small multiple. `label` names it for a screen reader. */
export function enginePanel(
  points: readonly EnginePoint[],
  events: readonly PlacedEvent[],
  s: PanelScale,
  label: string,
): string {
  const occ = occupancyPath(points, s.axis, s.inFlightTop);
  const rate = ratePath(points, s.axis, s.rateTop);
  const runs = runsOf(points);
  const end = durationText(s.axis.spanMs);
  return (
    `<svg class="panel" viewBox="0 0 ${PANEL_W} ${PANEL_H}" role="img" aria-label="${esc(label)}">` +
    `<rect class="bg" x="${PAD_L}" y="${OCC_TOP}" width="${PANEL_W - PAD_L - PAD_R}" height="${OCC_H}"/>` +
    `<rect class="bg" x="${PAD_L}" y="${RATE_TOP}" width="${PANEL_W - PAD_L - PAD_R}" height="${RATE_H}"/>` +
    (occ ? `<path class="occ" d="${occ}"/>` : '') +
    (rate ? `<path class="rate" d="${rate}"/>` : '') +
    strip(runs, s.axis, s.timesMs) +
    ticks(events, s.axis, TICK_TOP, TICK_H) +
    `<text x="${PAD_L}" y="${AXIS_Y}" class="ax">0</text><text x="${PANEL_W - PAD_R}" y="${AXIS_Y}" class="ax end">${esc(end)}</text>` +
    '</svg>'
  );
}

/** The full-width timeline of a unit's log events (one row per engine named, one for the unit). */
export function logTimeline(events: readonly PlacedEvent[], axis: TimeAxis, rows: readonly (number | null)[]): string {
  const width = 1000;
  const rowH = 12;
  const height = rows.length * rowH + 16;
  let out = `<svg class="timeline" viewBox="0 0 ${width} ${height}" role="img" aria-label="kernel log events over the capture">`;
  rows.forEach((engine, i) => {
    const y = i * rowH;
    out += `<rect class="bg" x="${PAD_L}" y="${y + 1}" width="${width - PAD_L - PAD_R}" height="${rowH - 2}"/>`;
    out += `<text x="${PAD_L + 2}" y="${y + rowH - 3}" class="ax">${engine === null ? 'unit' : `sdma${engine}`}</text>`;
    out += ticks(
      events.filter((e) => (e.event.engine ?? null) === engine),
      axis,
      y + 1,
      rowH - 2,
      width,
    );
  });
  const y = rows.length * rowH + 12;
  out += `<text x="${PAD_L}" y="${y}" class="ax">0</text><text x="${width - PAD_R}" y="${y}" class="ax end">${esc(durationText(axis.spanMs))}</text>`;
  return `${out}</svg>`;
}
