// The report's style sheet, inlined in its <style>: readable on screen and on paper, no web font, no image.

/** The CSS of the report. */
export const REPORT_CSS = `
:root{--fg:#1b1f23;--muted:#5a6570;--line:#d5dbe1;--bg:#ffffff;--panel:#f5f7f9;--crit:#d7191c;--warn:#b76e00;--unk:#4a6fa5;--note:#6b7580}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1280px;padding:16px 20px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;padding-top:10px;border-top:3px solid var(--fg)}
h3{font-size:15px;margin:18px 0 6px}code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
.prov{color:var(--muted);margin:0 0 10px}
dl.meta{display:grid;grid-template-columns:repeat(auto-fill,minmax(280px,1fr));gap:2px 18px;margin:8px 0}
dl.meta div{display:flex;gap:8px;min-width:0}dl.meta div.wide{grid-column:1/-1}dl.meta dt{color:var(--muted);white-space:nowrap}dl.meta dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--panel);font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
ol.findings{list-style:none;padding:0;margin:6px 0}ol.findings li{border-left:5px solid var(--note);background:var(--panel);padding:6px 10px;margin:4px 0}
ol.findings li.critical{border-color:var(--crit)}ol.findings li.warning{border-color:var(--warn)}ol.findings li.unknown{border-color:var(--unk)}
.sev{font-weight:700;margin-right:6px}.critical .sev{color:var(--crit)}.warning .sev{color:var(--warn)}.unknown .sev{color:var(--unk)}.note .sev{color:var(--note)}
.action{margin:2px 0 0;color:#2d3a45}.action::before{content:"Next: ";font-weight:600}.when{color:var(--muted);font-size:12px}
.ok{color:#1d7a35;font-weight:600}.muted{color:var(--muted)}p.warning,ul.runs li.warning{color:var(--warn)}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:var(--muted);margin:4px 0}
.sw{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:-1px;border:1px solid #0002}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:10px}
figure.eng{margin:0;border:1px solid var(--line);border-radius:4px;padding:6px 8px;background:#fff}
figure.eng.bad{border-color:var(--crit);box-shadow:0 0 0 1px var(--crit) inset}
figcaption{font-size:13px}figcaption b{font-weight:700}.nums{font-size:12px;color:var(--muted);margin:2px 0 0}
svg.panel{width:100%;height:auto;display:block;margin-top:3px}svg.timeline{width:100%;height:auto;display:block}
svg .bg{fill:var(--panel)}svg .occ{fill:#3b82c4;fill-opacity:.85}svg .rate{fill:#2e9e44}
svg .ax{font-size:9px;fill:var(--muted);paint-order:stroke;stroke:#fff;stroke-width:2px}svg .end{text-anchor:end}
.v-progressing{color:#1d7a35}.v-idle{color:#5a6570}.v-backpressure{color:#b76e00}.v-stalled{color:var(--crit)}.v-halted{color:#7b1fa2}.v-gone{color:#000}.v-unknown{color:var(--unk)}
details{margin:3px 0}summary{cursor:pointer;color:var(--muted);font-size:12px}
ul.runs{margin:2px 0 0 16px;padding:0;font-size:12px}
footer{margin-top:30px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);padding-top:8px}
@media print{body{max-width:none}figure.eng{break-inside:avoid}}
`;
