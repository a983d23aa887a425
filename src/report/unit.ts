// One unit's section of the report: its identity and context, its findings (worst first, with code and next
// step), a small multiple per engine on one scale, its waiters judged, its ports, and its kernel log events on
// the same time axis. Every string from the capture goes through esc().
import type { UnitContext } from '../backend.js';
import { CHIP_PRODUCT } from '../cli/flavour.js';
import { eventDescription } from '../cli/log.js';
import { ageText, durationText, linkStateText, ownerText, whoText } from '../monitor/words.js';
import { VERDICTS } from '../progress/classify.js';
import { engineIdsText } from '../progress/engine-ids.js';
import { esc, idOf } from './escape.js';
import type { EngineSeries, PlacedEvent, ReportData, SeenFinding, UnitReport } from './model.js';
import { enginePanel, logTimeline, niceCeil, type PanelScale, runsOf, spanText, VERDICT_COLOUR } from './svg.js';

/** Log events listed per unit at most (the newest are kept). */
export const MAX_LOG_ROWS = 300;
/** Runs of one engine's state and verdict listed as text at most (the strip draws every one). */
export const MAX_RUN_ROWS = 40;
/** Waiters listed per unit at most. */
export const MAX_WAITER_ROWS = 200;

const SEVERITY_WORD = { critical: 'CRITICAL', warning: 'WARNING', unknown: 'UNKNOWN', note: 'NOTE' } as const;
const noPaint = (_style: unknown, text: string) => text;

/** The events a report lists and marks: a descriptor line belongs to its ring dump, which is counted instead. */
function listedEvents(events: readonly PlacedEvent[]): PlacedEvent[] {
  return events.filter((p) => p.event.kind !== 'descriptor' && p.event.kind !== 'trace-descriptor');
}

/** A rate as a scale says it: `500`, `20 k`, `2 M`. */
function rateText(v: number): string {
  if (v >= 1e6) return `${v / 1e6} M`;
  if (v >= 1e4) return `${v / 1e3} k`;
  return String(v);
}

/** `12.3 s` from the first instant, `−4.0 s` before it. */
function atText(tMs: number): string {
  return tMs < 0 ? `−${durationText(-tMs)}` : durationText(tMs);
}

function findingItem(s: SeenFinding, spanMs: number): string {
  const f = s.finding;
  const seen = s.current
    ? s.firstMs > 0
      ? `since ${atText(s.firstMs)}`
      : spanMs > 0
        ? 'from the first instant'
        : ''
    : `seen ${spanText(s.firstMs, s.lastMs)}, not at the end`;
  return (
    `<li class="${f.severity}"><span class="sev">${SEVERITY_WORD[f.severity]}</span><code>${esc(f.code)}</code> ${esc(f.text, 1200)}` +
    (f.action ? `<p class="action">${esc(f.action, 800)}</p>` : '') +
    (seen ? ` <span class="when">${esc(seen)}</span>` : '') +
    '</li>'
  );
}

function findingsBlock(u: UnitReport, spanMs: number): string {
  const current = u.findings.filter((s) => s.current);
  const earlier = u.findings.filter((s) => !s.current);
  let out = '<h3>Findings</h3>';
  if (!current.some((s) => s.finding.severity !== 'note'))
    out += '<p class="ok">Nothing to act on at the end of the capture.</p>';
  if (current.length > 0) out += `<ol class="findings">${current.map((s) => findingItem(s, spanMs)).join('')}</ol>`;
  if (earlier.length > 0) {
    out += `<p class="muted">Earlier in the capture, gone by its end:</p><ol class="findings">${earlier.map((s) => findingItem(s, spanMs)).join('')}</ol>`;
  }
  return out;
}

/** Name-value pairs in columns; a long value takes a whole row. */
export function metaList(rows: readonly (readonly [string, string])[]): string {
  const item = ([k, v]: readonly [string, string]) =>
    `<div${v.length > 60 ? ' class="wide"' : ''}><dt>${esc(k)}</dt><dd>${esc(v, 1200)}</dd></div>`;
  return `<dl class="meta">${rows.map(item).join('')}</dl>`;
}

function contextRows(c: UnitContext | undefined): [string, string][] {
  if (!c) return [];
  const rows: [string, string | null][] = [
    ['driver version', c.driverVersion],
    ['driver srcversion', c.driverSrcversion],
    ['firmware', c.fwVer],
    ['board', c.boardId],
    ['hw rev', c.hwRev],
    ['board version', c.boardVersion],
    ['serial', c.serial],
    ['kernel', c.kernelRelease],
    [
      'PCI link',
      c.pciLinkSpeed || c.pciLinkWidth ? `${c.pciLinkSpeed ?? '?'} x${(c.pciLinkWidth ?? '?').replace(/^x/i, '')}` : null,
    ],
  ];
  return rows.filter((r): r is [string, string] => r[1] !== null && r[1] !== '');
}

function identityBlock(u: UnitReport, data: ReportData): string {
  const i = u.info;
  const f = i.flavour;
  const rows: [string, string][] = [
    ['chip', `${f.chip} (${CHIP_PRODUCT[f.chip]})`],
    ['module, driver build', `${f.module}, ${f.driver}`],
    ['engines', `${engineIdsText(i.engineIds)} (${i.engines})`],
    ['ports', String(f.ports)],
    ['ring size (descq_cnt)', String(i.descqCnt)],
    ...contextRows(i.context),
    ['judged with', `stall window ${data.stallMs} ms, strand window ${data.strandMs} ms`],
  ];
  const unreadable = i.sources.filter((s) => !s.readable);
  if (unreadable.length > 0) {
    rows.push(['not readable', unreadable.map((s) => `${s.source} (${s.reason ?? 'unknown'})`).join('; ')]);
  }
  let out = metaList(rows);
  if (f.evidence.length > 0) {
    out += `<details><summary>how the chip and driver build were told</summary><ul class="runs">${f.evidence
      .slice(0, 40)
      .map((e) => `<li>${esc(e)}</li>`)
      .join('')}</ul></details>`;
  }
  const bad = u.status.filter((s) => s.status !== 'up');
  if (bad.length > 0) {
    const first = bad[0] as (typeof bad)[number];
    out += `<p class="warning"><b>${esc(first.status)}</b> at ${esc(atText(first.tMs))}${first.problem ? `: ${esc(first.problem)}` : ''} (${bad.length} of ${u.status.length} rounds not read)</p>`;
  }
  return out;
}

function legend(): string {
  const items = VERDICTS.map((v) => `<span><span class="sw" style="background:${VERDICT_COLOUR[v]}"></span>${v}</span>`);
  items.push(
    '<span><span class="sw" style="background:#3b82c4"></span>in flight</span>',
    '<span><span class="sw" style="background:#2e9e44"></span>retired/s</span>',
    '<span><span class="sw" style="background:#d7191c;width:3px"></span>log event</span>',
  );
  return `<div class="legend">${items.join('')}</div>`;
}

function engineFigure(u: UnitReport, e: EngineSeries, events: readonly PlacedEvent[], scale: PanelScale): string {
  const last = e.points[e.points.length - 1];
  const first = e.points[0];
  if (!last || !first) return '';
  const name = `sdma${e.engine}`;
  const bad = last.verdict === 'stalled' || last.verdict === 'halted' || last.stranded > 0;
  const dqf =
    last.descqFull === null
      ? 'DQF -'
      : `DQF ${last.descqFull}${first.descqFull !== null ? ` (+${last.descqFull - first.descqFull})` : ''}`;
  const errs =
    last.errCount === null
      ? 'errors -'
      : `errors ${last.errCount}${first.errCount !== null ? ` (+${last.errCount - first.errCount})` : ''}`;
  const bits = [...new Set(e.points.flatMap((p) => p.errorBits))];
  const maxIn = Math.max(0, ...e.points.map((p) => p.inFlight ?? 0));
  const maxWaiters = Math.max(0, ...e.points.map((p) => p.waiters ?? 0));
  const waiters =
    last.waiters === null
      ? ''
      : ` · waiters ${last.waiters}${last.stranded ? ` (${last.stranded} stranded)` : last.probable ? ` (${last.probable} probably stranded)` : ''}${maxWaiters > last.waiters ? `, up to ${maxWaiters}` : ''}`;
  const mine = listedEvents(events).filter((p) => p.event.engine === e.engine);
  const runs = runsOf(e.points);
  return (
    `<figure class="eng${bad ? ' bad' : ''}" id="${idOf(u.info.name, name)}">` +
    `<figcaption><b>${name}</b> <b class="v-${last.verdict}">${last.verdict}</b> (${esc(last.reason)})${last.state ? ` · ${esc(last.state)}` : ''}</figcaption>` +
    enginePanel(e.points, mine, scale, `${u.info.name} ${name}: ${last.verdict} at the end`) +
    `<p class="nums">${esc(dqf)} · ${esc(errs)}${bits.length ? ` · bits ${esc(bits.join(','))}` : ''} · in flight up to ${maxIn}${esc(waiters)}${mine.length ? ` · ${mine.length} log event${mine.length === 1 ? '' : 's'}` : ''}</p>` +
    `<details><summary>state and verdict over time (${runs.length} run${runs.length === 1 ? '' : 's'})</summary><ul class="runs">${runs
      .slice(0, MAX_RUN_ROWS)
      .map(
        (r) =>
          `<li>${esc(spanText(r.fromMs, r.toMs))}: <span class="v-${r.verdict}">${r.verdict}</span> (${esc(r.reason)})${r.state ? `, ${esc(r.state)}` : ''}</li>`,
      )
      .join(
        '',
      )}${runs.length > MAX_RUN_ROWS ? `<li>${runs.length - MAX_RUN_ROWS} more: the strip's tooltips name each</li>` : ''}</ul></details>` +
    '</figure>'
  );
}

function enginesBlock(u: UnitReport, data: ReportData): string {
  if (u.engines.length === 0) return '<h3>Engines</h3><p class="muted">No engine was read.</p>';
  const points = u.engines.flatMap((e) => e.points);
  const scale: PanelScale = {
    axis: { spanMs: data.spanMs },
    timesMs: data.timesMs,
    // Never above the ring: a full ring fills its panel.
    inFlightTop: Math.min(u.info.descqCnt, niceCeil(Math.max(0, ...points.map((p) => p.inFlight ?? 0)))),
    rateTop: niceCeil(Math.max(0, ...points.map((p) => p.descPerSec ?? 0))),
  };
  const events = data.log.byUnit.get(u.info.name) ?? [];
  return (
    `<h3>Engines ${esc(engineIdsText(u.info.engineIds))}</h3>` +
    `<p class="muted">One scale for every engine of ${esc(u.info.name)}: in flight 0–${scale.inFlightTop} descriptors (ring ${u.info.descqCnt}), retired 0–${rateText(scale.rateTop)} descriptors/s, time 0–${esc(durationText(data.spanMs))} over ${data.rounds} instant${data.rounds === 1 ? '' : 's'}.${data.rounds === 1 ? ' One instant shows no movement: no time-based verdict.' : ''}</p>` +
    legend() +
    `<div class="grid">${u.engines.map((e) => engineFigure(u, e, events, scale)).join('')}</div>`
  );
}

function waitersBlock(u: UnitReport): string {
  const w = u.waiters;
  let out = '<h3>Waiters</h3>';
  if (!w.listed) {
    const why = w.visibility[0]?.reason ?? 'this source does not list them';
    return `${out}<p class="muted">Not listed: ${esc(why)}</p>`;
  }
  const hidden = w.visibility.filter((v) => !v.visible);
  if (hidden.length > 0) {
    out += `<ul class="runs">${hidden.map((v) => `<li class="muted">${esc(v.kind)} waiters not visible: ${esc(v.reason ?? 'unknown')}${v.fix ? `; ${esc(v.fix)}` : ''}</li>`).join('')}</ul>`;
  }
  if (w.psmStalls > 0) out += `<p>${w.psmStalls} PSM writer stall(s) seen.</p>`;
  if (w.judgements.length === 0) return `${out}<p class="ok">No sender was waiting at the last instant read.</p>`;
  const rows = w.judgements.slice(0, MAX_WAITER_ROWS).map((j) => {
    const age = w.readMs === null ? '-' : ageText(w.readMs - j.firstSeenMs, j.ageAtLeast);
    const verdict = j.verdict === 'stranded' && j.probable ? 'probably stranded' : j.verdict;
    const w0 = j.waiter;
    const owner = w0.kind === 'qp' ? ownerText(w.owners.find((o) => o.qpn === w0.qpn)) : '-';
    return `<tr><td>${esc(whoText(j.waiter))}</td><td>${j.waiter.kind}</td><td class="num">${j.waiter.engine ?? '-'}</td><td class="${j.verdict === 'stranded' ? 'v-stalled' : ''}"><b>${esc(verdict)}</b></td><td>${esc(j.reason)}</td><td class="num">${esc(age)}</td><td class="num">${j.waiter.descriptorsNeeded ?? '-'}</td><td>${esc(j.waiter.waitsFor)}</td><td>${esc(owner)}</td><td>${esc(j.waiter.source)}</td></tr>`;
  });
  const more =
    w.judgements.length > MAX_WAITER_ROWS ? `<p class="muted">${w.judgements.length - MAX_WAITER_ROWS} more not listed.</p>` : '';
  return `${out}<table><tr><th>waiter</th><th>kind</th><th>engine</th><th>verdict</th><th>why</th><th>age</th><th>needs</th><th>waits for</th><th>owner</th><th>seen in</th></tr>${rows.join('')}</table>${more}`;
}

function portsBlock(u: UnitReport): string {
  if (u.ports.size === 0) return '';
  const rows = [...u.ports].map(([port, points]) => {
    const runs: { from: number; to: number; text: string }[] = [];
    for (const p of points) {
      const text = `${linkStateText(p.link)}${p.link.rate ? `, ${p.link.rate}` : ''}`;
      const last = runs[runs.length - 1];
      if (last && last.text === text) last.to = p.tMs;
      else runs.push({ from: p.tMs, to: p.tMs, text });
    }
    const cell =
      runs.length === 1
        ? esc(runs[0]?.text ?? '')
        : runs
            .slice(0, 50)
            .map((r) => `${esc(spanText(r.from, r.to))}: ${esc(r.text)}`)
            .join('<br>');
    return `<tr><td class="num">${port}</td><td>${cell}</td></tr>`;
  });
  return `<h3>Ports</h3><table><tr><th>port</th><th>link over the capture</th></tr>${rows.join('')}</table>`;
}

function logBlock(u: UnitReport, data: ReportData): string {
  let out = '<h3>Kernel log</h3>';
  const log = data.log;
  if (log.missing) return `${out}<p class="muted">${esc(log.missing)}</p>`;
  const all = log.byUnit.get(u.info.name) ?? [];
  const listed = listedEvents(all);
  const descriptors = all.length - listed.length;
  if (listed.length === 0) {
    return `${out}<p class="muted">No SDMA event of ${esc(u.info.name)} in the kernel log${descriptors ? ` (${descriptors} descriptor lines)` : ''}.</p>`;
  }
  if (log.unplaced) out += `<p class="muted">${esc(log.unplaced)}</p>`;
  const inside = listed.filter((p) => p.tMs !== null && p.tMs >= 0 && p.tMs <= data.spanMs);
  const before = listed.filter((p) => p.tMs !== null && p.tMs < 0);
  if (inside.length > 0) {
    const engines = [...new Set(inside.map((p) => p.event.engine ?? null))].sort((a, b) => (a ?? -1) - (b ?? -1));
    out += logTimeline(inside, { spanMs: data.spanMs }, engines);
  }
  const notes: string[] = [];
  if (!log.unplaced) notes.push(`${inside.length} event${inside.length === 1 ? '' : 's'} during the capture`);
  if (before.length > 0) notes.push(`${before.length} before its first instant`);
  if (descriptors > 0) notes.push(`${descriptors} descriptor lines of ring dumps not listed`);
  if (notes.length) out += `<p class="muted">${esc(notes.join('; '))}.</p>`;
  const shown = listed.slice(-MAX_LOG_ROWS);
  if (listed.length > shown.length) {
    out += `<p class="muted">The ${listed.length - shown.length} oldest events are left out; 'hfi1-sdma log' decodes the whole log.</p>`;
  }
  const rows = shown.map((p) => {
    const e = p.event;
    const what = eventDescription(e, noPaint, log) ?? '';
    return `<tr><td class="num">${p.tMs === null ? '-' : esc(atText(p.tMs))}</td><td class="mono">${esc(e.ts ?? '-')}</td><td class="num">${e.engine ?? '-'}</td><td>${esc(what, 600)}</td></tr>`;
  });
  return `${out}<table><tr><th>at</th><th>kernel time</th><th>engine</th><th>event</th></tr>${rows.join('')}</table>`;
}

function warningsBlock(u: UnitReport): string {
  if (u.warnings.length === 0) return '';
  return `<h3>Source warnings</h3><ul class="runs">${u.warnings
    .slice(0, 50)
    .map((w) => `<li>${esc(w.message)}</li>`)
    .join('')}</ul>`;
}

/** The section of one unit. */
export function unitSection(u: UnitReport, data: ReportData): string {
  const i = u.info;
  return (
    `<section class="unit" id="${idOf('unit', i.name)}">` +
    `<h2>${esc(i.name)}${i.pci ? ` <span class="muted">${esc(i.pci)}</span>` : ''}</h2>` +
    identityBlock(u, data) +
    findingsBlock(u, data.spanMs) +
    enginesBlock(u, data) +
    waitersBlock(u) +
    portsBlock(u) +
    logBlock(u, data) +
    warningsBlock(u) +
    '</section>'
  );
}
