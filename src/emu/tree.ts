// Writing the emulated host's tree safely and cheaply. The tree is the user's directory, and
// anything may sit in it: nothing is ever opened through a symlink. Every operation is relative to
// a directory descriptor (through /proc/self/fd/N/name): the root is opened once, and each directory
// below it is opened (or made) component by component with O_NOFOLLOW, at most once per pass, so a
// directory swapped for a link after it was opened redirects nothing. Each directory must be owned
// by this user. Each file is created in a hidden staging directory at the tree's root with
// O_CREAT|O_EXCL|O_NOFOLLOW and renamed into place (rename replaces a symlink itself, never writes
// through it), so readers listing a directory never see a temporary; a symlinked directory inside
// the tree is refused. Files whose bytes did not change since the last write are skipped.
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import {
  byteLength,
  CREATE_FLAGS,
  DirFds,
  type Inode,
  inodeOf,
  isInode,
  REOPEN_FLAGS,
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
let nextWriterId = 0;

export class TreeWriter {
  /** The bytes last written per relative path (a symlink: its target). */
  private readonly last = new Map<string, string | Buffer>();
  /** The inode each file was last given, by relative path. */
  private readonly inodes = new Map<string, Inode>();
  /** Descriptors of files overwritten in place, held open between passes (at most MAX_HELD). */
  readonly held = new Map<string, number>();
  /** Inodes replaced but kept (under staging names, relative to the root) for reuse, oldest first, by relative path. */
  private readonly spares = new Map<string, { rel: string; inode: Inode }[]>();
  /** The BAR image (and any other sparse image), by relative path. */
  private readonly images = new Map<string, ImageFile>();
  /** The root's descriptor and those of the directories opened in the current pass. */
  private readonly dirs: DirFds;
  private serial = 0;
  /** This writer among the process's: two units rendered into one tree each have a writer, staging side by side. */
  private readonly writerId = nextWriterId++;

  constructor(
    readonly root: string,
    private readonly markerText: string,
  ) {
    this.dirs = new DirFds(root);
  }

  /**
   * Start a pass: directories are opened again (once each) before anything is written in them.
   * When the marker is not the one this writer made (the tree was removed or replaced since),
   * everything remembered is dropped and the whole tree is written again.
   */
  beginPass(): void {
    this.dirs.newPass();
    const known = this.inodes.get(TREE_MARKER);
    if (known && this.dirs.rootOpen()) {
      const st = lstatSync(this.dirs.at(TREE_MARKER), { throwIfNoEntry: false });
      if (isInode(st, known) && this.dirs.rootIsPath()) return;
    }
    this.closeFiles();
    this.last.clear();
    this.inodes.clear();
    this.spares.clear();
    this.images.clear();
    this.dirs.openRoot();
    // Another writer of the same tree (a second unit of the host) may have written the marker: it is taken as
    // ours, or the two would replace it in turn and each pass of either would write the whole tree again.
    const marker = this.dirs.at(TREE_MARKER);
    const st = lstatSync(marker, { throwIfNoEntry: false });
    if (st?.isFile() && st.uid === process.getuid?.() && st.size === Buffer.byteLength(this.markerText)) {
      if (readFileSync(marker, 'utf8') === this.markerText) {
        this.inodes.set(TREE_MARKER, { dev: st.dev, ino: st.ino });
        this.last.set(TREE_MARKER, this.markerText);
        return;
      }
    }
    this.file(TREE_MARKER, this.markerText);
  }

  /** The path that reaches `rel` through its directory's descriptor (the directories on the way are opened or made). */
  at(rel: string): string {
    return this.dirs.at(rel);
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
    const path = join(this.root, rel);
    let tmp = '';
    try {
      const target = this.at(rel);
      let fd = -1;
      const spare = this.takeSpare(rel);
      if (spare) {
        fd = reopen(this.at(spare.rel), spare.inode);
        if (fd >= 0) {
          tmp = spare.rel;
          writeSync(fd, bytes, 0, bytes.length, 0);
          ftruncateSync(fd, bytes.length);
        } else this.unstage(spare.rel);
      }
      if (fd < 0) {
        tmp = this.stagePath();
        fd = openSync(this.at(tmp), CREATE_FLAGS, 0o644);
        writeSync(fd, bytes, 0, bytes.length);
      }
      const inode = inodeOf(fd);
      closeSync(fd);
      this.keepSpare(rel);
      renameSync(this.at(tmp), target);
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
  private keepSpare(rel: string): void {
    const inode = this.inodes.get(rel);
    if (!inode) return;
    const path = this.at(rel);
    if (!isInode(lstatSync(path, { throwIfNoEntry: false }), inode)) return;
    const spare = this.stagePath();
    linkSync(path, this.at(spare));
    let queue = this.spares.get(rel);
    if (!queue) {
      queue = [];
      this.spares.set(rel, queue);
    }
    queue.push({ rel: spare, inode });
  }

  /** The oldest kept inode of `rel`, once SPARE_DEPTH of them are kept. */
  private takeSpare(rel: string): { rel: string; inode: Inode } | undefined {
    const queue = this.spares.get(rel);
    return queue && queue.length >= SPARE_DEPTH ? queue.shift() : undefined;
  }

  /** pwrite `bytes` over the inode created for `rel`; false when it is no longer there (then it is created). */
  private overwrite(rel: string, bytes: Buffer): boolean {
    const known = this.inodes.get(rel);
    if (!known) return false;
    const path = join(this.root, rel);
    let fd = this.held.get(rel) ?? -1;
    try {
      const at = this.at(rel);
      if (fd >= 0) {
        // The held descriptor is our inode whatever happened to the path; the path is checked
        // (lstat) so that a file put in its place is replaced by the next write, not left there.
        const st = lstatSync(at, { throwIfNoEntry: false });
        if (!isInode(st, known)) {
          this.release(rel);
          return false;
        }
      } else {
        fd = openSync(at, REOPEN_FLAGS);
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

  /** Close every held descriptor and every directory's, the root's too (the tree stays as it is; the next pass opens them again). */
  closeFiles(): void {
    for (const rel of [...this.held.keys()]) this.release(rel);
    this.dirs.closeAll();
  }

  /** Make `rel` a symlink to `target` (replacing whatever else is there by rename). */
  link(rel: string, target: string): void {
    const want = `->${target}`;
    if (this.last.get(rel) === want) return;
    const path = join(this.root, rel);
    const at = this.at(rel);
    let current: string | null = null;
    try {
      current = readlinkSync(at);
    } catch {
      // absent, or not a symlink: replaced below
    }
    if (current !== target) {
      const tmp = this.stagePath();
      try {
        symlinkSync(target, this.at(tmp));
        renameSync(this.at(tmp), at);
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
      const inode = this.inodes.get(k);
      const path = this.dirs.existingAt(k);
      if (path !== null) {
        const st = lstatSync(path, { throwIfNoEntry: false });
        const ours = st !== undefined && (inode ? isInode(st, inode) : st.isSymbolicLink());
        try {
          if (ours) unlinkSync(path);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
            throw treeError(err, join(this.root, k), 'removing from the emulated host');
        }
      }
      this.release(k);
      this.last.delete(k);
      this.inodes.delete(k);
      for (const spare of this.spares.get(k) ?? []) this.unstage(spare.rel);
      this.spares.delete(k);
    }
    for (const d of [...dirs].sort((a, b) => b.length - a.length)) {
      const path = this.dirs.existing(d) === null ? null : this.dirs.existingAt(d);
      this.dirs.forget(d);
      if (path === null) continue;
      try {
        rmdirSync(path);
      } catch {
        // not empty (something this writer did not put there) or already gone: left as it is
      }
    }
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

  /** Remove the staging directory (empty unless a write failed half-way) and close every descriptor. */
  close(): void {
    for (const rel of [...this.held.keys()]) this.release(rel);
    try {
      const staging = this.dirs.existing(TREE_STAGING);
      const path = this.dirs.existingAt(TREE_STAGING);
      if (staging !== null && path !== null) {
        for (const name of readdirSync(staging)) {
          try {
            unlinkSync(`${staging}/${name}`);
          } catch {
            // not ours to remove (a directory someone put there): left
          }
        }
        this.dirs.forget(TREE_STAGING);
        rmdirSync(path);
      }
    } catch {
      // best effort: a leftover staging directory is hidden and reused next time
    }
    this.dirs.closeAll();
  }

  /** A fresh temporary name in the staging directory, relative to the root (reach it through at()). */
  stagePath(): string {
    return join(TREE_STAGING, `${process.pid}-${this.writerId}-${this.serial++}`);
  }

  /** Remove a temporary (relative to the root) that was not renamed into place. */
  unstage(tmp: string): void {
    try {
      unlinkSync(this.at(tmp));
    } catch {
      // never created, or already renamed
    }
  }

  /** Ensure every component of `rel` is a real directory (not a symlink), creating what is missing. */
  checkDir(rel: string): void {
    this.dirs.fd(rel);
  }
}
