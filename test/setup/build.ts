// vitest global setup: compile and bundle the CLI so that child-process tests run what a user runs, and strip the
// types of every TypeScript file the workers load into the loader's cache (ts-hooks.mjs). Each project of the run
// calls it; the first builds. A build newer than every source it is made from (the one `npm ci` just made, with
// the same three steps as its `prepare` script) is not made again.
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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

/** The directories of TypeScript the build and the tests are made from. */
const SOURCES = ['src', 'test', 'examples', 'bench', 'scripts'];
/** The other files a build depends on. */
const INPUTS = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.api.json'];
/** One output of each build step. */
const OUTPUTS = ['dist/src/cli/main.js', 'dist/types/api/index.d.ts', 'dist/bundle/main.mjs', 'dist/bundle/api/hfi1-sdma.mjs'];

/** True when every output exists and is newer than every input. */
function built(root: string, sources: string[]): boolean {
  const mtime = (p: string): number => statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? Number.NaN;
  const newestInput = Math.max(...sources.map(mtime), ...INPUTS.map((p) => mtime(join(root, p))).filter((t) => !Number.isNaN(t)));
  const outputs = OUTPUTS.map((p) => mtime(join(root, p)));
  return outputs.every((t) => !Number.isNaN(t)) && Math.min(...outputs) > newestInput;
}

export default async function setup(): Promise<void> {
  if (process.env.HFI1_SDMA_TEST_BUILT === '1') return;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const node = (args: string[]) => run(process.execPath, args, { cwd: root });
  const tsc = `${root}node_modules/typescript/bin/tsc`;
  const sources = SOURCES.flatMap((d) => tsFiles(join(root, d)));
  const steps = built(root, sources)
    ? []
    : [
        // The three write apart (dist/src and dist/bench, dist/types, dist/bundle) and run at once.
        node([tsc, '-p', `${root}tsconfig.build.json`]),
        // The public API's declarations (the examples import the package by its name, with its types).
        node([tsc, '-p', `${root}tsconfig.api.json`]),
        node(['--import', `${root}test/setup/ts-loader.mjs`, `${root}scripts/bundle.ts`]),
      ];
  await Promise.all([...steps, prepare(sources)]);
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
