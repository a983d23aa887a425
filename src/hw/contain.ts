// Reading under a sysroot other than `/` (an emulated host, an unpacked snapshot, a tree someone
// sent) without ever leaving it. The sysroot is opened once, as a directory descriptor, when the
// run first reads under it; its path is never resolved again, so a tree swapped or moved later
// (the sysroot's own path pointed at `/` for a moment) moves nothing. Every path is resolved
// beneath that descriptor by the kernel: openat2 with RESOLVE_BENEATH (no step may leave the tree:
// an absolute link or a `..` above its root fails with EXDEV) and RESOLVE_NO_MAGICLINKS (no /proc
// fd link is followed). A symbolic link that stays inside the tree is followed; one that leads
// out is refused, naming the link. Where the kernel has no openat2 (before Linux 5.6, or a filter
// that refuses it) each path is walked here a component at a time from the same descriptor, each
// step opened without following a link and each link's text resolved on the same walk, with no
// `..` above the root: the same rule, at more system calls per read. Under `/` (a live host) the
// kernel's own sysfs links are followed as they are: nothing here is used.
//
// No device or FIFO in the tree is opened: the first read of a path resolves it to a descriptor
// that opens nothing (O_PATH), checks what it is, and only then opens that same inode; a path
// found to be a regular file is opened directly at its later reads (one open per read), and
// anything else there then (a device node put in its place, which only root can make) is closed
// unread and refused.
import { closeSync, constants, fstatSync, openSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { endianness, constants as os } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { getSystemErrorMap } from 'node:util';
import { Hfi1SdmaError } from '../errors.js';
import { type DirCalls, dirCalls, O_CLOEXEC, openat2, RESOLVE_BENEATH, RESOLVE_NO_MAGICLINKS } from './ffi.js';
import { escapeControls } from './parse/text.js';

/** O_PATH (Linux): a descriptor that names a file without opening it. */
export const O_PATH = 0o10000000;

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const BENEATH = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
/** Links followed on one walk, at most (the kernel's own limit, MAXSYMLINKS). */
const MAX_LINKS = 40;
/** openat2 gives EAGAIN when a rename raced a `..` step; it is asked again this many times. */
const RETRIES = 8;
/** Paths remembered as regular files, at most; past it the memory starts afresh. */
const MAX_KNOWN = 4096;

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
    /** The link is absolute and names a place in the tree by the host's path (refused all the same). */
    absoluteInside = false,
  ) {
    const detail = absoluteInside
      ? `${entry === path ? '' : `${entry} `}is a symbolic link to ${target}, an absolute path: under a sysroot only relative links that stay inside the tree are followed (an absolute one would lead elsewhere once the tree is moved); make it relative, or point --sysroot at a real tree`.trimStart()
      : outsideDetail(path, entry, target, sysroot);
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

/** errno to its name and text, built once: Node makes the whole map again at each call (about 20 us). */
let errnoNames: Map<number, [string, string]> | undefined;

/**
 * A failed system call as Node reports one (`code` the errno's name), so callers read it as any other. No stack
 * is taken: an absent file is an answer here (a process with no task directory), met at every sample.
 */
function errnoError(errno: number, syscall: string, path: string): NodeJS.ErrnoException {
  errnoNames ??= getSystemErrorMap();
  const [code, what] = errnoNames.get(-errno) ?? [`errno ${errno}`, 'unknown error'];
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    // Worded as Node words its own (`ENOENT: no such file or directory, open '…'`).
    return Object.assign(new Error(`${code}: ${what}, ${syscall} '${path}'`), { code, errno: -errno, syscall, path });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const EXDEV = os.errno.EXDEV;
const EAGAIN = os.errno.EAGAIN;

/** A descriptor's entry under /proc, through which Node's calls reach what it names. */
function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

/** How paths are resolved beneath the root: the kernel's openat2, or the walk here. */
type Resolver = (root: number, rel: string, flags: number, shown?: string) => number;

/** openat2 beneath `root`; an errno error (EXDEV for a way out) otherwise. */
function kernelResolver(call: NonNullable<ReturnType<typeof openat2>>): Resolver {
  return (root, rel, flags, shown = rel) => {
    for (let i = 0; ; i++) {
      const r = call(root, rel, flags | O_CLOEXEC, BENEATH);
      if (r.fd >= 0) return r.fd;
      if (r.errno !== EAGAIN || i >= RETRIES) throw errnoError(r.errno, 'open', shown);
    }
  };
}

/**
 * The same rule without openat2: each component opened (O_PATH, never following a link) from the
 * descriptor of the one before, starting at the root; a link's text is spliced into what is left
 * of the path (an absolute one, or a `..` above the root, is EXDEV); `..` goes back to the
 * descriptor held for the parent, never through the file system, so a directory moved meanwhile
 * leads nowhere else. The last component is followed unless `flags` has O_NOFOLLOW; the result is
 * an O_PATH descriptor, reopened through /proc with `flags` when they ask for more.
 */
function walkResolver(root: number, rel: string, flags: number, shown = rel): number {
  const stack: number[] = [];
  const top = () => stack.at(-1) ?? root;
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  const noFollowLast = (flags & constants.O_NOFOLLOW) !== 0;
  let links = 0;
  try {
    while (parts.length > 0) {
      const part = parts.shift() as string;
      if (part === '..') {
        const up = stack.pop();
        if (up === undefined) throw errnoError(EXDEV, 'open', shown);
        closeSync(up);
        continue;
      }
      const fd = openSync(fdPath(top(), part), O_PATH | constants.O_NOFOLLOW);
      const st = fstatSync(fd);
      if (st.isSymbolicLink() && !(parts.length === 0 && noFollowLast)) {
        closeSync(fd);
        if (++links > MAX_LINKS) throw errnoError(os.errno.ELOOP, 'open', shown);
        const text = readlinkSync(fdPath(top(), part));
        if (text.startsWith('/')) throw errnoError(EXDEV, 'open', shown);
        parts.unshift(...text.split('/').filter((p) => p !== '' && p !== '.'));
        continue;
      }
      if (parts.length > 0 && !st.isDirectory()) {
        closeSync(fd);
        throw errnoError(os.errno.ENOTDIR, 'open', shown);
      }
      stack.push(fd);
    }
    const last = stack.pop() ?? openSync(fdPath(root), O_PATH);
    const wants = flags & ~constants.O_NOFOLLOW;
    if ((wants & O_PATH) !== 0) {
      if ((wants & constants.O_DIRECTORY) !== 0 && !fstatSync(last).isDirectory()) {
        closeSync(last);
        throw errnoError(os.errno.ENOTDIR, 'open', shown);
      }
      return last;
    }
    try {
      return openSync(fdPath(last), wants);
    } finally {
      closeSync(last);
    }
  } catch (e) {
    // Node names the /proc path it went through: named here by the caller's path, as the kernel's resolver is.
    const err = e as NodeJS.ErrnoException;
    if (err.syscall === 'open' && typeof err.errno === 'number') throw errnoError(-err.errno, 'open', shown);
    throw e;
  } finally {
    for (const fd of stack) closeSync(fd);
  }
}

/** Where a directory's entries and a link's text are read into (one listing at a time: the reads are synchronous). */
const direntBuffer = Buffer.allocUnsafeSlow(64 * 1024);
const linkBuffer = Buffer.allocUnsafeSlow(4096);
const LITTLE = endianness() === 'LE';

/** getdents64 and readlinkat, or null where they cannot be called (the names are then read through /proc). */
function dirCallsOrNull(): DirCalls | null {
  try {
    return dirCalls();
  } catch {
    return null;
  }
}

/** The names in the directory open at `fd` (without `.` and `..`), from its linux_dirent64 records. */
function direntNames(calls: DirCalls, fd: number, path: string): string[] {
  const names: string[] = [];
  for (;;) {
    const r = calls.getdents64(fd, direntBuffer);
    if (r.n < 0) throw errnoError(r.errno, 'scandir', path);
    if (r.n === 0) return names;
    // struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
    for (let at = 0; at < r.n; ) {
      const reclen = LITTLE ? direntBuffer.readUInt16LE(at + 16) : direntBuffer.readUInt16BE(at + 16);
      const start = at + 19;
      const end = direntBuffer.indexOf(0, start);
      const name = direntBuffer.toString('utf8', start, end < 0 || end > at + reclen ? at + reclen : end);
      if (name !== '.' && name !== '..') names.push(name);
      at += reclen;
    }
  }
}

/** The names of a directory in the order Node's readdir gives them (libuv sorts them, byte order). */
function sortedNames(names: string[]): string[] {
  return names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The resolver of this kernel: openat2 when it answers, the walk otherwise (decided once). */
let chosen: { resolve: Resolver; kernel: boolean } | null = null;

function resolverFor(root: number): { resolve: Resolver; kernel: boolean } {
  if (chosen) return chosen;
  let call: ReturnType<typeof openat2> = null;
  try {
    call = openat2();
  } catch {
    call = null; // no C library to call through: the walk needs none
  }
  if (call !== null) {
    const probe = call(root, '.', O_PATH | O_CLOEXEC, BENEATH);
    if (probe.fd >= 0) {
      closeSync(probe.fd);
      chosen = { resolve: kernelResolver(call), kernel: true };
      return chosen;
    }
    // ENOSYS (before Linux 5.6), EPERM or ENOSYS from a seccomp filter, E2BIG/EINVAL from an older struct: the walk.
  }
  chosen = { resolve: walkResolver, kernel: false };
  return chosen;
}

/** Which resolver reads are contained with: `openat2` (the kernel) or `walk` (each component here). */
export function containmentMode(): 'openat2' | 'walk' | 'undecided' {
  return chosen === null ? 'undecided' : chosen.kernel ? 'openat2' : 'walk';
}

/** Use the walk instead of openat2 from now on (tests of the fallback). */
export function useWalkResolver(on: boolean): void {
  chosen = on ? { resolve: walkResolver, kernel: false } : null;
}

/** The containment of one sysroot: every read resolves beneath its directory or fails with OutsideTreeError. */
export class Containment {
  /** The sysroot's directory, opened at the first read (O_PATH); −1 before, −2 once closed. */
  private root = -1;
  /** The sysroot as an absolute path, and with a slash: only to turn callers' paths into relative ones. */
  private readonly base: string;
  private readonly baseSlash: string;
  /** Relative paths last found to be regular files: opened directly (one open) at their next read. */
  private readonly known = new Set<string>();
  /** Holders of this containment (backends, a command's run); at zero it may be closed. */
  holds = 0;

  constructor(readonly sysroot: string) {
    this.base = resolve(sysroot);
    this.baseSlash = this.base === '/' ? '/' : `${this.base}/`;
  }

  /** Whether the directory was closed (a closed containment reads nothing). */
  get closed(): boolean {
    return this.root === -2;
  }

  /** The sysroot's directory descriptor, opened once: the boundary every read resolves beneath. */
  private rootFd(): number {
    if (this.root === -2) throw new Hfi1SdmaError('E_INTERNAL', `${this.sysroot}: read after the sysroot was closed`);
    if (this.root === -1) this.root = openSync(this.sysroot, O_PATH | constants.O_DIRECTORY);
    return this.root;
  }

  /** Close the sysroot's directory: nothing is read under it any more (safe twice). */
  close(): void {
    if (this.root >= 0) closeSync(this.root);
    this.root = -2;
    this.known.clear();
  }

  /** Whether the absolute path `text` lies in the tree, by the path it was named by or its real path (for messages only). */
  private names(text: string): boolean {
    if (!text.startsWith('/')) return false;
    const abs = resolve(text);
    let real = this.base;
    try {
      real = readlinkSync(fdPath(this.rootFd()));
    } catch {
      // the path it was named by is enough
    }
    return [this.base, real].some((b) => abs === b || abs.startsWith(b === '/' ? '/' : `${b}/`));
  }

  /** `path` relative to the sysroot (`.` for the sysroot itself), lexically; OutsideTreeError when it is not under it. */
  private relOf(path: string): string {
    const abs = resolve(path);
    if (abs === this.base) return '.';
    if (!abs.startsWith(this.baseSlash)) throw new OutsideTreeError(path, path, null, this.sysroot);
    return abs.slice(this.baseSlash.length);
  }

  /** A descriptor of what `rel` names beneath the root, opened with `flags`; EXDEV becomes OutsideTreeError. */
  private openAt(path: string, rel: string, flags: number): number {
    const root = this.rootFd();
    try {
      return resolverFor(root).resolve(root, rel, flags, path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EXDEV') throw this.outside(path);
      throw Object.assign(e as Error, { path });
    }
  }

  /** An O_PATH descriptor of `path` (links followed) and its stat; the caller closes it. */
  private openPath(path: string, rel: string, flags = 0): { fd: number; st: Stats } {
    const fd = this.openAt(path, rel, O_PATH | flags);
    try {
      return { fd, st: fstatSync(fd) };
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  /** The stat of the file `path` names (links followed), inside the tree. */
  stat(path: string): Stats {
    const { fd, st } = this.openPath(path, this.relOf(path));
    closeSync(fd);
    return st;
  }

  /** The stat of `path` itself (a link is not followed), inside the tree; undefined when it is absent. */
  lstat(path: string): Stats | undefined {
    try {
      const { fd, st } = this.openPath(path, this.relOf(path), constants.O_NOFOLLOW);
      closeSync(fd);
      return st;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw e;
    }
  }

  /**
   * A descriptor open for reading (non-blocking) on what `path` names, inside the tree; `check`
   * sees its stat and throws to refuse it. A path not known to be a regular file is checked on a
   * descriptor that opens nothing, and that same inode is then opened; a known one is opened at
   * once (one open), and anything but a regular file found there is closed unread.
   */
  openRead(path: string, check: (st: Stats) => void): number {
    const rel = this.relOf(path);
    if (this.known.has(rel) && resolverFor(this.rootFd()).kernel) {
      const fd = this.openAt(path, rel, READ_FLAGS);
      try {
        check(fstatSync(fd));
        return fd;
      } catch (e) {
        closeSync(fd);
        this.known.delete(rel);
        throw e;
      }
    }
    const { fd, st } = this.openPath(path, rel);
    try {
      check(st);
      const file = openSync(fdPath(fd), READ_FLAGS);
      if (st.isFile()) {
        if (this.known.size >= MAX_KNOWN) this.known.clear();
        this.known.add(rel);
      }
      return file;
    } finally {
      closeSync(fd);
    }
  }

  /** The names in directory `path`, inside the tree: one open of the directory, its entries read from it. */
  readdir(path: string): string[] {
    const rel = this.relOf(path);
    const calls = dirCallsOrNull();
    if (calls === null) {
      const { fd } = this.openPath(path, rel, constants.O_DIRECTORY);
      try {
        return readdirSync(fdPath(fd));
      } finally {
        closeSync(fd);
      }
    }
    const fd = this.openAt(path, rel, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK);
    try {
      return sortedNames(direntNames(calls, fd, path));
    } finally {
      closeSync(fd);
    }
  }

  /** The text of the symbolic link `path`, whose directory lies inside the tree (the link itself is not followed). */
  readlink(path: string): string {
    const rel = this.relOf(path);
    if (rel === '.') throw errnoError(os.errno.EINVAL, 'readlink', path);
    const calls = dirCallsOrNull();
    if (calls === null) {
      const { fd } = this.openPath(dirname(path), dirname(rel), constants.O_DIRECTORY);
      try {
        return readlinkSync(fdPath(fd, basename(rel)));
      } finally {
        closeSync(fd);
      }
    }
    // The link itself (O_PATH, not followed), its text read from that descriptor.
    const fd = this.openAt(path, rel, O_PATH | constants.O_NOFOLLOW);
    try {
      const r = calls.readlinkat(fd, '', linkBuffer);
      if (r.n < 0) throw errnoError(r.errno, 'readlink', path);
      if (r.n >= linkBuffer.length) throw errnoError(os.errno.ENAMETOOLONG, 'readlink', path);
      return linkBuffer.toString('utf8', 0, r.n);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * The error for `path`, which leads outside: the first component whose resolution leaves the tree
   * (a symbolic link; its text, controls escaped), found by resolving ever longer prefixes beneath
   * the root, never by the sysroot's path.
   */
  outside(path: string): OutsideTreeError {
    let rel: string;
    try {
      rel = this.relOf(path);
    } catch (e) {
      return e as OutsideTreeError;
    }
    const parts = rel.split('/');
    const root = this.rootFd();
    const { resolve: open } = resolverFor(root);
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      try {
        closeSync(open(root, prefix, O_PATH));
        continue;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EXDEV') break;
      }
      let text: string | null = null;
      try {
        const parent = open(root, i === 1 ? '.' : parts.slice(0, i - 1).join('/'), O_PATH | constants.O_DIRECTORY);
        try {
          text = readlinkSync(fdPath(parent, parts[i - 1] as string));
        } finally {
          closeSync(parent);
        }
      } catch {
        // not a link, or gone meanwhile: named without its target
      }
      const target = text === null ? null : escapeControls(text);
      return new OutsideTreeError(path, join(this.sysroot, prefix), target, this.sysroot, text !== null && this.names(text));
    }
    return new OutsideTreeError(path, path, null, this.sysroot);
  }
}

const bySysroot = new Map<string, Containment>();

/**
 * The containment of `sysroot` (one per sysroot while it is open, shared), or null for `/`, the
 * live host. Its directory is opened at its first read and kept until the last holder lets go.
 */
export function containmentOf(sysroot: string): Containment | null {
  if (isLiveRoot(sysroot)) return null;
  let c = bySysroot.get(sysroot);
  if (c === undefined || c.closed) {
    c = new Containment(sysroot);
    bySysroot.set(sysroot, c);
  }
  return c;
}

/**
 * Hold the containment of `sysroot` open (a backend while it is open, a command for its whole run):
 * its directory is opened now and never resolved again while anything holds it. The returned
 * function lets go; when the last holder has, the directory is closed and a later read opens it afresh.
 */
export function holdContainment(sysroot: string): () => void {
  const c = containmentOf(sysroot);
  if (c === null) return () => {};
  c.holds += 1;
  try {
    c.stat(sysroot);
  } catch {
    // a sysroot that cannot be opened now: its reads say why
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    c.holds -= 1;
    if (c.holds === 0) {
      c.close();
      if (bySysroot.get(sysroot) === c) bySysroot.delete(sysroot);
    }
  };
}
