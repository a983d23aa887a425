// Every subcommand, in the order --help lists them.
import type { CommandSpec } from './context.js';
import { decodeCommand } from './decode.js';
import { enginesCommand } from './engines.js';
import { fitCommand } from './fit.js';
import { ringCommand } from './ring.js';
import { showCommand } from './show.js';

export const COMMANDS: readonly CommandSpec[] = [enginesCommand, showCommand, ringCommand, fitCommand, decodeCommand];
