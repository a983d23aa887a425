// `npm run bench`: run every suite in one process, print a table, write bench/results.json.
// Optional arguments select suites by name prefix (e.g. `npm run bench -- core parse`).
import { writeFileSync } from 'node:fs';
import type { BenchResult } from './harness.js';
import { SUITES } from './suites.js';

const wanted = process.argv.slice(2);
const results: BenchResult[] = [];
for (const suite of SUITES) {
  if (wanted.length > 0 && !wanted.some((w) => suite.name.startsWith(w))) continue;
  process.stderr.write(`bench: ${suite.name} ...\n`);
  results.push(...(await suite.run()));
}

const rows = results.map((r) => [
  r.name,
  `${r.value} ${r.unit}`,
  r.baseline === undefined ? '' : `${r.baseline} ${r.unit}`,
  r.ratio === undefined ? '' : `${r.ratio}×`,
  r.goal === undefined ? '' : `${r.goal} ${r.met ? '(met)' : '(NOT met)'}`,
]);
const header = ['benchmark', 'value', 'baseline', 'ratio', 'goal'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
for (const line of [header, ...rows])
  console.log(
    line
      .map((c, i) => (c ?? '').padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );

const out = new URL('../../bench/results.json', import.meta.url);
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nwrote ${out.pathname}`);
