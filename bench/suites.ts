// Every benchmark suite `npm run bench` runs, in order.
import { coreSuite } from './core.js';
import type { BenchSuite } from './harness.js';

export const SUITES: readonly BenchSuite[] = [coreSuite];
