// Reading one source file safely: never blocking (a FIFO in place of a debugfs file), never
// without bound (a link to /dev/zero, an endless line), only regular files. sysfs, debugfs and
// procfs files are all regular files, so anything else is not the kernel's file.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import type { Containment } from './contain.js';

/** The most a small source (a sysfs attribute, a module parameter, counter_names) may hold. */
export const SMALL_FILE_CAP_BYTES = 1 << 20;
/** /proc/interrupts grows with CPUs × IRQs: a few MB on the largest hosts. */
export const INTERRUPTS_CAP_BYTES = 64 << 20;

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** A source that is not a regular file, or larger than its cap. `code` is ENOTREG or EFBIG. */
export class SourceFileError extends Error {
  constructor(
    readonly code: 'ENOTREG' | 'EFBIG',
    readonly path: string,
    /** What the file is (`a directory`, `a FIFO (named pipe)`, …) or how large it grew. */
    readonly detail: string,
    readonly capBytes = 0,
  ) {
    super(`${path}: ${code === 'ENOTREG' ? `is ${detail}, not a regular file` : detail}`);
    this.name = 'SourceFileError';
  }
}

/** What a non-regular file is, in words. */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** A byte count for messages: `1 MiB`, `5.3 MiB`, `512 bytes`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const mib = n / (1 << 20);
  return mib >= 1 ? `${Number(mib.toFixed(1))} MiB` : `${Number((n / 1024).toFixed(1))} KiB`;
}

let scratch = Buffer.allocUnsafeSlow(64 * 1024);

/** The scratch buffer, at least `bytes` long, keeping its first `keep` bytes when it grows. */
function scratchOf(bytes: number, keep = 0): Buffer {
  if (scratch.length < bytes) {
    const bigger = Buffer.allocUnsafeSlow(Math.max(bytes, scratch.length * 2));
    scratch.copy(bigger, 0, 0, keep);
    scratch = bigger;
  }
  return scratch.subarray(0, bytes);
}

/**
 * Open `path` read-only and non-blocking, refusing anything but a regular file: checked before
 * opening (so no device or FIFO is ever opened) and again on the open descriptor. Under a sysroot
 * (`within`) the path must resolve inside it, and the inode checked is the inode opened.
 */
function openRegular(path: string, within: Containment | null): { fd: number; sizeBytes: number } {
  if (within !== null) {
    let sizeBytes = 0;
    const fd = within.openRead(path, (st) => {
      if (!st.isFile()) throw new SourceFileError('ENOTREG', path, fileKind(st));
      sizeBytes = st.size;
    });
    return { fd, sizeBytes };
  }
  const before = statSync(path);
  if (!before.isFile()) throw new SourceFileError('ENOTREG', path, fileKind(before));
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new SourceFileError('ENOTREG', path, fileKind(st));
    return { fd, sizeBytes: st.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * The whole of a regular file, read synchronously, failing with SourceFileError when it is not a
 * regular file (checked before opening, so no device is ever opened, and again on the open fd)
 * or holds more than `capBytes`. Other failures are Node's errors (ENOENT, EACCES, ELOOP, …), and
 * under a sysroot OutsideTreeError (EOUTSIDE) for a path that leads out of it.
 */
export function readRegularFile(path: string, capBytes: number, within: Containment | null = null): Buffer {
  const { fd, sizeBytes } = openRegular(path, within);
  try {
    // sysfs reports 4096 and debugfs/procfs 0 whatever they hold: the size is only a hint. Reads
    // go through one scratch buffer (grown up to the cap, kept) and each result is copied out at
    // its exact size, so a watch reading hundreds of small files a second does not churn
    // page-sized buffers through the allocator (RSS stays flat).
    let buf = scratchOf(Math.min(capBytes + 1, Math.max(sizeBytes + 1, 8192)));
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        buf = scratchOf(Math.min(capBytes + 1, buf.length * 2), total);
      }
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > capBytes) {
        throw new SourceFileError('EFBIG', path, `holds more than ${formatBytes(capBytes)}`, capBytes);
      }
    }
    return Buffer.from(buf.subarray(0, total));
  } finally {
    closeSync(fd);
  }
}

/** Open the file as readRegularFile does and read its first byte (what access(2) cannot tell: lockdown). */
export function probeRegularFile(path: string, within: Containment | null = null): void {
  const { fd } = openRegular(path, within);
  try {
    readSync(fd, Buffer.alloc(1), 0, 1, 0);
  } finally {
    closeSync(fd);
  }
}
