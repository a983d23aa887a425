// Writing the report file: only over a regular file or where nothing is, never inside what is being read (the
// shared rule of output-file.ts: E_CANT_CREATE, exit 73, the place left as it is), through a temporary beside
// it that is synced and renamed over the target only when every byte is written. A failure, or the process
// ending, removes the temporary; the old file stays as it was.
import { closeSync, constants, fsyncSync, openSync, statSync, writeSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { removeOnExit } from '../cleanup.js';
import { checkOutputTarget } from '../output-file.js';
import { outputError } from '../snapshot/output.js';

/**
 * Refuse `target` before any work is done: E_CANT_CREATE (73) when it is not a regular file, lies inside one
 * of `inputs` (the snapshot or the sysroot being read), or its directory does not exist.
 */
export function checkReportTarget(target: string, inputs: readonly string[] = []): void {
  checkOutputTarget(target, '-o', inputs);
  if (!statSync(dirname(target), { throwIfNoEntry: false })?.isDirectory()) {
    throw outputError(Object.assign(new Error(`ENOENT: ${dirname(target)}`), { code: 'ENOENT' }), target);
  }
}

/** Replace `target` with `data` atomically (see the file's comment); `inputs` as for checkReportTarget. */
export async function writeOutputFile(target: string, data: string | Uint8Array, inputs: readonly string[] = []): Promise<void> {
  checkOutputTarget(target, '-o', inputs);
  const tmp = join(
    dirname(target),
    `.hfi1-sdma.${basename(target)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`,
  );
  let fd: number;
  let forget: () => void;
  try {
    // Created and registered for removal in one turn of the event loop: no signal can fall between them.
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    forget = removeOnExit(tmp);
  } catch (e) {
    throw outputError(e, target);
  }
  try {
    try {
      const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // Checked again just before the rename: a link or a directory put there meanwhile is not replaced.
    checkOutputTarget(target, '-o', inputs);
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true });
    forget();
    throw outputError(e, target);
  }
  forget();
  try {
    const dir = openSync(dirname(target), constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // the rename is done; a directory that cannot be synced (some file systems) loses nothing
  }
}
