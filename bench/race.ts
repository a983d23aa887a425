// race.schedules: schedules the exhaustive explorer covers per second for the kernel order with
// two submitters (the whole search, world construction included), median of five runs.
import { performance } from 'node:perf_hooks';
import { DEFAULT_BOUND, explore } from '../src/emu/race/explorer.js';
import { type BenchSuite, round } from './harness.js';

const RUNS = 5;

export const raceSuite: BenchSuite = {
  name: 'race',
  run() {
    const samples: { wallMs: number; schedules: number; states: number }[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const r = explore({ variant: 'kernel', submitters: 2, bound: DEFAULT_BOUND, seed: 1 });
      samples.push({ wallMs: performance.now() - t0, schedules: r.schedules, states: r.states });
    }
    samples.sort((a, b) => a.wallMs - b.wallMs);
    const m = samples[Math.floor(RUNS / 2)] ?? { wallMs: Number.NaN, schedules: 0, states: 0 };
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
    ];
  },
};
