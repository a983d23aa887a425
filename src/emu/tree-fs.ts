// The file-system pieces of the tree writer: its reserved names, the open flags that never
// follow a symlink, inode identity, and how a file-system error reads to the user.
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { Hfi1SdmaError } from '../errors.js';

/** The marker at the root of a tree this program wrote; a non-empty directory without it is refused. */
export const TREE_MARKER = '.hfi1-sdma-emulated';
/** Where temporaries are made before they are renamed into place (same file system: atomic). */
export const TREE_STAGING = '.hfi1-sdma-tmp';

export const EXCLUSIVE = constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
export const CREATE_FLAGS = constants.O_WRONLY | EXCLUSIVE;
export const REOPEN_FLAGS = constants.O_RDWR | constants.O_NOFOLLOW;

/** A file-system error turned into the program's error, naming the path and what to do. */
export function treeError(err: unknown, path: string, what: string): Hfi1SdmaError {
  if (err instanceof Hfi1SdmaError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'EPERM')
    return new Hfi1SdmaError('E_PERMISSION', `${path}: permission denied while ${what}; pass a directory you can write`, {
      cause: err,
    });
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EIO')
    return new Hfi1SdmaError('E_IO', `${path}: ${code} while ${what}; free some space and run again`, { cause: err });
  return new Hfi1SdmaError(
    'E_CANT_CREATE',
    `${path}: cannot write here (${code ?? String(err)}) while ${what}; pass an empty or new directory`,
    { cause: err },
  );
}

/** The error for a symlink (or anything else) where the tree needs a directory. */
export function refuseSymlink(path: string): Hfi1SdmaError {
  return new Hfi1SdmaError(
    'E_CANT_CREATE',
    `${path}: a symlink or special file where the emulated tree needs a directory; refusing to write through it. Remove it or pass an empty or new directory`,
  );
}

/** The inode a writer created, to tell it from anything put in its place later. */
export interface Inode {
  dev: number;
  ino: number;
}

/** Bytes of a string (UTF-8) or a buffer. */
export function byteLength(v: string | Buffer): number {
  return typeof v === 'string' ? Buffer.byteLength(v) : v.length;
}

/** Open a kept file for rewriting if it is still the inode given; −1 otherwise. */
export function reopen(path: string, inode: Inode): number {
  let fd = -1;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW);
    const st = fstatSync(fd);
    if (st.isFile() && st.dev === inode.dev && st.ino === inode.ino) return fd;
  } catch {
    // gone or replaced: a new file is made instead
  }
  if (fd >= 0) closeSync(fd);
  return -1;
}

/** The inode behind an open descriptor. */
export function inodeOf(fd: number): Inode {
  const st = fstatSync(fd);
  return { dev: st.dev, ino: st.ino };
}

/** True when `st` is a regular file and the inode given. */
export function isInode(st: { dev: number; ino: number; isFile(): boolean } | undefined, inode: Inode): boolean {
  return st?.isFile() === true && st.dev === inode.dev && st.ino === inode.ino;
}
