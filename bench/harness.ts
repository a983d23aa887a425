// The benchmark harness: time a function over enough iterations to be stable, in this process,
// and express results as ratios against a baseline measured in the same run. A new benchmark is one call:
// `measureRatio(name, unit, { work, baseline }, { max: 2 })`, where the baseline stands for the physical work
// (the bytes the work must read or write, done the plainest way), the two interleaved round by round.
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

/** How one round is timed: CPU of this process (user + system; what other processes run does not count) or wall. */
export type BenchClock = 'cpu' | 'wall';

/** The work and its baseline: each call does one round of the same amount of physical work. */
export interface RatioSpec {
  work: () => unknown;
  baseline: () => unknown;
  /** Measured rounds of each (default 9), after `warmup` unmeasured ones (default 2). */
  rounds?: number;
  warmup?: number;
  /** Default 'cpu'. */
  clock?: BenchClock;
  /** Units of `unit` in one round, e.g. the samples a round takes: each round's milliseconds are divided by it. */
  perRound?: number;
  /** Run before each round of `side`, not timed (e.g. to step the emulator, or to compute what the baseline writes). */
  before?: (side: 'work' | 'baseline') => unknown;
}

/** The goal on the ratio: at most `max`, or at least `min`. */
export interface RatioGoal {
  max?: number;
  min?: number;
}

/** Milliseconds that `fn` took on `clock` (awaited when it returns a promise). */
export async function timeMs(fn: () => unknown, clock: BenchClock = 'cpu'): Promise<number> {
  if (clock === 'wall') {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  }
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? (s[(s.length - 1) / 2] as number)
      : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

/**
 * Measure `work` against `baseline` interleaved in this process (baseline, work, baseline, work, …, after a warm-up
 * of each), and report the median of each and the median of the per-round ratios, with their spread: a machine
 * that gets busier during the run slows both sides of a round alike.
 */
export async function measureRatio(
  name: string,
  unit: string,
  spec: RatioSpec,
  goal: RatioGoal = {},
  extra: Record<string, unknown> = {},
): Promise<BenchResult> {
  const { rounds = 9, warmup = 2, clock = 'cpu', perRound = 1, before = () => {} } = spec;
  for (let i = 0; i < warmup; i++) {
    await before('baseline');
    await spec.baseline();
    await before('work');
    await spec.work();
  }
  const base: number[] = [];
  const work: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    await before('baseline');
    const b = (await timeMs(spec.baseline, clock)) / perRound;
    await before('work');
    const w = (await timeMs(spec.work, clock)) / perRound;
    base.push(b);
    work.push(w);
    ratios.push(w / b);
  }
  const ratio = median(ratios);
  const r: BenchResult = {
    name,
    value: round(median(work)),
    unit,
    baseline: round(median(base)),
    ratio: round(ratio),
    ratioSpread: [round(Math.min(...ratios)), round(Math.max(...ratios))],
    clock,
    rounds,
    ...extra,
  };
  return withGoal(r, ratio, goal);
}

/** `r` with its goal on `x` (the ratio, or the value) stated and judged. */
export function withGoal(r: BenchResult, x: number, goal: RatioGoal, what = 'ratio'): BenchResult {
  if (goal.max !== undefined) {
    r.goal = `${what} ≤ ${goal.max}`;
    r.met = x <= goal.max;
  } else if (goal.min !== undefined) {
    r.goal = `${what} ≥ ${goal.min}`;
    r.met = x >= goal.min;
  }
  return r;
}
