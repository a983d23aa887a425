// `npm run soak`: the long randomized checks (SOAK=1 raises every property's run count), loaded as npm test
// loads them (vitest.config.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import './test/setup/ts-loader.mjs';

export default defineConfig({
  test: {
    include: ['test/**/*.prop.test.ts'],
    globalSetup: ['test/setup/build.ts', 'test/setup/tmpdir.ts'],
    experimental: { viteModuleRunner: false, nodeLoader: false },
    // V8's tier-up budget as npm test and the command set it (src/cli/tier-up.ts).
    execArgv: ['--interrupt-budget=1000000', '--import', fileURLToPath(new URL('./test/setup/ts-loader.mjs', import.meta.url))],
    testTimeout: 3_600_000,
    hookTimeout: 60_000,
  },
});
