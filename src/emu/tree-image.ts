// A sparse image file in the emulated tree (resource0, the BAR): created once by rename, then
// updated in place so that a reader mapping it sees live values. Later passes pwrite only the
// blocks whose bytes changed, into the inode created, opened with O_NOFOLLOW through its
// directory's descriptor and checked by fstat; anything put in its place meanwhile is replaced by
// a new image, never written through.
import { closeSync, constants, fstatSync, ftruncateSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { EXCLUSIVE, type Inode, inodeOf, isInode, REOPEN_FLAGS, treeError } from './tree-fs.js';

/** What an image needs from the tree it lives in (paths relative to its root; at() reaches one through its directory's descriptor). */
export interface ImageTree {
  readonly root: string;
  at(rel: string): string;
  stagePath(): string;
  unstage(tmp: string): void;
}

/** One image at a path relative to the tree's root. */
export class ImageFile {
  private inode: Inode | null = null;
  /** The bytes last written at each block offset. */
  private readonly last = new Map<number, Buffer>();

  constructor(readonly rel: string) {}

  /** Make the image `size` bytes long with `blocks` (offset, bytes) in it. */
  update(tree: ImageTree, size: number, blocks: readonly (readonly [number, Buffer])[]): void {
    const path = join(tree.root, this.rel);
    const at = tree.at(this.rel);
    if (this.inode) {
      let fd = -1;
      try {
        fd = openSync(at, REOPEN_FLAGS);
        const st = fstatSync(fd);
        if (isInode(st, this.inode) && st.size === size) {
          for (const [offset, bytes] of blocks) {
            if (this.last.get(offset)?.equals(bytes)) continue;
            writeSync(fd, bytes, 0, bytes.length, offset);
            this.last.set(offset, Buffer.from(bytes));
          }
          return;
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ELOOP') throw treeError(err, path, 'updating the BAR image');
      } finally {
        if (fd >= 0) closeSync(fd);
      }
    }
    this.create(tree, path, at, size, blocks);
  }

  private create(tree: ImageTree, path: string, at: string, size: number, blocks: readonly (readonly [number, Buffer])[]): void {
    const tmp = tree.stagePath();
    this.inode = null;
    this.last.clear();
    try {
      const fd = openSync(tree.at(tmp), constants.O_RDWR | EXCLUSIVE, 0o644);
      try {
        ftruncateSync(fd, size);
        for (const [offset, bytes] of blocks) writeSync(fd, bytes, 0, bytes.length, offset);
        this.inode = inodeOf(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tree.at(tmp), at);
    } catch (err) {
      tree.unstage(tmp);
      this.inode = null;
      throw treeError(err, path, 'writing the BAR image');
    }
    for (const [offset, bytes] of blocks) this.last.set(offset, Buffer.from(bytes));
  }
}
