// Every benchmark suite `npm run bench` runs, in order.
import { apiSuite, cliSuite, watchSuite } from './cli.js';
import { containSuite } from './contain.js';
import { coreSuite } from './core.js';
import { emuSuite } from './emu.js';
import { fleetSuite } from './fleet.js';
import type { BenchSuite } from './harness.js';
import { barBenchSuite, parseBenchSuite } from './hw.js';
import { monitorSuite } from './monitor.js';
import { portsSuite } from './ports.js';
import { qpStatsBenchSuite } from './qpstats.js';
import { raceSuite } from './race.js';
import { reportSuite } from './report.js';

export const SUITES: readonly BenchSuite[] = [
  coreSuite,
  parseBenchSuite,
  qpStatsBenchSuite,
  barBenchSuite,
  containSuite,
  portsSuite,
  monitorSuite,
  cliSuite,
  apiSuite,
  watchSuite,
  emuSuite,
  raceSuite,
  reportSuite,
  fleetSuite,
];
