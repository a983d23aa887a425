// Run the CLI in-process with captured streams.

import type { Backend, Clock } from '../../src/backend.js';
import { openBackend } from '../../src/cli/backend-select.js';
import type { CommandSpec } from '../../src/cli/context.js';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';

/** A document without the stamp every document opens with (`host`, `time`, `toolVersion`): what two runs share. */
export function withoutStamp<T extends object>(doc: T): Omit<T, 'host' | 'time' | 'toolVersion'> {
  const { host: _h, time: _t, toolVersion: _v, ...rest } = doc as T & { host?: unknown; time?: unknown; toolVersion?: unknown };
  return rest;
}

/** What one run printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** An Io capturing what a run prints; `sleep` and `nowMs` as given. */
function capturedIo(
  env: Record<string, string | undefined>,
  isTTY: boolean,
  stdin: string,
  time: Pick<Io, 'sleep' | 'nowMs'>,
): { io: Io; printed: { stdout: string; stderr: string } } {
  const printed = { stdout: '', stderr: '' };
  const io: Io = {
    stdout: (t) => {
      printed.stdout += t;
    },
    stderr: (t) => {
      printed.stderr += t;
    },
    env,
    isTTY,
    columns: 100,
    ...time,
    readStdin: async () => stdin,
  };
  return { io, printed };
}

/** Run `hfi1-sdma argv…` in this process; `env` replaces the environment the CLI sees. */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined> = {},
  isTTY = false,
  stdin = '',
  backend?: Backend,
  /** Wait for real between samples (a capture whose instants must be apart in time); no wait by default. */
  realSleep = false,
): Promise<CliRun> {
  const sleep = realSleep ? (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) : async () => {};
  const { io, printed } = capturedIo(env, isTTY, stdin, { sleep });
  const code = await main(argv, io, backend ? { openBackend: async () => backend } : {});
  return { code, ...printed };
}

/**
 * Run `hfi1-sdma argv…` in this process in virtual time: a sleep moves the clock at once, and the live backend it
 * opens (on a sysroot) stamps its samples with that clock, so an observation of a tree takes no wall time. The
 * backend is chosen as the command chooses it; `env` replaces the environment the CLI sees.
 */
export async function runCliVirtual(
  argv: string[],
  env: Record<string, string | undefined> = {},
  /** Hand main the command specs, which takes the yargs path (no quick start, fast-path.ts). */
  commands?: readonly CommandSpec[],
): Promise<CliRun> {
  let now = Date.now();
  const clock: Clock = { nowMs: () => now };
  const sleep = async (ms: number) => {
    now += ms;
  };
  const { io, printed } = capturedIo(env, false, '', { sleep, nowMs: clock.nowMs });
  const code = await main(argv, io, {
    openBackend: (global, o, opts) => openBackend(global, o, { ...opts, clock }),
    ...(commands ? { commands } : {}),
  });
  return { code, ...printed };
}
