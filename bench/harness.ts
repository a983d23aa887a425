// The benchmark harness: time a function over enough iterations to be stable, in this process,
// and express results as ratios against a baseline measured in the same run.
import { performance } from 'node:perf_hooks';

/** One entry of bench/results.json. */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  baseline?: number;
  ratio?: number;
  /** The goal the issue names, e.g. "ratio ≤ 2". */
  goal?: string;
  met?: boolean;
  [extra: string]: unknown;
}

/** A group of benchmarks; `run` returns its results. */
export interface BenchSuite {
  name: string;
  run(): Promise<BenchResult[]> | BenchResult[];
}

/**
 * Nanoseconds per call of `fn(i)`: warms up, then runs batches of `batch` calls until `minMs`
 * have passed, and reports the median batch. `fn` should return something so the work is not
 * optimised away; the results are folded into a sink.
 */
export function nsPerOp(fn: (i: number) => unknown, opts: { batch?: number; minMs?: number; warmupMs?: number } = {}): number {
  const batch = opts.batch ?? 10_000;
  const minMs = opts.minMs ?? 400;
  const warmupMs = opts.warmupMs ?? 100;
  let sink = 0;
  const runBatch = (): number => {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) {
      const r = fn(i);
      if (r === sink) sink++;
    }
    return ((performance.now() - t0) * 1e6) / batch;
  };
  const warmEnd = performance.now() + warmupMs;
  while (performance.now() < warmEnd) runBatch();
  const samples: number[] = [];
  const end = performance.now() + minMs;
  while (performance.now() < end || samples.length < 5) samples.push(runBatch());
  samples.sort((a, b) => a - b);
  if (sink === -1) console.log(''); // keep `sink` observable
  return samples[Math.floor(samples.length / 2)] ?? Number.NaN;
}

/** A result comparing `value` with `baseline` (both in `unit`), with an optional goal on the ratio. */
export function ratioResult(
  name: string,
  value: number,
  baseline: number,
  unit: string,
  goalRatio?: number,
  extra: Record<string, unknown> = {},
): BenchResult {
  const ratio = value / baseline;
  const r: BenchResult = { name, value: round(value), unit, baseline: round(baseline), ratio: round(ratio), ...extra };
  if (goalRatio !== undefined) {
    r.goal = `ratio ≤ ${goalRatio}`;
    r.met = ratio <= goalRatio;
  }
  return r;
}

/** Three significant digits are plenty for a benchmark table. */
export function round(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x))));
  return Number(x.toFixed(Math.min(digits, 6)));
}

/** The filters given to `npm run bench` (result or suite name prefixes); none runs everything. */
const FILTERS: readonly string[] = process.argv.slice(2);

/** True when a result (or suite) named `name` is selected: no filter, or a filter it starts with, or one naming a part of it. */
export function wanted(name: string): boolean {
  return FILTERS.length === 0 || FILTERS.some((f) => name.startsWith(f) || f.startsWith(`${name}.`));
}
