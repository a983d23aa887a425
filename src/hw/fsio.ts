// File-system access of the live-host backend, passed in so tests can substitute it, and the
// translation of a failed read into a reason and a fix.

import { readdirSync, readlinkSync, statSync } from 'node:fs';
import { Hfi1SdmaError } from '../errors.js';
import { type Containment, containmentOf, OutsideTreeError } from './contain.js';
import { formatBytes, probeRegularFile, readRegularFile, SMALL_FILE_CAP_BYTES, SourceFileError } from './read-file.js';

/** The reads src/hw performs. Nothing here writes. */
export interface HwFs {
  /** A regular file's bytes, at most `capBytes` (1 MiB by default); never blocks, never a device. */
  readFile(path: string, capBytes?: number): Promise<Uint8Array>;
  readdir(path: string): Promise<string[]>;
  readlink(path: string): Promise<string>;
  /** Resolves when the file opens and yields its first byte here (what access(2) cannot tell: lockdown). */
  canRead(path: string): Promise<void>;
  /** The size in bytes of a regular file (following links), or null when it is absent or not a regular file. */
  size?(path: string): Promise<number | null>;
  /**
   * A recording whose capture listed /proc (a snapshot): a recorded proc directory without a process then means no
   * process held the device, not that processes cannot be seen.
   */
  recordedProcScan?: boolean;
}

/**
 * The real file system. Reads are synchronous underneath: sysfs, debugfs and procfs files are
 * small and served from memory, a synchronous read costs a fraction of an asynchronous one, and
 * the files of one sample are read closer together. Every file is opened non-blocking, must be a
 * regular file, and is read up to a cap (read-file.ts).
 */
export const realFs: HwFs = {
  readFile: async (p, cap) => readRegularFile(p, cap ?? SMALL_FILE_CAP_BYTES),
  readdir: async (p) => readdirSync(p),
  readlink: async (p) => readlinkSync(p),
  canRead: async (p) => probeRegularFile(p),
  size: async (p) => {
    try {
      const st = statSync(p, { throwIfNoEntry: false });
      return st?.isFile() ? st.size : null;
    } catch {
      return null;
    }
  },
};

/** The file system as seen from inside a sysroot other than `/`: every path resolves beneath it (contain.ts). */
export function containedFs(within: Containment): HwFs {
  return {
    readFile: async (p, cap) => readRegularFile(p, cap ?? SMALL_FILE_CAP_BYTES, within),
    readdir: async (p) => within.readdir(p),
    readlink: async (p) => within.readlink(p),
    canRead: async (p) => probeRegularFile(p, within),
    size: async (p) => {
      try {
        const st = within.stat(p);
        return st.isFile() ? st.size : null;
      } catch {
        return null;
      }
    },
  };
}

const fsByContainment = new WeakMap<Containment, HwFs>();

/** The reads of the live-host backend under `sysroot`: as they are under `/`, contained to the tree elsewhere. */
export function hwFsFor(sysroot: string): HwFs {
  const within = containmentOf(sysroot);
  if (within === null) return realFs;
  let fs = fsByContainment.get(within);
  if (fs === undefined) {
    fs = containedFs(within);
    fsByContainment.set(within, fs);
  }
  return fs;
}

/** The most a valid sdes can hold: 16 engines, each a header and a full ring of the longest lines. */
export function sdesCapBytes(descqCnt: number): number {
  return 16 * (1024 + descqCnt * 160);
}

/** The errno code of a failed file operation ('ENOENT', 'EACCES', …), or '' for anything else. */
export function errnoCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : '';
}

/**
 * A failed read of a source as one of our errors: permission (EACCES, or EPERM from lockdown),
 * a vanished device or driver (ENOENT, ENODEV, ENXIO), or anything else as unavailable.
 */
export function readError(e: unknown, path: string): Hfi1SdmaError {
  if (e instanceof SourceFileError) return sourceFileError(e);
  if (e instanceof OutsideTreeError) return new Hfi1SdmaError('E_UNAVAILABLE', e.message, { cause: e });
  const code = errnoCode(e);
  if (code === 'EACCES') return new Hfi1SdmaError('E_PERMISSION', `${path}: permission denied: run as root`, { cause: e });
  if (code === 'EPERM') {
    return new Hfi1SdmaError(
      'E_PERMISSION',
      `${path}: the kernel refused the read (EPERM): kernel lockdown restricts debugfs; see /sys/kernel/security/lockdown`,
      { cause: e },
    );
  }
  if (code === 'ENOENT' || code === 'ENODEV' || code === 'ENXIO') {
    return new Hfi1SdmaError(
      'E_DEVICE_GONE',
      `${path}: ${code}: the device or its driver (hfi1, hfi2) went away; run 'hfi1-sdma doctor'`,
      { cause: e },
    );
  }
  if (code === 'ELOOP') {
    return new Hfi1SdmaError('E_UNAVAILABLE', `${path}: a loop of symbolic links (ELOOP): not a kernel file; check the tree`, {
      cause: e,
    });
  }
  if (code === 'EISDIR') return sourceFileError(new SourceFileError('ENOTREG', path, 'a directory'));
  return new Hfi1SdmaError('E_UNAVAILABLE', `${path}: ${code || String(e)}`, { cause: e });
}

/**
 * A file that is not a regular file (E_UNAVAILABLE: the source cannot be read) or larger than its
 * cap (E_PARSE: no valid source is that large).
 */
export function sourceFileError(e: SourceFileError): Hfi1SdmaError {
  if (e.code === 'EFBIG') {
    return new Hfi1SdmaError(
      'E_PARSE',
      `${e.path}: holds more than ${formatBytes(e.capBytes)}, the most this source can hold: not the kernel's file (an endless file or a device?); check the tree`,
      { cause: e },
    );
  }
  return new Hfi1SdmaError('E_UNAVAILABLE', `${e.path}: ${notRegularReason(e.detail)}`, { cause: e });
}

/** Why a non-regular file is refused, and what to do. */
export function notRegularReason(kind: string): string {
  return `is ${kind}, not a regular file: sysfs, debugfs and procfs files are regular files, so this is not the kernel's file; replace it, or point --sysroot at a real tree`;
}

/** Read a whole source file (at most `capBytes`); a failure becomes readError(). */
export async function readSource(fs: HwFs, path: string, capBytes?: number): Promise<Uint8Array> {
  try {
    return await fs.readFile(path, capBytes);
  } catch (e) {
    throw readError(e, path);
  }
}

/** Read a text file, or null when it does not exist. */
export async function readTextOrNull(fs: HwFs, path: string, capBytes?: number): Promise<string | null> {
  try {
    return Buffer.from(await fs.readFile(path, capBytes)).toString('utf8');
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return null;
    throw e;
  }
}

/** The entries of a directory, or null when it cannot be listed. */
export async function readdirOrNull(fs: HwFs, path: string): Promise<string[] | null> {
  try {
    return await fs.readdir(path);
  } catch {
    return null;
  }
}

/**
 * Why a present file cannot be the kernel's (not a regular file, a loop of links, a link that
 * leads out of the tree), or null for any other failure. Synchronous: nothing more is looked up.
 */
export function oddReason(e: unknown): string | null {
  const code = errnoCode(e);
  if (code === 'ENOTREG') return notRegularReason((e as { detail: string }).detail);
  if (code === 'EISDIR') return notRegularReason('a directory');
  if (code === 'ELOOP')
    return "a loop of symbolic links (ELOOP): not the kernel's file; replace it, or point --sysroot at a real tree";
  if (e instanceof OutsideTreeError) return e.detail;
  return null;
}

/**
 * Why a file that is there cannot be read as a source (not a regular file, a symbolic link loop,
 * a dangling link), or null for the ordinary failures (absent, permission, lockdown).
 */
export async function oddFileReason(fs: HwFs, file: string, e: unknown): Promise<string | null> {
  const code = errnoCode(e);
  const odd = oddReason(e);
  if (odd !== null) return odd;
  if (code === 'ENOENT') {
    const target = await fs.readlink(file).catch(() => null);
    if (target !== null) return `a symbolic link to ${target}, which does not exist: not the kernel's file; replace it`;
  }
  return null;
}
