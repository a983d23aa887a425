// Where the monitor's state lives between runs, and reading and writing it safely: a regular file of this
// user in a directory of this user that no one else may write, never through a link, replaced atomically
// (a temporary beside it, flushed, renamed). Any problem is a note, never an error: the run goes on
// without carried tracks and says why.
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { UnitInfo } from '../backend.js';
import { Hfi1SdmaError, usageError } from '../errors.js';
import { containmentOf } from '../hw/contain.js';
import { readRegularFile } from '../hw/read-file.js';
import { inputHolding, realTarget } from '../output-file.js';
import type { MonitorTracks } from './monitor.js';
import {
  decodeState,
  encodeState,
  jsonDepth,
  type SavedState,
  STATE_MAX_DEPTH,
  STATE_VERSION,
  type StateKey,
  tracksFrom,
  unitIdentity,
} from './state.js';

/** The most a state file may hold: tracks of 32 engines and a few thousand waiters fit well under it. */
const STATE_CAP_BYTES = 8 << 20;

/** Who runs: the uid, and where a user's runtime files go. */
export interface StateEnv {
  uid: number;
  env: Readonly<Record<string, string | undefined>>;
  tmpdir: string;
}

/**
 * The default state file of `what` (health, textfile): under /run/hfi1-sdma/ as root, else under
 * $XDG_RUNTIME_DIR/hfi1-sdma/, else <tmpdir>/hfi1-sdma-<uid>/. A sysroot other than / gets a file of its own.
 */
export function defaultStatePath(what: string, sysroot: string, e: StateEnv): string {
  const dir =
    e.uid === 0
      ? '/run/hfi1-sdma'
      : e.env.XDG_RUNTIME_DIR
        ? join(e.env.XDG_RUNTIME_DIR, 'hfi1-sdma')
        : join(e.tmpdir, `hfi1-sdma-${e.uid}`);
  if (sysroot === '/') return join(dir, `${what}.state`);
  let h = 0x811c9dc5;
  for (const ch of sysroot) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return join(dir, `${what}-${h.toString(16).padStart(8, '0')}.state`);
}

/** The key of a state for these units: host, boot id (read under the sysroot when there), sysroot. */
export async function stateKey(sysroot: string, host: string | null, units: readonly UnitInfo[]): Promise<StateKey> {
  let bootId: string | null = null;
  try {
    // Read as every source is: a regular file, inside the sysroot.
    const text = readRegularFile(join(sysroot, 'proc/sys/kernel/random/boot_id'), 4096, containmentOf(sysroot)).toString('utf8');
    bootId = /^[0-9a-f-]{36}$/.test(text.trim()) ? text.trim() : null;
  } catch {
    // no boot id here (a sysroot without one): the host and the sysroot key the state
  }
  return { host, bootId, sysroot, units: Object.fromEntries(units.map((u) => [u.name, unitIdentity(u)])) };
}

/** Whether a directory is fit to hold the state: a directory (not a link) of this user, not writable by others. */
function dirProblem(dir: string, st: Stats, uid: number): string | null {
  if (st.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!st.isDirectory()) return `${dir} is not a directory`;
  // Root too: a directory another user owns could be swapped under the write (as ssh refuses such a key directory).
  if (st.uid !== uid) return `${dir} belongs to uid ${st.uid}, not this user`;
  // A sticky one (root's /tmp) lets no one else replace this user's file in it; the file's owner is checked too.
  if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) return `${dir} is writable by other users`;
  return null;
}

/** Whether a state file is this user's alone: owned by `uid` and writable by no one else. */
function fileProblem(path: string, st: Stats, uid: number): string | null {
  if (!st.isFile()) return `${path} is not a regular file`;
  if (st.uid !== uid) return `${path} belongs to uid ${st.uid}, not this user`;
  if ((st.mode & 0o022) !== 0) return `${path} is writable by other users`;
  return null;
}

/**
 * Refuse a --state value before anything is read: an empty one (E_USAGE), one inside a tree being
 * read (`inputs`, the sysroot: E_CANT_CREATE, nothing is written there).
 */
export function checkStateOption(given: string | undefined, inputs: readonly string[]): void {
  if (given === undefined || given === 'none') return;
  if (given === '') throw usageError('--state is empty: name a file (or none, to keep no state)');
  const real = realTarget(given);
  const input = real === null ? null : inputHolding(real, inputs);
  if (input !== null) {
    throw new Hfi1SdmaError(
      'E_CANT_CREATE',
      `--state ${given}: lies inside ${input}, which is being read: nothing is written there; name a file outside it`,
    );
  }
}

/**
 * Read the state at `path` for `key`: its tracks, or fresh tracks and a note saying why they were not used. A state
 * is used only from a directory of this user (sticky or not writable by others) and a file of this user that no other may write,
 * never through a link; what it holds is range-checked and its text escaped.
 */
export async function loadState(
  path: string,
  key: StateKey,
  nowMs: number,
  uid: number = process.getuid?.() ?? 0,
): Promise<{ tracks: MonitorTracks; note: string | null }> {
  const ignored = (why: string) => ({ ...tracksFrom(null, key, nowMs), note: `state ${path}: ${why}: ignored` });
  let text: string;
  try {
    const dir = dirname(path);
    const problem = dirProblem(dir, await lstat(dir), uid);
    if (problem) return ignored(`${problem}, so another user could have written it`);
    const h = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const st = await h.stat();
      if (!st.isFile()) return ignored('not a regular file');
      const mine = fileProblem(path, st, uid);
      if (mine) return ignored(`${mine}, so another user could have written it`);
      if (st.size > STATE_CAP_BYTES) return ignored(`larger than ${STATE_CAP_BYTES} bytes`);
      text = await h.readFile('utf8');
    } finally {
      await h.close();
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // No state yet is the first run, not a problem.
    if (code === 'ENOENT') return tracksFrom(null, key, nowMs);
    return ignored(
      code === 'ELOOP'
        ? 'a symbolic link, never followed'
        : code === 'EACCES'
          ? 'not readable by this user'
          : (code ?? String(e)),
    );
  }
  const decoded = decodeState(text);
  if ('problem' in decoded) return ignored(`corrupt (${decoded.problem})`);
  const r = tracksFrom(decoded.state, key, nowMs);
  return { tracks: r.tracks, note: r.note === null ? null : `state ${path}: ${r.note}` };
}

/** Whether an existing file at the state's path may be replaced: empty, or a state of this program (any version). */
async function replaceable(path: string, st: Stats): Promise<boolean> {
  if (st.size === 0) return true;
  if (st.size > STATE_CAP_BYTES) return false;
  try {
    const text = await readFile(path, {
      encoding: 'utf8',
      flag: constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    });
    if (jsonDepth(text, STATE_MAX_DEPTH) > STATE_MAX_DEPTH) return false;
    const v = JSON.parse(text) as Record<string, unknown> | null;
    return typeof v === 'object' && v !== null && typeof v.version === 'number' && typeof v.key === 'object' && 'tracks' in v;
  } catch {
    return false;
  }
}

/** Save the tracks at `path`; a note saying why not, or null when saved. `createDir`: make the default directory. */
export async function saveState(
  path: string,
  key: StateKey,
  tracks: MonitorTracks,
  nowMs: number,
  o: { uid: number; createDir: boolean },
): Promise<string | null> {
  const dir = dirname(path);
  let st: Stats;
  try {
    st = await lstat(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      return `state not saved: ${dir}: ${(e as NodeJS.ErrnoException).code ?? e}`;
    if (!o.createDir) return `state not saved: the directory ${dir} does not exist`;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      st = await lstat(dir);
    } catch (e2) {
      return `state not saved: cannot create ${dir} (${(e2 as NodeJS.ErrnoException).code ?? e2})`;
    }
  }
  const problem = dirProblem(dir, st, o.uid);
  if (problem) return `state not saved: ${problem}`;
  const saved: SavedState = { version: STATE_VERSION, key, savedAtMs: nowMs, tracks };
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const h = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await h.writeFile(encodeState(saved));
      await h.sync();
    } finally {
      await h.close();
    }
    // Only a state of this program (or an empty file) of this user is replaced: never a file named by mistake.
    const target = await lstat(path).catch(() => null);
    const refusal =
      target === null
        ? null
        : !target.isFile()
          ? `${path} is not a regular file (left as it is)`
          : (fileProblem(path, target, o.uid) ??
            ((await replaceable(path, target))
              ? null
              : `${path} is not a state file of hfi1-sdma (left as it is): name another --state, or remove it`));
    if (refusal !== null) {
      await unlink(tmp).catch(() => undefined);
      return `state not saved: ${refusal}`;
    }
    await rename(tmp, path);
    return null;
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    return `state not saved: ${path}: ${(e as NodeJS.ErrnoException).code ?? e}`;
  }
}
