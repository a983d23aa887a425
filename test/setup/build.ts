// vitest global setup: compile and bundle the CLI so that child-process tests run what a user runs.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
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
}
