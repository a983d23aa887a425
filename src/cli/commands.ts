// Every subcommand, in the order --help lists them.
import type { CommandSpec } from './context.js';
import { decodeCommand } from './decode.js';
import { fitCommand } from './fit.js';

export const COMMANDS: readonly CommandSpec[] = [fitCommand, decodeCommand];
