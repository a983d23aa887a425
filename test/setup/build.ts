// vitest global setup: compile and bundle the CLI so that child-process tests run what a user runs, and strip the
// types of every TypeScript file the workers load into the loader's cache (ts-hooks.mjs). Each project of the run
// calls it; the first builds.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
// @ts-expect-error: a plain ES module without declarations (the loader's hooks)
import { prepare } from './ts-hooks.mjs';

/** The .ts files under `dir`, recursively. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

export default async function setup(): Promise<void> {
  if (process.env.HFI1_SDMA_TEST_BUILT === '1') return;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const node = (args: string[]) => run(process.execPath, args, { cwd: root });
  const tsc = `${root}node_modules/typescript/bin/tsc`;
  // The three write apart (dist/src and dist/bench, dist/types, dist/bundle) and run at once.
  await Promise.all([
    node([tsc, '-p', `${root}tsconfig.build.json`]),
    // The public API's declarations (the examples import the package by its name, with its types).
    node([tsc, '-p', `${root}tsconfig.api.json`]),
    node(['--import', `${root}test/setup/ts-loader.mjs`, `${root}scripts/bundle.ts`]),
    prepare(['src', 'test', 'examples', 'bench', 'scripts'].flatMap((d) => tsFiles(join(root, d)))),
  ]);
  process.env.HFI1_SDMA_TEST_BUILT = '1';
}

/** Run a build step; its output is shown when it fails, and the run stops. */
async function run(cmd: string, args: string[], opts: { cwd: string }): Promise<void> {
  try {
    await promisify(execFile)(cmd, args, { ...opts, maxBuffer: 64 << 20 });
  } catch (e) {
    const { stdout = '', stderr = '' } = e as { stdout?: string; stderr?: string };
    process.stderr.write(`${stdout}${stderr}`);
    throw new Error(`test build step failed: ${[cmd, ...args].join(' ')}`);
  }
}
