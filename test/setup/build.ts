// vitest global setup: compile and bundle the CLI so that child-process tests run what a user runs, and strip the
// types of every TypeScript file the workers load into the loader's cache (ts-hooks.mjs). Each project of the run
// calls it; the first builds.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
  await prepare(['src', 'test', 'examples', 'bench', 'scripts'].flatMap((d) => tsFiles(join(root, d))));
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', `${root}tsconfig.build.json`], {
    cwd: root,
    stdio: 'inherit',
  });
  // The public API's declarations (the examples import the package by its name, with its types).
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', `${root}tsconfig.api.json`], {
    cwd: root,
    stdio: 'inherit',
  });
  execFileSync(process.execPath, [`${root}node_modules/tsx/dist/cli.mjs`, `${root}scripts/bundle.ts`], {
    cwd: root,
    stdio: 'inherit',
  });
  process.env.HFI1_SDMA_TEST_BUILT = '1';
}
