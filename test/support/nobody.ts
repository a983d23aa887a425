// Running the built CLI as `nobody` (root only, through setpriv): from the checkout when nobody can reach it,
// else from a copy of the command (bin, its bundle, koffi, package.json) made once in the temporary directory.
// A checkout in a directory only its owner may enter (a `mktemp -d`, mode 0700) is out of nobody's reach.
import type { SpawnSyncOptions, SpawnSyncReturns } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BIN, ROOT } from './child.js';
import { spawnSync } from './spawn.js';

/** nobody's uid and gid on Debian (nogroup). */
export const NOBODY_ID = 65534;

/** True when others may enter every directory above `path` and have `bits` (0o4 read, 0o1 run) on it. */
export function othersCanReach(path: string, bits: number): boolean {
  try {
    for (let d = dirname(path); ; d = dirname(d)) {
      if ((statSync(d).mode & 0o1) === 0) return false;
      if (d === dirname(d)) break;
    }
    return (statSync(path).mode & bits) === bits;
  } catch {
    return false;
  }
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** Why the CLI cannot run as nobody here (not root, no setpriv, node or the temporary directory out of reach), or null. */
export function nobodyUnavailable(): string | null {
  if (process.geteuid?.() !== 0) return 'not root';
  if (!SETPRIV) return 'no setpriv';
  if (!othersCanReach(process.execPath, 0o5)) return `nobody cannot run ${process.execPath}`;
  if (!othersCanReach(tmpdir(), 0o1)) return `nobody cannot enter ${tmpdir()}`;
  return null;
}

/** The files the command needs to run, relative to the checkout. */
const COMMAND = ['package.json', 'bin/hfi1-sdma.js', 'dist/bundle', 'node_modules/koffi'];

let copied: string | undefined;

/** Make files readable and directories enterable by others, below `dir`. */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) openUp(p);
    else if (e.isFile()) chmodSync(p, 0o644);
  }
}

/** The CLI's entry as nobody can run it: the checkout's, or a copy in the temporary directory (once per process). */
export function binForNobody(): string {
  if (COMMAND.every((rel) => othersCanReach(join(ROOT, rel), 0o4))) return BIN;
  if (copied) return copied;
  const dir = mkdtempSync(join(tmpdir(), 'hfi1-sdma-as-nobody-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  for (const rel of COMMAND) cpSync(join(ROOT, rel), join(dir, rel), { recursive: true });
  openUp(dir);
  copied = join(dir, 'bin/hfi1-sdma.js');
  return copied;
}

/** Run `hfi1-sdma ARGS` as nobody (no groups), from `/`. */
export function spawnAsNobody(args: string[], opts: SpawnSyncOptions = {}): SpawnSyncReturns<string> {
  const id = String(NOBODY_ID);
  return spawnSync(
    SETPRIV ?? 'setpriv',
    [`--reuid=${id}`, `--regid=${id}`, '--clear-groups', '--', process.execPath, binForNobody(), ...args],
    { cwd: '/', encoding: 'utf8', ...opts },
  ) as SpawnSyncReturns<string>;
}

/** Run `node NODE_ARGS` as nobody (no groups), from `/`: a script nobody can read (see othersCanReach). */
export function spawnNodeAsNobody(nodeArgs: string[], opts: SpawnSyncOptions = {}): SpawnSyncReturns<string> {
  const id = String(NOBODY_ID);
  return spawnSync(
    SETPRIV ?? 'setpriv',
    [`--reuid=${id}`, `--regid=${id}`, '--clear-groups', '--', process.execPath, ...nodeArgs],
    { cwd: '/', encoding: 'utf8', ...opts },
  ) as SpawnSyncReturns<string>;
}
