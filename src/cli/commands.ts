// Every subcommand, in the order --help lists them.
import type { CommandSpec } from './context.js';
import { decodeCommand } from './decode.js';
import { doctorCommand } from './doctor.js';
import { emuCommand } from './emu.js';
import { enginesCommand } from './engines.js';
import { exportCommand } from './export.js';
import { fitCommand } from './fit.js';
import { healthCommand } from './health.js';
import { logCommand } from './log.js';
import { progressCommand } from './progress.js';
import { ringCommand } from './ring.js';
import { showCommand } from './show.js';
import { snapshotCommand } from './snapshot.js';
import { watchCommand } from './watch.js';

export const COMMANDS: readonly CommandSpec[] = [
  enginesCommand,
  showCommand,
  ringCommand,
  watchCommand,
  progressCommand,
  fitCommand,
  decodeCommand,
  logCommand,
  healthCommand,
  doctorCommand,
  snapshotCommand,
  exportCommand,
  emuCommand,
];
