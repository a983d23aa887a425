// File-system access of the live-host backend, passed in so tests can substitute it, and the
// translation of a failed read into a reason and a fix.
import { constants } from 'node:fs';
import { access, readdir, readFile, readlink } from 'node:fs/promises';

/** The reads src/hw performs. Nothing here writes. */
export interface HwFs {
  readFile(path: string): Promise<Uint8Array>;
  readdir(path: string): Promise<string[]>;
  readlink(path: string): Promise<string>;
  /** Resolves when the file exists and this process may read it (access(2) with R_OK). */
  canRead(path: string): Promise<void>;
}

/** The real file system. */
export const realFs: HwFs = {
  readFile: (p) => readFile(p),
  readdir: (p) => readdir(p),
  readlink: (p) => readlink(p),
  canRead: (p) => access(p, constants.R_OK),
};

/** The errno code of a failed file operation ('ENOENT', 'EACCES', …), or '' for anything else. */
export function errnoCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : '';
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
