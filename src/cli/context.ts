// The shared shape of a command: its yargs definition and a run function that returns an exit code.
import type { Argv } from 'yargs';
import type { Backend } from '../backend.js';
import type { Io, Paint } from './io.js';

/** Options every command accepts (DESIGN.md, "CLI surface"). */
export interface GlobalOptions {
  backend: 'auto' | 'hw' | 'emu';
  sysroot: string | undefined;
  unit: number | undefined;
  json: boolean;
  color: boolean;
  /** Emulator options: used with --backend emu (or auto falling back to it) and by `emu …`. */
  seed: number;
  engines: number | undefined;
  descqCnt: number | undefined;
  workload: string | undefined;
  atMs: number | undefined;
  fault: string[];
}

/** What a command gets besides its own arguments. */
export interface CliContext {
  io: Io;
  global: GlobalOptions;
  paint: Paint;
  /** Open the backend the global options select (auto: hw when a unit is found, else emu). */
  openBackend(): Promise<Backend>;
}

/** One subcommand. `run` returns the process exit code. */
export interface CommandSpec {
  command: string | readonly string[];
  describe: string;
  builder?: (y: Argv) => Argv;
  run(args: Record<string, unknown>, ctx: CliContext): Promise<number>;
}
