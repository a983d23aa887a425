// The shared shape of a command: its yargs definition and a run function that returns an exit code.
import type { Argv } from 'yargs';
import type { Backend } from '../backend.js';
import type { EmuCliOptions } from '../emu/index.js';
import type { Io, Paint } from './io.js';

/** Options every command accepts; the emulator's (EmuCliOptions) are used with --backend emu. */
export interface GlobalOptions extends EmuCliOptions {
  backend: 'auto' | 'hw' | 'emu';
  sysroot: string | undefined;
  /** `--unit`: a unit number, or a unit's name (`hfi2_0`) where numbers repeat across modules. */
  unit: number | string | undefined;
  json: boolean;
  /** --color (true: always), --no-color (false: never), or neither (undefined: on a terminal without NO_COLOR). */
  color: boolean | undefined;
  /** `--from`: a capture (or a twin's .json) the emulator starts from; `--from-instant`: its instant. */
  from?: string | undefined;
  fromInstant?: number | undefined;
}

/** What a command gets besides its own arguments. */
export interface CliContext {
  io: Io;
  global: GlobalOptions;
  paint: Paint;
  /**
   * Open the backend the global options select (auto: hw when a unit is found; else the emulator,
   * but only for a command whose spec allows the fallback).
   */
  openBackend(): Promise<Backend>;
}

/** One subcommand. `run` returns the process exit code. */
export interface CommandSpec {
  command: string | readonly string[];
  describe: string;
  builder?: (y: Argv) => Argv;
  /**
   * A monitoring command (health, export) sets this false: with no hfi1 or hfi2 unit it reports that,
   * and never falls back to the emulator. Interactive commands fall back (default true).
   */
  fallback?: boolean;
  run(args: Record<string, unknown>, ctx: CliContext): Promise<number>;
}
