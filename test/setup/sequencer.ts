// The order the test files start in: first the slowest (SLOWEST, by hand: the files that mostly wait, on a real
// Prometheus, Slurm's daemons, a browser or a child's real-time loop, between the busiest ones, so that no more than
// two workers wait at once and the cores stay busy; the four longest started together left the cores idle for ten
// seconds), then the rest by the times of test/setup/durations.json, longest first, so that the last files to start
// are short ones and the workers end together. Vitest orders by the durations of the last run on this machine when it
// has them; a clean clone (every CI run) has none, and would start the rest by size, leaving the long ones to the
// end: 103 s there against 86 s in the checkout beside it. The table gives both the same order (`npm run
// test:durations` measures it again). Files in neither follow, in vitest's order. Before them all, the files of the
// isolated project (each in a worker of its own, vitest.config.ts): started later, one would take the place of a
// shared worker that had loaded and warmed the code, and a new shared worker would start cold after it. With
// --sequence.shuffle every file is shuffled (by --sequence.seed).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { Sfc32 } from '../../src/emu/prng.js';

/** The slowest files, in the order they start (their project-relative paths). */
export const SLOWEST = [
  'test/export/prometheus.test.ts',
  'test/e2e/matrix.test.ts',
  'test/e2e/matrix-port.test.ts',
  'test/kit/package.test.ts',
  'test/report/report.test.ts',
  'test/e2e/serve-live.test.ts',
  'test/emu/race-reduce.test.ts',
  'test/e2e/node-exporter-join.test.ts',
  'test/export/grafana.test.ts',
  'test/e2e/no-false-strand.prop.test.ts',
  'test/e2e/watch-tmux.test.ts',
  'test/kit/nhc.test.ts',
  'test/e2e/operator-child.test.ts',
];

/** Seconds each file of a second or more took, by its project-relative path. */
export const DURATIONS: Readonly<Record<string, number>> = (
  JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8')) as { files: Record<string, number> }
).files;

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { shuffle, seed } = this.ctx.config.sequence;
    if (shuffle) return shuffled(files, seed);
    const base = await super.sort(files);
    // A rank to sort by, descending: the isolated project, then SLOWEST in its order, then the table's times.
    const rank = (f: TestSpecification): number => {
      if (f.project.name === 'isolated') return Number.POSITIVE_INFINITY;
      const rel = relative(this.ctx.config.root, f.moduleId);
      const i = SLOWEST.indexOf(rel);
      return i >= 0 ? 1e6 - i : (DURATIONS[rel] ?? -1);
    };
    // Stable: files of equal rank (those in neither list) keep vitest's order.
    return base
      .map((f, i) => ({ f, i, r: rank(f) }))
      .sort((a, b) => b.r - a.r || a.i - b.i)
      .map((x) => x.f);
  }
}

/** `files` in an order drawn from `seed` (Fisher–Yates over the emulator's seeded generator): the same seed, the same order. */
function shuffled<T>(files: readonly T[], seed: number): T[] {
  const out = [...files];
  const rng = new Sfc32(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
