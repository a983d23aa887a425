// The private temporary trees of a run (a snapshot unpacked to be read, the emulator's host rendered to be
// captured): made under $TMPDIR (mode 0700) with a marker naming the process that owns them, removed when
// they are closed and when the process ends (cleanup.ts), and, when that process was killed (SIGKILL, the
// OOM killer, systemd's stop timeout), by the next run that makes one: a tree of this user whose owner is
// gone is removed then. A tree without a marker (another program's, or one being made this instant) is left.
import {
  closeSync,
  constants,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeOnExit } from './cleanup.js';

/** The names private trees start with, one per kind of run that makes them. */
export const PRIVATE_TREE_PREFIXES = ['hfi1-sdma-snapshot-', 'hfi1-sdma-capture-', 'hfi1-sdma-emu-'] as const;
export type PrivateTreePrefix = (typeof PRIVATE_TREE_PREFIXES)[number];

/** The marker in a private tree's root: `<pid> <start time>` of the process that owns it. */
export const OWNER_MARKER = '.hfi1-sdma-owner';

/** A private tree: its root (holding the marker), and how it is removed. */
export interface PrivateTree {
  root: string;
  /** Remove the tree now (safe twice). */
  remove(): Promise<void>;
}

/** A process's start time (clock ticks after boot, /proc/PID/stat field 22), or '' when /proc does not say. */
function startTimeOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Field 2 (the command) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

/** Whether the process a marker names still runs: the pid is there with the same start time. */
function ownerRuns(marker: string): boolean {
  const [pidText = '', started = ''] = marker.trim().split(' ');
  if (!/^[1-9][0-9]{0,9}$/.test(pidText)) return true; // not a marker this program wrote: left alone
  const pid = Number(pidText);
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const now = startTimeOf(pid);
  // Another process now has the pid: the owner is gone.
  return now === '' || started === '' || now === started;
}

/** The marker of the tree at `root` (read without following a link; at most 64 bytes), or null when there is none. */
function markerOf(root: string): string | null {
  let fd: number;
  try {
    fd = openSync(join(root, OWNER_MARKER), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(64);
    return buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove the private trees under `base` left by runs of this user that were killed: a directory (not a link)
 * named as one, owned by this user, whose marker names a process that is gone. Returns the trees removed.
 * Best effort: what cannot be read or removed is left.
 */
export function removeStaleTrees(base: string = tmpdir()): string[] {
  const uid = process.getuid?.() ?? null;
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!PRIVATE_TREE_PREFIXES.some((p) => name.startsWith(p))) continue;
    const root = join(base, name);
    try {
      const st = lstatSync(root);
      if (!st.isDirectory() || (uid !== null && st.uid !== uid)) continue;
      const marker = markerOf(root);
      if (marker === null || ownerRuns(marker)) continue;
      rmSync(root, { recursive: true, force: true });
      removed.push(root);
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}

/**
 * Make a private tree `<base>/<prefix>XXXXXX` (0700) owned by this process, after removing the stale trees of
 * killed runs. It is registered for removal at exit in the same turn of the event loop it is made in, so no
 * signal can fall between the two.
 */
export function makePrivateTree(prefix: PrivateTreePrefix, base: string = tmpdir()): PrivateTree {
  removeStaleTrees(base);
  const root = mkdtempSync(join(base, prefix));
  const forget = removeOnExit(root);
  try {
    writeFileSync(join(root, OWNER_MARKER), `${process.pid} ${startTimeOf(process.pid)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    forget();
    throw e;
  }
  return {
    root,
    remove: async () => {
      await rm(root, { recursive: true, force: true });
      forget();
    },
  };
}
