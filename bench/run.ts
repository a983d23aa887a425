// `npm run bench`: run every suite in one process, print a table, write bench/results.json.
// Optional arguments select suites or single results by name prefix (e.g. `npm run bench -- core parse.qpStats`);
// a selective run replaces only its own entries of bench/results.json.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type BenchResult, wanted } from './harness.js';
import { SUITES } from './suites.js';

const results: BenchResult[] = [];
for (const suite of SUITES) {
  if (!wanted(suite.name)) continue;
  process.stderr.write(`bench: ${suite.name} ...\n`);
  results.push(...(await suite.run()).filter((r) => wanted(r.name)));
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
const measured = new Map(results.map((r) => [r.name, r]));
const earlier: BenchResult[] =
  process.argv.length > 2 && existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as BenchResult[]) : [];
const merged = earlier.map((r) => measured.get(r.name) ?? r);
for (const r of results) if (!earlier.some((e) => e.name === r.name)) merged.push(r);
writeFileSync(out, `${JSON.stringify(merged, null, 2)}\n`);
console.log(`\nwrote ${out.pathname}`);
