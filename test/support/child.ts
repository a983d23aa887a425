// Running the built CLI as a user does: `node bin/hfi1-sdma.js …` in a child process.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnSync } from './spawn.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = `${ROOT}bin/hfi1-sdma.js`;

/** What a finished child printed and returned. */
export interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the CLI to completion (bounded by `timeoutMs`). */
export function runChild(
  args: string[],
  opts: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): ChildRun {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    input: opts.input ?? '',
    env: { ...process.env, NO_COLOR: '', HFI1_SDMA_SYSROOT: '', ...opts.env },
    timeout: opts.timeoutMs ?? 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Start the CLI in the background; the caller stops it. */
export function startChild(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr.on('data', (d) => {
    stderr += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

/**
 * Start `hfi1-sdma ARGS` (an `export --listen HOST:0`) and wait, at most 20 s, for the banner naming its port; the
 * child is added to `children` for the caller to stop. `scrape` fetches /metrics once.
 */
export async function startExporterChild(args: string[], children: ChildProcess[]) {
  const env = { ...process.env, HFI1_SDMA_SYSROOT: '', NO_COLOR: '' };
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
  children.push(child);
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 20 s; stderr: ${stderr}`)), 20_000);
    child.stderr?.on('data', (d) => {
      stderr += String(d);
      const m = /serving http:\/\/\S+:(\d+)\/metrics/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on('exit', () => reject(new Error(`exited before serving; stderr: ${stderr}`)));
  });
  return { child, scrape: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), stderr: () => stderr };
}
