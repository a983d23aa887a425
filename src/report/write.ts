// Writing the report file: only over a regular file or where nothing is (a link, a directory, a FIFO or a
// device in its place is refused with E_CANT_CREATE, exit 73), through a temporary beside it that is synced
// and renamed over the target only when every byte is written. A failure, or the process ending, removes the
// temporary; the old file stays as it was.
import { closeSync, constants, fsyncSync, lstatSync, openSync, type Stats, statSync, writeSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { removeOnExit } from '../cleanup.js';
import { Hfi1SdmaError } from '../errors.js';
import { outputError } from '../snapshot/output.js';

function kindOf(st: Stats): string | null {
  if (st.isFile()) return null;
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** E_CANT_CREATE when `target` exists and is not a regular file. */
function checkKind(target: string): void {
  const st = lstatSync(target, { throwIfNoEntry: false });
  const kind = st ? kindOf(st) : null;
  if (kind) {
    throw new Hfi1SdmaError(
      'E_CANT_CREATE',
      `${target} is ${kind}: hfi1-sdma writes a report only as a new file or over a regular one; choose another -o`,
    );
  }
}

/** Refuse `target` before any work is done: E_CANT_CREATE when it is not a regular file, or its directory is missing. */
export function checkOutputTarget(target: string): void {
  checkKind(target);
  if (!statSync(dirname(target), { throwIfNoEntry: false })?.isDirectory()) {
    throw outputError(Object.assign(new Error(`ENOENT: ${dirname(target)}`), { code: 'ENOENT' }), target);
  }
}

/** Replace `target` with `data` atomically (see the file's comment). */
export async function writeOutputFile(target: string, data: string | Uint8Array): Promise<void> {
  checkKind(target);
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
    checkKind(target);
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
