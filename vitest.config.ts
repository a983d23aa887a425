import { defineConfig } from 'vitest/config';

// Files whose tests change process-wide state that cannot be undone (a stop signal, once requested, holds for
// the life of the process): each runs in a fresh module graph of its own.
const ISOLATED = ['test/cli/stop-and-warnings.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/setup/build.ts'],
    // Three workers on two cores: many files wait on child processes, a real Prometheus or the file
    // system, and no test depends on how fast the machine runs (they drive virtual time).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        // The files of one worker share their modules (loaded once, not once per file): no test leaves state
        // behind in them (environment variables are restored, every backend, exporter and registry is its own).
        test: { name: 'shared', include: ['test/**/*.test.ts', 'examples/**/*.test.ts'], exclude: ISOLATED, isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
    ],
  },
});
