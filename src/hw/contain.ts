// Reading under a sysroot other than `/` (an emulated host, an unpacked snapshot, a tree someone
// sent) without ever leaving it. Each path is resolved by the kernel to a descriptor that names
// the file without opening it (O_PATH: no device is opened, no FIFO joined); the descriptor's real
// path (/proc/self/fd) must lie under the sysroot's real path, and only then is the same inode
// opened for reading through that descriptor. A symbolic link that stays inside the tree is
// followed; one that leads out of it is refused, naming the link. Nothing of a file outside the
// tree is ever read. Under `/` (a live host) the kernel's own sysfs links are followed as they are.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { escapeControls } from './parse/text.js';

/** O_PATH (Linux): a descriptor that names a file without opening it. */
export const O_PATH = 0o10000000;

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** True when `sysroot` is `/` in any spelling: the live host, read as the kernel shows it. */
export function isLiveRoot(sysroot: string): boolean {
  return resolve(sysroot) === '/';
}

/** A read under a sysroot that would leave it: `code` is EOUTSIDE, `entry` the link (or path) that leads out. */
export class OutsideTreeError extends Error {
  readonly code = 'EOUTSIDE';
  /** Why it is refused, without the path in front. */
  readonly detail: string;

  constructor(
    readonly path: string,
    /** The tree component that leads out (a symbolic link), or `path` itself. */
    readonly entry: string,
    /** What `entry` points at (its link text, controls escaped), or null when it is not a link. */
    readonly target: string | null,
    readonly sysroot: string,
  ) {
    const detail = outsideDetail(path, entry, target, sysroot);
    super(`${path}: ${detail}`);
    this.detail = detail;
    this.name = 'OutsideTreeError';
  }
}

/** Why a path that leads out of the tree is refused, in words (without the path itself in front). */
function outsideDetail(path: string, entry: string, target: string | null, sysroot: string): string {
  const what = target === null ? 'resolves' : `is a symbolic link to ${target},`;
  const who = entry === path ? what : `${entry} ${what}`;
  return `${who} outside the tree ${sysroot}: not followed (only links that stay inside the tree are); replace it, or point --sysroot at a real tree`;
}

/** The path of what descriptor `fd` names, from /proc (one readlink). */
function fdPath(fd: number): string {
  return readlinkSync(`/proc/self/fd/${fd}`);
}

/** Paths whose inode was last checked, at most; past it the memory starts afresh. */
const MAX_CHECKED = 4096;

/**
 * What identifies an inode for the check below: device, number, change and birth time. A rename,
 * a new link or any change of the inode moves its ctime; an inode number used again for a new file
 * comes with a new birth (and change) time.
 */
interface Identity {
  dev: number;
  ino: number;
  ctimeMs: number;
  birthtimeMs: number;
}

/** True when `st` is the inode `known` describes. */
function sameInode(known: Identity | undefined, st: Stats): boolean {
  return (
    known !== undefined &&
    known.ino === st.ino &&
    known.dev === st.dev &&
    known.ctimeMs === st.ctimeMs &&
    known.birthtimeMs === st.birthtimeMs
  );
}

/** The containment of one sysroot: every read resolves beneath it or fails with OutsideTreeError. */
export class Containment {
  /** The sysroot's real path and that path with a slash, as last resolved. */
  private real = '';
  private realSlash = '';
  /**
   * Per path, the identity of the inode it resolved to when that inode's real path was last found
   * inside the tree. While the path resolves to that same, unchanged inode, the real path need not
   * be read again (one readlink per read saved); anything else is checked afresh.
   */
  private readonly checked = new Map<string, Identity>();

  constructor(readonly sysroot: string) {}

  /**
   * Whether `path` (a real path from /proc) lies under the sysroot. The sysroot's real path is
   * kept between calls and resolved again only when a path does not lie under it (the sysroot
   * may be a link that was moved to another tree since).
   */
  private inside(real: string): boolean {
    if (this.real !== '' && (real === this.real || real.startsWith(this.realSlash))) return true;
    let now: string;
    try {
      now = realpathSync(this.sysroot);
    } catch {
      return false;
    }
    if (now === this.real) return false;
    this.real = now;
    this.realSlash = now === '/' ? '/' : `${now}/`;
    return real === now || real.startsWith(this.realSlash);
  }

  /**
   * An O_PATH descriptor of `path` (links followed) and its stat, checked to lie inside the tree;
   * the caller closes the descriptor.
   */
  private openChecked(path: string, directory = false): { fd: number; st: Stats } {
    const fd = openSync(path, O_PATH | (directory ? constants.O_DIRECTORY : 0));
    try {
      const st = fstatSync(fd);
      if (!sameInode(this.checked.get(path), st)) {
        if (!this.inside(fdPath(fd))) throw this.outside(path);
        if (this.checked.size >= MAX_CHECKED) this.checked.clear();
        this.checked.set(path, { dev: st.dev, ino: st.ino, ctimeMs: st.ctimeMs, birthtimeMs: st.birthtimeMs });
      }
      return { fd, st };
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  /** The stat of the file `path` names (links followed), checked to lie inside the tree. */
  stat(path: string): Stats {
    const { fd, st } = this.openChecked(path);
    closeSync(fd);
    return st;
  }

  /**
   * A descriptor open for reading (non-blocking) on what `path` names, inside the tree; `check`
   * sees its stat first (on the O_PATH descriptor: nothing is opened unless it passes), and the
   * inode opened is the one checked.
   */
  openRead(path: string, check: (st: Stats) => void): number {
    const { fd, st } = this.openChecked(path);
    try {
      check(st);
      return openSync(`/proc/self/fd/${fd}`, READ_FLAGS);
    } finally {
      closeSync(fd);
    }
  }

  /** The names in directory `path`, inside the tree. */
  readdir(path: string): string[] {
    const { fd } = this.openChecked(path, true);
    try {
      return readdirSync(`/proc/self/fd/${fd}`);
    } finally {
      closeSync(fd);
    }
  }

  /** The text of the symbolic link `path`, whose directory lies inside the tree (the link itself is not followed). */
  readlink(path: string): string {
    const { fd } = this.openChecked(dirname(path), true);
    try {
      return readlinkSync(`/proc/self/fd/${fd}/${basename(path)}`);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * The error for `path`, which leads outside: the first component that resolves outside the tree
   * (a symbolic link; its text, controls escaped), found by walking the path from the sysroot.
   */
  outside(path: string): OutsideTreeError {
    const rel = relative(this.sysroot, path);
    let at = this.sysroot;
    if (!rel.startsWith('..')) {
      for (const part of rel.split('/')) {
        if (part === '') continue;
        at = join(at, part);
        let real: string;
        try {
          real = realpathSync(at);
        } catch {
          break;
        }
        if (!this.inside(real)) {
          let target: string | null = null;
          try {
            if (lstatSync(at).isSymbolicLink()) target = escapeControls(readlinkSync(at));
          } catch {
            // gone meanwhile: named without its target
          }
          return new OutsideTreeError(path, at, target, this.sysroot);
        }
      }
    }
    return new OutsideTreeError(path, path, null, this.sysroot);
  }
}

const bySysroot = new Map<string, Containment>();

/** The containment of `sysroot` (one per sysroot, shared), or null for `/`, the live host. */
export function containmentOf(sysroot: string): Containment | null {
  if (isLiveRoot(sysroot)) return null;
  let c = bySysroot.get(sysroot);
  if (c === undefined) {
    c = new Containment(sysroot);
    bySysroot.set(sysroot, c);
  }
  return c;
}
