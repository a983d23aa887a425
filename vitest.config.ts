import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
// The global setup files are TypeScript loaded by Node in this process too (see `experimental` below).
import './test/setup/ts-loader.mjs';
import { SlowestFirst } from './test/setup/sequencer.js';

const TS_LOADER = fileURLToPath(new URL('./test/setup/ts-loader.mjs', import.meta.url));

// Files whose tests change process-wide state that cannot be undone (a stop signal, once requested, holds for
// the life of the process): each runs in a fresh module graph of its own.
const ISOLATED = ['test/cli/stop-and-warnings.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/setup/build.ts', 'test/setup/tmpdir.ts'],
    // Node loads the modules itself (test/setup/ts-hooks.mjs strips the types), as the command runs: Vite's module
    // runner rewrites every imported name into a property read, which made the emulator's inner loops 3–4 times
    // slower. (No test mocks a module.)
    experimental: { viteModuleRunner: false, nodeLoader: false },
    // V8's tier-up budget as the command sets it (src/cli/tier-up.ts): the workers run the emulator in many short
    // stretches, which with V8's default were optimised, deoptimised and optimised again (a tenth of the emulating
    // files' CPU). No background threads of V8's (`--single-threaded`: the optimising compiler and the garbage
    // collector work on the worker's own thread): the workers already keep both cores busy, and the threads'
    // hand-offs only added CPU (the suite's CPU about 8% less in eleven alternated runs).
    execArgv: ['--single-threaded', '--interrupt-budget=1000000', '--import', TS_LOADER],
    // Four workers on two cores: the files that mostly wait (on a real Prometheus, Slurm's daemons, a browser, a
    // child's real-time loop; seven of them, 5-12 s each) overlap the others' CPU work. With three, two of them
    // often waited at once and a core idled (measured: 60-80% busy for 20 of the run's 90 s, 3 s longer from a
    // clean clone); with four both cores stay busy to the end. No test depends on how fast the machine runs (they
    // drive virtual time or wait on the condition).
    maxWorkers: 4,
    sequence: { sequencer: SlowestFirst },
    // A hang fails within a minute. No test takes more than a few seconds on a quiet 2-core machine: the
    // margin is for a machine many times slower or busier (a test that needs longer says so itself).
    testTimeout: 60_000,
    hookTimeout: 60_000,
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
