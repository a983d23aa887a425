// Temporary directories of one test file, removed after its tests. Call tempDirs at the top of the test file:
// the removal is registered there, for that file (a hook registered by a shared module would run for the first
// file that loads it only, since the files of a worker share their modules).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { spawnSync } from './spawn.js';

/**
 * Remove `dirs` and everything under them: by one `rm -rf` (a rendered sysroot is a thousand files, which Node's
 * recursive rmSync removes a JavaScript call at a time), or by rmSync where rm cannot be run.
 */
export function removeTrees(dirs: readonly string[]): void {
  if (dirs.length === 0) return;
  const r = spawnSync('rm', ['-rf', '--', ...dirs], { stdio: 'ignore' });
  if (r.status === 0) return;
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

/** A maker of fresh temporary directories named `prefix…`, all removed after the calling file's tests. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => removeTrees(dirs.splice(0)));
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
