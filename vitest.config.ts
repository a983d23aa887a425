import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/build.ts'],
    // Three workers on two cores: many files wait on child processes, a real Prometheus or the file
    // system, and no test depends on how fast the machine runs (they drive virtual time).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
