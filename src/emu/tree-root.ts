// Where an emulated tree may be written: never `/` (in any spelling), never a file, never a
// non-empty directory this program did not write (its marker file says it did).
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, readSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Hfi1SdmaError, usageError } from '../errors.js';
import { TREE_MARKER, TREE_STAGING, TreeWriter, treeError } from './tree.js';

const MARKER_PREFIX = 'hfi1-sdma ';

/** The marker's contents: the tool and its version. */
export function markerText(version: string): string {
  return `${MARKER_PREFIX}${version}: an emulated hfi1 host; this directory may be rewritten by hfi1-sdma emu write/serve\n`;
}

function hasMarker(root: string): boolean {
  let fd = -1;
  try {
    fd = openSync(join(root, TREE_MARKER), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const b = Buffer.alloc(MARKER_PREFIX.length);
    const n = readSync(fd, b, 0, b.length, 0);
    return lstatSync(join(root, TREE_MARKER)).isFile() && b.toString('utf8', 0, n) === MARKER_PREFIX;
  } catch {
    return false;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/** Make `dir` and its missing parents one at a time, so that a failure carries its own errno (EROFS, EACCES). */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); lstatSync(d, { throwIfNoEntry: false }) === undefined; d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) mkdirSync(d);
}

/**
 * Check `dir` as the root of an emulated tree and return a writer for it, with the marker
 * written. Refuses `/` (also `/.`, `//`, `/..` or a link to it) and a file (E_USAGE), a
 * non-empty directory without the marker and a directory another user owns (E_CANT_CREATE), and
 * maps EACCES to E_PERMISSION.
 */
export function openTree(dir: string, version: string): TreeWriter {
  const never = `never / or a directory holding anything else`;
  if (resolve(dir) === '/')
    throw usageError(`--sysroot ${dir}: that is /, which is never written; pass an empty or new directory`);
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (st === undefined) {
    try {
      makeDirs(dir);
    } catch (err) {
      throw treeError(err, dir, 'creating the directory for the emulated host');
    }
  }
  let root: string;
  try {
    root = realpathSync(dir);
  } catch (err) {
    throw treeError(err, dir, 'resolving the directory for the emulated host');
  }
  if (root === '/')
    throw usageError(`--sysroot ${dir}: that resolves to /, which is never written; pass an empty or new directory`);
  const rst = lstatSync(root);
  if (!rst.isDirectory())
    throw usageError(
      `--sysroot ${dir}: not a directory; emu write/serve need a directory to write the emulated host into (an empty or new one, ${never})`,
    );
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch (err) {
    throw treeError(err, dir, 'listing the directory for the emulated host');
  }
  const content = entries.filter((n) => n !== TREE_STAGING);
  if (content.length > 0 && !hasMarker(root))
    throw new Hfi1SdmaError(
      'E_CANT_CREATE',
      `--sysroot ${dir}: a non-empty directory that hfi1-sdma did not write (no ${TREE_MARKER}); refusing to write into it. Pass an empty or new directory`,
    );
  const w = new TreeWriter(root, markerText(version));
  w.beginPass();
  return w;
}
