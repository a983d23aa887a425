// The file-system pieces of the tree writer: its reserved names, the open flags that never
// follow a symlink, the directory descriptors every write goes through, inode identity, and how a
// file-system error reads to the user.
import { accessSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Hfi1SdmaError } from '../errors.js';

/** The marker at the root of a tree this program wrote; a non-empty directory without it is refused. */
export const TREE_MARKER = '.hfi1-sdma-emulated';
/** Where temporaries are made before they are renamed into place (same file system: atomic). */
export const TREE_STAGING = '.hfi1-sdma-tmp';

export const EXCLUSIVE = constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
export const CREATE_FLAGS = constants.O_WRONLY | EXCLUSIVE;
export const REOPEN_FLAGS = constants.O_RDWR | constants.O_NOFOLLOW;
/** A directory, never through a symlink at the last step (every earlier step is a descriptor). */
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A file-system error turned into the program's error, naming the path and what to do. */
export function treeError(err: unknown, path: string, what: string): Hfi1SdmaError {
  if (err instanceof Hfi1SdmaError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'EPERM')
    return new Hfi1SdmaError('E_PERMISSION', `${path}: permission denied while ${what}; pass a directory you can write`, {
      cause: err,
    });
  if (code === 'EROFS')
    return new Hfi1SdmaError(
      'E_CANT_CREATE',
      `${path}: a read-only file system (EROFS) while ${what}; pass a directory on a writable one`,
      {
        cause: err,
      },
    );
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

/**
 * Refuse a directory that another user owns: that user could swap what is in it for links while
 * this program writes there (ssh refuses a key directory another user controls for the same reason).
 */
export function checkOwner(fd: number, path: string, euid: number | undefined = process.geteuid?.()): void {
  if (euid === undefined) return;
  const { uid } = fstatSync(fd);
  if (uid !== euid) {
    try {
      accessSync(`/proc/self/fd/${fd}`, constants.W_OK);
    } catch (err) {
      throw treeError(err, path, 'writing the emulated host'); // not writable at all: that is what to say
    }
    throw new Hfi1SdmaError(
      'E_CANT_CREATE',
      `${path}: owned by uid ${uid}, not by this user (uid ${euid}): its owner could swap what is in it for links while hfi1-sdma writes there, so it is refused (as ssh refuses a key directory another user controls); pass a directory you own, or a new one`,
    );
  }
}

/** The path that reaches `name` in the directory open on `fd`, whatever became of that directory's own path. */
function under(fd: number, name: string): string {
  return `/proc/self/fd/${fd}/${name}`;
}

/**
 * The directories of one tree, as descriptors: the root, opened once (and again only when its path
 * no longer names it), and each directory below, opened (or made) component by component without
 * following a link, at most once per pass. A path built by at() resolves through these
 * descriptors, so a component swapped for a link after it was opened redirects nothing.
 */
export class DirFds {
  private rootFd = -1;
  private readonly fds = new Map<string, number>();

  constructor(readonly root: string) {}

  /** True while the root is open. */
  rootOpen(): boolean {
    return this.rootFd >= 0;
  }

  /** True when the root's path still names the directory held open (not removed, moved or replaced). */
  rootIsPath(): boolean {
    if (this.rootFd < 0) return false;
    const st = lstatSync(this.root, { throwIfNoEntry: false });
    const held = fstatSync(this.rootFd);
    return st?.isDirectory() === true && st.dev === held.dev && st.ino === held.ino;
  }

  /** (Re)open the root by its path, making it when it is gone; refused when it is a link, not a directory, or another user's. */
  openRoot(): void {
    this.closeAll();
    let fd: number;
    try {
      if (lstatSync(this.root, { throwIfNoEntry: false }) === undefined) mkdirSync(this.root, { recursive: true });
      fd = openSync(this.root, DIR_FLAGS);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'ELOOP') throw refuseSymlink(this.root);
      throw treeError(err, this.root, 'creating the directory for the emulated host');
    }
    try {
      checkOwner(fd, this.root);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.rootFd = fd;
  }

  /** Start a pass: every directory below the root is opened again when next used. */
  newPass(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }

  /** The descriptor of directory `rel` (`.` the root), opening or making each component without following links. */
  fd(rel: string): number {
    if (rel === '.' || rel === '') {
      if (this.rootFd < 0) this.openRoot();
      return this.rootFd;
    }
    const known = this.fds.get(rel);
    if (known !== undefined) return known;
    const at = under(this.fd(dirname(rel)), basename(rel));
    const path = join(this.root, rel);
    let fd: number;
    try {
      try {
        fd = openSync(at, DIR_FLAGS);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        mkdirSync(at, 0o755);
        fd = openSync(at, DIR_FLAGS);
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'ELOOP' || code === 'EEXIST') throw refuseSymlink(path);
      throw treeError(err, path, 'creating a directory of the emulated host');
    }
    try {
      checkOwner(fd, path);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.fds.set(rel, fd);
    return fd;
  }

  /** The path of `rel` through its directory's descriptor; the directories on the way are opened or made. */
  at(rel: string): string {
    return under(this.fd(dirname(rel)), basename(rel));
  }

  /** `/proc/self/fd/N` of directory `rel` when every component is a real directory now (nothing made or followed), else null. */
  existing(rel: string): string | null {
    if (rel === '.' || rel === '') return this.rootFd < 0 ? null : `/proc/self/fd/${this.rootFd}`;
    const known = this.fds.get(rel);
    if (known !== undefined) return `/proc/self/fd/${known}`;
    const parent = this.existing(dirname(rel));
    if (parent === null) return null;
    try {
      const fd = openSync(`${parent}/${basename(rel)}`, DIR_FLAGS);
      this.fds.set(rel, fd);
      return `/proc/self/fd/${fd}`;
    } catch {
      return null;
    }
  }

  /** The path of `rel` through its directory's descriptor when that directory exists now (nothing made), else null. */
  existingAt(rel: string): string | null {
    const parent = this.existing(dirname(rel));
    return parent === null ? null : `${parent}/${basename(rel)}`;
  }

  /** Close the descriptors of `rel` and of every directory under it (it is about to be removed). */
  forget(rel: string): void {
    for (const [k, fd] of this.fds) {
      if (k === rel || k.startsWith(`${rel}/`)) {
        closeSync(fd);
        this.fds.delete(k);
      }
    }
  }

  /** Close every descriptor, the root's too. */
  closeAll(): void {
    this.newPass();
    if (this.rootFd >= 0) closeSync(this.rootFd);
    this.rootFd = -1;
  }
}
