// Run the CLI in-process with captured streams.

import type { Backend } from '../../src/backend.js';
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
  let stdout = '';
  let stderr = '';
  const io: Io = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
    isTTY,
    columns: 100,
    sleep: realSleep ? (ms) => new Promise((r) => setTimeout(r, ms)) : async () => {},
    readStdin: async () => stdin,
  };
  const code = await main(argv, io, backend ? { openBackend: async () => backend } : {});
  return { code, stdout, stderr };
}
