// The order the test files start in: the slowest first (each measured at 5 s or more on the 2-core machine, most
// of them waiting on a real Prometheus, a browser or a child's real-time loop), so that the last files to start are
// short ones and the workers end together. Vitest orders by the durations of the last run when it has them; a clean
// clone has none, and would start files by size. Before them all, the files of the isolated project (each in a
// worker of its own, vitest.config.ts): started later, one would take the place of a shared worker that had loaded
// and warmed the code, and a new shared worker would start cold after it. With --sequence.shuffle every file is
// shuffled (by --sequence.seed).
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { Sfc32 } from '../../src/emu/prng.js';

/** The slowest files, slowest first (their project-relative paths). */
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

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { shuffle, seed } = this.ctx.config.sequence;
    if (shuffle) return shuffled(files, seed);
    const base = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      if (f.project.name === 'isolated') return -1;
      const i = SLOWEST.findIndex((p) => f.moduleId.endsWith(`/${p}`));
      return i < 0 ? SLOWEST.length : i;
    };
    // Stable: the rest keep vitest's order (the last run's durations, or sizes).
    return base
      .map((f, i) => ({ f, i, r: rank(f) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
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
