// Writing the emulated host's tree safely and cheaply. The tree is the user's directory, and
// anything may sit in it: nothing is ever opened through a symlink. Each file is created in a
// hidden staging directory at the tree's root with O_CREAT|O_EXCL|O_NOFOLLOW and renamed into
// place (rename replaces a symlink itself, never writes through it), so readers listing a
// directory never see a temporary. Directories are checked with lstat; a symlinked directory
// inside the tree is refused. Files whose bytes did not change since the last write are skipped.
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import {
  byteLength,
  CREATE_FLAGS,
  type Inode,
  inodeOf,
  isInode,
  REOPEN_FLAGS,
  refuseSymlink,
  reopen,
  TREE_MARKER,
  TREE_STAGING,
  treeError,
} from './tree-fs.js';
import { ImageFile } from './tree-image.js';

export { TREE_MARKER, TREE_STAGING, treeError } from './tree-fs.js';

/** Most descriptors one writer holds open for in-place updates. */
const MAX_HELD = 256;
/** Replaced inodes kept per file before one is rewritten. */
const SPARE_DEPTH = 2;

/** One tree under a root directory already checked by openTree (cli) or created empty. */
export class TreeWriter {
  /** The bytes last written per relative path (a symlink: its target). */
  private readonly last = new Map<string, string | Buffer>();
  /** The inode each file was last given, by relative path. */
  private readonly inodes = new Map<string, Inode>();
  /** Descriptors of files overwritten in place, held open between passes (at most MAX_HELD). */
  readonly held = new Map<string, number>();
  /** Inodes replaced but kept (under staging names) for reuse, oldest first, by relative path. */
  private readonly spares = new Map<string, { path: string; inode: Inode }[]>();
  /** The BAR image (and any other sparse image), by relative path. */
  private readonly images = new Map<string, ImageFile>();
  /** Directories checked (lstat) in the current pass, by relative path. */
  private readonly checked = new Set<string>();
  private serial = 0;

  constructor(
    readonly root: string,
    private readonly markerText: string,
  ) {}

  /**
   * Start a pass: directories are checked again (once each) before anything is written in them.
   * When the marker is not the one this writer made (the tree was removed or replaced since),
   * everything remembered is dropped and the whole tree is written again.
   */
  beginPass(): void {
    this.checked.clear();
    const known = this.inodes.get(TREE_MARKER);
    const st = lstatSync(join(this.root, TREE_MARKER), { throwIfNoEntry: false });
    if (known && isInode(st, known)) return;
    this.closeFiles();
    this.last.clear();
    this.inodes.clear();
    this.spares.clear();
    this.images.clear();
    try {
      const r = lstatSync(this.root, { throwIfNoEntry: false });
      if (r === undefined) mkdirSync(this.root, { recursive: true });
      else if (!r.isDirectory()) throw refuseSymlink(this.root);
    } catch (err) {
      throw treeError(err, this.root, 'creating the directory for the emulated host');
    }
    this.file(TREE_MARKER, this.markerText);
  }

  /**
   * Make `rel` hold `data`, unless it already holds exactly that. A changed file is created anew
   * and renamed into place; with `inPlace`, a file whose length did not change is overwritten by
   * one pwrite into the inode this writer created (opened with O_NOFOLLOW and checked by fstat),
   * which costs a hundredth of a new file on a journaling file system. Use it only for small
   * values read whole (a counter), never for a file a reader parses line by line.
   */
  file(rel: string, data: string | Buffer, inPlace = false): void {
    const prev = this.last.get(rel);
    if (prev !== undefined && (typeof data === 'string' ? prev === data : typeof prev !== 'string' && prev.equals(data))) return;
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    const kept = typeof data === 'string' ? data : Buffer.from(data);
    if (inPlace && prev !== undefined && byteLength(prev) === bytes.length && this.overwrite(rel, bytes)) {
      this.last.set(rel, kept);
      return;
    }
    this.checkDir(dirname(rel));
    const path = join(this.root, rel);
    let tmp = '';
    try {
      let fd = -1;
      const spare = this.takeSpare(rel);
      if (spare) {
        fd = reopen(spare.path, spare.inode);
        if (fd >= 0) {
          tmp = spare.path;
          writeSync(fd, bytes, 0, bytes.length, 0);
          ftruncateSync(fd, bytes.length);
        } else this.unstage(spare.path);
      }
      if (fd < 0) {
        tmp = this.stagePath();
        fd = openSync(tmp, CREATE_FLAGS, 0o644);
        writeSync(fd, bytes, 0, bytes.length);
      }
      const inode = inodeOf(fd);
      closeSync(fd);
      this.keepSpare(rel, path);
      renameSync(tmp, path);
      this.release(rel);
      this.inodes.set(rel, inode);
    } catch (err) {
      if (tmp) this.unstage(tmp);
      this.release(rel);
      this.inodes.delete(rel);
      throw treeError(err, path, 'writing the emulated host');
    }
    this.last.set(rel, kept);
  }

  /**
   * Before `rel` is replaced, keep its inode (ours, checked by lstat) alive under a staging name,
   * so the replacement frees no blocks; it is rewritten SPARE_DEPTH replacements later, by when
   * any reader of it has long finished. On a journaling file system, freeing and allocating
   * blocks is most of what replacing a file costs.
   */
  private keepSpare(rel: string, path: string): void {
    const inode = this.inodes.get(rel);
    if (!inode) return;
    if (!isInode(lstatSync(path, { throwIfNoEntry: false }), inode)) return;
    const spare = this.stagePath();
    linkSync(path, spare);
    let queue = this.spares.get(rel);
    if (!queue) {
      queue = [];
      this.spares.set(rel, queue);
    }
    queue.push({ path: spare, inode });
  }

  /** The oldest kept inode of `rel`, once SPARE_DEPTH of them are kept. */
  private takeSpare(rel: string): { path: string; inode: Inode } | undefined {
    const queue = this.spares.get(rel);
    return queue && queue.length >= SPARE_DEPTH ? queue.shift() : undefined;
  }

  /** pwrite `bytes` over the inode created for `rel`; false when it is no longer there (then it is created). */
  private overwrite(rel: string, bytes: Buffer): boolean {
    const known = this.inodes.get(rel);
    if (!known) return false;
    this.checkDir(dirname(rel));
    const path = join(this.root, rel);
    let fd = this.held.get(rel) ?? -1;
    try {
      if (fd >= 0) {
        // The held descriptor is our inode whatever happened to the path; the path is checked
        // (lstat) so that a file put in its place is replaced by the next write, not left there.
        const st = lstatSync(path, { throwIfNoEntry: false });
        if (!isInode(st, known)) {
          this.release(rel);
          return false;
        }
      } else {
        fd = openSync(path, REOPEN_FLAGS);
        const st = fstatSync(fd);
        if (!isInode(st, known)) {
          closeSync(fd);
          return false;
        }
        if (this.held.size < MAX_HELD) this.held.set(rel, fd);
      }
      writeSync(fd, bytes, 0, bytes.length, 0);
      if (this.held.get(rel) !== fd) closeSync(fd);
      return true;
    } catch (err) {
      this.release(rel);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ELOOP' || code === 'EISDIR') return false;
      throw treeError(err, path, 'updating the emulated host');
    }
  }

  /** Close the held descriptor of `rel`, if any. */
  private release(rel: string): void {
    const fd = this.held.get(rel);
    if (fd === undefined) return;
    this.held.delete(rel);
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }

  /** Close every held descriptor (the tree stays as it is). */
  closeFiles(): void {
    for (const rel of [...this.held.keys()]) this.release(rel);
  }

  /** Make `rel` a symlink to `target` (replacing whatever else is there by rename). */
  link(rel: string, target: string): void {
    const want = `->${target}`;
    if (this.last.get(rel) === want) return;
    this.checkDir(dirname(rel));
    const path = join(this.root, rel);
    let current: string | null = null;
    try {
      current = readlinkSync(path);
    } catch {
      // absent, or not a symlink: replaced below
    }
    if (current !== target) {
      const tmp = this.stagePath();
      try {
        symlinkSync(target, tmp);
        renameSync(tmp, path);
      } catch (err) {
        this.unstage(tmp);
        throw treeError(err, path, 'linking the emulated host');
      }
    }
    this.last.set(rel, want);
  }

  /**
   * Remove `rel` and what this writer wrote under it: a file only while it is still the inode written, a symlink
   * only while it is one (never followed), then the directories, deepest first, once empty. Anything under a path
   * component that is no longer a real directory is left alone.
   */
  removeDir(rel: string): void {
    const prefix = `${rel}/`;
    const mine = [...this.last.keys()].filter((k) => k.startsWith(prefix));
    const dirs = new Set<string>([rel]);
    for (const k of mine) {
      for (let d = dirname(k); d.startsWith(prefix); d = dirname(d)) dirs.add(d);
      const path = join(this.root, k);
      const inode = this.inodes.get(k);
      if (this.realDir(dirname(k))) {
        const st = lstatSync(path, { throwIfNoEntry: false });
        const ours = st !== undefined && (inode ? isInode(st, inode) : st.isSymbolicLink());
        try {
          if (ours) unlinkSync(path);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw treeError(err, path, 'removing from the emulated host');
        }
      }
      this.release(k);
      this.last.delete(k);
      this.inodes.delete(k);
      for (const spare of this.spares.get(k) ?? []) this.unstage(spare.path);
      this.spares.delete(k);
    }
    for (const d of [...dirs].sort((a, b) => b.length - a.length)) {
      this.checked.delete(d);
      if (!this.realDir(d)) continue;
      try {
        rmdirSync(join(this.root, d));
      } catch {
        // not empty (something this writer did not put there) or already gone: left as it is
      }
    }
  }

  /** True when every component of `rel` under the root is a real directory now (lstat, nothing followed or created). */
  private realDir(rel: string): boolean {
    for (let d = rel; d !== '.' && d !== ''; d = dirname(d)) {
      if (!lstatSync(join(this.root, d), { throwIfNoEntry: false })?.isDirectory()) return false;
    }
    return true;
  }

  /** A sparse image of `size` bytes at `rel` with `blocks` (offset, bytes) written (tree-image.ts). */
  image(rel: string, size: number, blocks: readonly (readonly [number, Buffer])[]): void {
    let img = this.images.get(rel);
    if (!img) {
      img = new ImageFile(rel);
      this.images.set(rel, img);
    }
    img.update(this, size, blocks);
  }

  /** Remove the staging directory (empty unless a write failed half-way). */
  close(): void {
    this.closeFiles();
    try {
      rmSync(join(this.root, TREE_STAGING), { recursive: true, force: true });
    } catch {
      // best effort: a leftover staging directory is hidden and reused next time
    }
  }

  /** A fresh temporary name in the staging directory (checked like any directory). */
  stagePath(): string {
    this.checkDir(TREE_STAGING);
    return join(this.root, TREE_STAGING, `${process.pid}-${this.serial++}`);
  }

  /** Remove a temporary that was not renamed into place. */
  unstage(tmp: string): void {
    try {
      unlinkSync(tmp);
    } catch {
      // never created, or already renamed
    }
  }

  /** Ensure every component of `rel` is a real directory (not a symlink), creating what is missing. */
  checkDir(rel: string): void {
    if (rel === '.' || rel === '' || this.checked.has(rel)) return;
    this.checkDir(dirname(rel));
    const path = join(this.root, rel);
    try {
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (st === undefined) mkdirSync(path);
      else if (!st.isDirectory()) throw refuseSymlink(path);
    } catch (err) {
      throw treeError(err, path, 'creating a directory of the emulated host');
    }
    this.checked.add(rel);
  }
}
