// race.schedules: schedules the plain exhaustive search (no reduction) covers per second for the
// kernel order with two submitters (the whole search, world construction included), median of
// five runs. race.schedules3: the reduced search (symmetric submitters, sleep sets) with three
// submitters, kernel order: its wall time as a ratio to the plain two-submitter search measured
// here, with its memory sampled during the search: the process's peak RSS (the goal's measure)
// and the peak of JS heap + array buffers above what the process held before (what the search
// itself holds). Goal: ≤ 10 s and a peak RSS ≤ 300 MB.
import { performance } from 'node:perf_hooks';
import { DEFAULT_BOUND, explore } from '../src/emu/race/explorer.js';
import { type BenchSuite, round } from './harness.js';

const RUNS = 5;
const GOAL_MS = 10_000;
const GOAL_MB = 300;
const MB = 1024 * 1024;

function median<T extends { wallMs: number }>(xs: T[]): T | undefined {
  return xs.sort((a, b) => a.wallMs - b.wallMs)[Math.floor(xs.length / 2)];
}

const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;

/** The reduced three-submitter search once, with memory sampled every few thousand steps. */
function three(): {
  wallMs: number;
  cpuMs: number;
  rssMB: number;
  heapMB: number;
  schedules: number;
  states: number;
  statesExplored: number;
  steps: number;
  graphSteps: number;
} {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage();
  let rss = before.rss;
  let heap = before.heapUsed + before.arrayBuffers;
  const probe = (): void => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed + m.arrayBuffers);
  };
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const r = explore({ variant: 'kernel', submitters: 3, bound: DEFAULT_BOUND, seed: 1, probe });
  const wallMs = performance.now() - t0;
  probe();
  return {
    wallMs,
    rssMB: rss / MB,
    cpuMs: cpuMs(process.cpuUsage(c0)),
    heapMB: (heap - before.heapUsed - before.arrayBuffers) / MB,
    schedules: r.schedules,
    states: r.states,
    statesExplored: r.statesExplored,
    steps: r.steps,
    graphSteps: r.graphSteps,
  };
}

export const raceSuite: BenchSuite = {
  name: 'race',
  run() {
    const samples: { wallMs: number; schedules: number; states: number }[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const r = explore({ variant: 'kernel', submitters: 2, bound: DEFAULT_BOUND, seed: 1, reduce: 'none' });
      samples.push({ wallMs: performance.now() - t0, schedules: r.schedules, states: r.states });
    }
    const m = median(samples) ?? { wallMs: Number.NaN, schedules: 0, states: 0 };
    const t = median([three(), three(), three()]);
    if (!t) return [];
    const met = t.wallMs <= GOAL_MS && t.rssMB <= GOAL_MB;
    return [
      {
        name: 'race.schedules',
        value: round((m.schedules / m.wallMs) * 1000),
        unit: 'schedules/s',
        schedules: m.schedules,
        states: m.states,
        statesPerSec: round((m.states / m.wallMs) * 1000),
        wallMs: round(m.wallMs),
      },
      {
        name: 'race.schedules3',
        value: round(t.wallMs),
        unit: 'ms',
        baseline: round(m.wallMs),
        ratio: round(t.wallMs / m.wallMs),
        goal: `≤ ${GOAL_MS / 1000} s and ≤ ${GOAL_MB} MB`,
        met,
        cpuMs: round(t.cpuMs),
        peakRssMB: round(t.rssMB),
        peakHeapMB: round(t.heapMB),
        schedules: t.schedules,
        states: t.states,
        statesExplored: t.statesExplored,
        steps: t.steps,
        graphSteps: t.graphSteps,
      },
    ];
  },
};
