// `npm run soak`: the long randomized checks (SOAK=1 raises every property's run count).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.prop.test.ts'],
    testTimeout: 3_600_000,
    hookTimeout: 60_000,
  },
});
