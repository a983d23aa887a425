// `npm run bench`: run every suite in one process, print a table, and add the run to bench/results.json with
// the machine it ran on (cores, CPU model, Node) and the load average when it started and ended, and beside
// each result the 1-minute load average when its suite started. Optional arguments select suites or single
// results by name prefix (e.g. `npm run bench -- core parse.qpStats`): a selective run is a run of its own.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { type BenchResult, round, wanted } from './harness.js';
import { SUITES } from './suites.js';

/** One `npm run bench` as bench/results.json keeps it. */
interface BenchRun {
  at: string;
  node: string;
  cores: number;
  cpuModel: string;
  loadAvgStart: number[];
  loadAvgEnd: number[];
  filters: string[];
  results: BenchResult[];
}

/** Runs kept in bench/results.json, newest last. */
const KEEP_RUNS = 20;

const load = (): number[] => loadavg().map((x) => round(x));
const started = { at: new Date().toISOString(), loadAvgStart: load() };
const results: BenchResult[] = [];
for (const suite of SUITES) {
  if (!wanted(suite.name)) continue;
  const load1 = round(loadavg()[0] ?? 0);
  process.stderr.write(`bench: ${suite.name} (load average ${load1}) ...\n`);
  for (const r of await suite.run()) if (wanted(r.name)) results.push({ ...r, load1 });
}

const rows = results.map((r) => [
  r.name,
  `${r.value} ${r.unit}`,
  r.baseline === undefined ? '' : `${r.baseline} ${r.unit}`,
  r.ratio === undefined ? '' : `${r.ratio}×`,
  r.goal === undefined ? '' : `${r.goal} ${r.met ? '(met)' : '(NOT met)'}`,
  String(r.load1),
]);
const header = ['benchmark', 'value', 'baseline', 'ratio', 'goal', 'load'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
for (const line of [header, ...rows])
  console.log(
    line
      .map((c, i) => (c ?? '').padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );

const run: BenchRun = {
  ...started,
  node: process.version,
  cores: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  loadAvgEnd: load(),
  filters: process.argv.slice(2),
  results,
};
const out = new URL('../../bench/results.json', import.meta.url);
let earlier: BenchRun[] = [];
if (existsSync(out)) {
  try {
    const old = JSON.parse(readFileSync(out, 'utf8')) as unknown;
    // An older results.json held one list of results and no run: it is replaced.
    if (old && typeof old === 'object' && Array.isArray((old as { runs?: unknown }).runs))
      earlier = (old as { runs: BenchRun[] }).runs;
  } catch {
    earlier = [];
  }
}
writeFileSync(out, `${JSON.stringify({ runs: [...earlier, run].slice(-KEEP_RUNS) }, null, 2)}\n`);
console.log(
  `\n${run.cores} cores (${run.cpuModel}), load average ${run.loadAvgStart.join(' ')} at the start, ${run.loadAvgEnd.join(' ')} at the end`,
);
console.log(`wrote ${out.pathname}`);
