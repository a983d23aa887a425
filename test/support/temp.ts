// Temporary directories of one test file, removed after its tests. Call tempDirs at the top of the test file:
// the removal is registered there, for that file (a hook registered by a shared module would run for the first
// file that loads it only, since the files of a worker share their modules).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A maker of fresh temporary directories named `prefix…`, all removed after the calling file's tests. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
