// File-system access of the live-host backend, passed in so tests can substitute it, and the
// translation of a failed read into a reason and a fix.

import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from 'node:fs';
import { Hfi1SdmaError } from '../errors.js';

/** The reads src/hw performs. Nothing here writes. */
export interface HwFs {
  readFile(path: string): Promise<Uint8Array>;
  readdir(path: string): Promise<string[]>;
  readlink(path: string): Promise<string>;
  /** Resolves when the file opens and yields its first byte here (what access(2) cannot tell: lockdown). */
  canRead(path: string): Promise<void>;
}

/**
 * The real file system. Reads are synchronous underneath: sysfs, debugfs and procfs files are
 * small and served from memory, a synchronous read costs a fraction of an asynchronous one, and
 * the files of one sample are read closer together.
 */
export const realFs: HwFs = {
  readFile: async (p) => readFileSync(p),
  readdir: async (p) => readdirSync(p),
  readlink: async (p) => readlinkSync(p),
  canRead: async (p) => {
    const fd = openSync(p, 'r');
    try {
      readSync(fd, Buffer.alloc(1), 0, 1, 0);
    } finally {
      closeSync(fd);
    }
  },
};

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
      `${path}: ${code}: the device or the hfi1 driver went away; run 'hfi1-sdma doctor'`,
      { cause: e },
    );
  }
  return new Hfi1SdmaError('E_UNAVAILABLE', `${path}: ${code || String(e)}`, { cause: e });
}

/** Read a whole source file; a failure becomes readError(). */
export async function readSource(fs: HwFs, path: string): Promise<Uint8Array> {
  try {
    return await fs.readFile(path);
  } catch (e) {
    throw readError(e, path);
  }
}

/** Read a text file, or null when it does not exist. */
export async function readTextOrNull(fs: HwFs, path: string): Promise<string | null> {
  try {
    return Buffer.from(await fs.readFile(path)).toString('utf8');
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
