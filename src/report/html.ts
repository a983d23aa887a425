// The report as one self-contained HTML page: inline CSS and SVG, no script, no font, no image and no
// address outside the page (a Content-Security-Policy says so to the browser too), readable with JavaScript
// off and on paper. Pure: ReportData in, text out.

import { CHIP_PRODUCT } from '../cli/flavour.js';
import { provenanceText } from '../cli/observe.js';
import { durationText } from '../monitor/words.js';
import { engineIdsText } from '../progress/engine-ids.js';
import { esc, idOf } from './escape.js';
import type { ReportData, SeenFinding, UnitReport } from './model.js';
import { REPORT_CSS } from './style.js';
import { metaList, unitSection } from './unit.js';

/** Nothing is loaded from anywhere, and no script runs, whatever the page holds. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

function utc(ms: number): string {
  return `${new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')} UTC`;
}

function counts(findings: readonly SeenFinding[]): string {
  const now = findings.filter((s) => s.current).map((s) => s.finding.severity);
  const n = (sev: string) => now.filter((s) => s === sev).length;
  const parts = [
    n('critical') ? `<span class="critical"><b class="sev">${n('critical')} critical</b></span>` : '',
    n('warning') ? `<span class="warning"><b class="sev">${n('warning')} warning</b></span>` : '',
    n('unknown') ? `<span class="unknown"><b class="sev">${n('unknown')} unknown</b></span>` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(' ') : '<span class="ok">OK</span>';
}

function summaryRow(u: UnitReport): string {
  const i = u.info;
  const f = i.flavour;
  const status = u.status[u.status.length - 1]?.status ?? 'up';
  const worst = u.findings.find((s) => s.current && s.finding.severity !== 'note');
  return (
    `<tr><td><a href="#${idOf('unit', i.name)}">${esc(i.name)}</a></td><td class="mono">${esc(i.pci || '-')}</td>` +
    `<td>${f.chip} (${CHIP_PRODUCT[f.chip]})</td><td>${f.module} / ${f.driver}</td><td class="num">${f.ports}</td>` +
    `<td>${esc(engineIdsText(i.engineIds))}</td><td class="num">${i.descqCnt}</td><td>${esc(status)}</td>` +
    `<td>${counts(u.findings)}${worst ? ` <code>${esc(worst.finding.code)}</code> ${esc(worst.finding.text, 160)}` : ''}</td></tr>`
  );
}

function header(d: ReportData): string {
  const p = d.provenance;
  const rows: [string, string][] = [
    ['source', d.sourceLabel],
    ['host', p.host ?? 'unknown'],
    ['captured', p.capturedAtMs === null ? 'at the rounds below (a live read)' : utc(p.capturedAtMs)],
    ['instants', `${d.rounds}${d.rounds > 1 ? ` over ${durationText(d.spanMs)}` : ''}`],
    [
      'captured by',
      p.toolVersion ? `hfi1-sdma ${p.toolVersion}` : p.backend === 'snapshot' ? 'unknown' : `hfi1-sdma ${d.toolVersion}`,
    ],
    ['numbers from', p.emulated ? 'the emulator: not an adapter' : 'an adapter'],
    ['rendered', `${utc(d.renderedAtMs)} by hfi1-sdma ${d.toolVersion}`],
  ];
  let out = `<header><h1>hfi1-sdma report</h1><p class="prov">${esc(provenanceText(p), 600)}</p>${metaList(rows)}`;
  if (d.listingProblems.length > 0) {
    out += `<ul class="runs">${d.listingProblems.map((m) => `<li class="warning">${esc(m)}</li>`).join('')}</ul>`;
  }
  out +=
    '<table><tr><th>unit</th><th>PCI</th><th>chip</th><th>module / driver</th><th>ports</th><th>engines</th><th>ring</th><th>status at end</th><th>findings at end</th></tr>' +
    `${d.units.map(summaryRow).join('')}</table>`;
  if (d.otherFindings.length > 0) {
    out += `<ol class="findings">${d.otherFindings
      .map(
        (s) =>
          `<li class="${s.finding.severity}"><code>${esc(s.finding.code)}</code> ${esc(s.finding.text)}${s.finding.action ? `<p class="action">${esc(s.finding.action)}</p>` : ''}</li>`,
      )
      .join('')}</ol>`;
  }
  return `${out}</header>`;
}

/** The whole page. */
export function renderReport(d: ReportData): string {
  const title = `hfi1-sdma report: ${d.provenance.host ?? d.sourceLabel}${d.provenance.capturedAtMs === null ? '' : `, ${utc(d.provenance.capturedAtMs)}`}`;
  return (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">` +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${esc(title, 200)}</title><style>${REPORT_CSS}</style></head><body>` +
    header(d) +
    d.units.map((u) => unitSection(u, d)).join('\n') +
    `<footer>Every verdict, finding and age here is what hfi1-sdma's monitor judged of these instants, as 'hfi1-sdma health' and 'watch' judge them; times are from the first instant. Rendered by hfi1-sdma ${esc(d.toolVersion)}.</footer>` +
    '</body></html>\n'
  );
}
