// The private trees a run makes under $TMPDIR (a snapshot unpacked to be read, the emulator's host rendered to
// be captured) carry a marker naming their process. They go when closed and when the process ends (the library's
// too), and a run killed outright (SIGKILL, the OOM killer) has its tree removed by the next run that makes one:
// only trees of this user whose process is gone, never a live one's, another user's or one without a marker.
import { spawn } from 'node:child_process';
import { chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makePrivateTree, OWNER_MARKER, removeStaleTrees } from '../../src/private-tree.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';
import { openSnapshot } from '../../src/snapshot/open.js';
import { BIN, ROOT } from '../support/child.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';
import { emulatedHost } from './canary.js';

const temp = tempDirs('hfi1-private-');
const AS_ROOT = process.getuid?.() === 0;

/** The pid of a process that has ended. */
function deadPid(): number {
  const r = spawnSync('true');
  if (r.pid === undefined || r.status !== 0) throw new Error(`true: ${r.error ?? r.status}`);
  return r.pid;
}

/** A tree `name` under `base` with `marker` as its marker (none when null). */
function tree(base: string, name: string, marker: string | null): string {
  const root = join(base, name);
  mkdirSync(join(root, 'tree'), { recursive: true });
  writeFileSync(join(root, 'tree/file'), 'x');
  if (marker !== null) writeFileSync(join(root, OWNER_MARKER), marker);
  return root;
}

let snap = '';
beforeAll(async () => {
  const host = join(temp(), 'host');
  await emulatedHost(host);
  snap = join(temp(), 'snap.tar.gz');
  await captureSnapshot(
    host,
    snap,
    { host: 'h', toolVersion: '0', now: new Date(0) },
    { samples: 1, intervalMs: 10, clock: { nowMs: () => 0 }, sleep: async () => {} },
  );
});

describe('stale private trees', () => {
  it("are removed when their process is gone; a live one's, a pid reused since, no marker and a link are told apart", () => {
    const base = temp();
    const dead = tree(base, 'hfi1-sdma-snapshot-dead00', `${deadPid()} 12345\n`);
    const live = tree(base, 'hfi1-sdma-capture-live00', `${process.ppid} \n`);
    const reused = tree(base, 'hfi1-sdma-emu-reused', `${process.ppid} 1\n`);
    const bare = tree(base, 'hfi1-sdma-snapshot-bare00', null);
    const other = tree(base, 'someone-else-dead00', `${deadPid()} 1\n`);
    symlinkSync(dead, join(base, 'hfi1-sdma-snapshot-link00'));
    expect(removeStaleTrees(base).sort()).toEqual([dead, reused].sort());
    for (const kept of [live, bare, other]) expect(existsSync(kept)).toBe(true);
    expect(lstatSync(join(base, 'hfi1-sdma-snapshot-link00')).isSymbolicLink()).toBe(true);
  });

  it.skipIf(!AS_ROOT)("another user's tree is left, whatever its marker says (runs only as root)", () => {
    const base = temp();
    const theirs = tree(base, 'hfi1-sdma-snapshot-their0', `${deadPid()} 1\n`);
    chownSync(theirs, 65534, 65534);
    expect(removeStaleTrees(base)).toEqual([]);
    expect(existsSync(theirs)).toBe(true);
  });

  it('a new tree carries its owner and removes the stale ones first; it goes when removed', async () => {
    const base = temp();
    const dead = tree(base, 'hfi1-sdma-capture-dead01', `${deadPid()} 1\n`);
    const t = makePrivateTree('hfi1-sdma-snapshot-', base);
    expect(existsSync(dead)).toBe(false);
    expect(readFileSync(join(t.root, OWNER_MARKER), 'utf8')).toMatch(new RegExp(`^${process.pid} \\d+\\n$`));
    await t.remove();
    expect(readdirSync(base)).toEqual([]);
  });
});

describe('a reader killed outright', () => {
  it('SIGKILLed while reading a snapshot: the next run that unpacks one removes its tree', async () => {
    const base = temp();
    // A child: it is killed outright (SIGKILL), which ends a process, not a function.
    const child = spawn(process.execPath, [BIN, '--sysroot', snap, 'watch', '--json', '--interval-ms', '1000'], {
      stdio: 'ignore',
      env: { ...process.env, TMPDIR: base, HFI1_SDMA_SYSROOT: '' },
    });
    const exited = new Promise((r) => child.on('exit', r));
    // Wait for the tree itself (its marker written), then kill without warning.
    const marked = () => readdirSync(base).some((n) => existsSync(join(base, n, OWNER_MARKER)));
    while (!marked() && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    expect(marked()).toBe(true);
    child.kill('SIGKILL');
    await exited;
    expect(readdirSync(base)).toHaveLength(1);
    const next = await openSnapshot(snap, { tmpDir: base });
    expect(readdirSync(base)).toHaveLength(1); // the new run's own
    await next.close();
    expect(readdirSync(base)).toEqual([]);
  });

  it('a library that opened a snapshot and exits without closing it leaves no tree', () => {
    const base = temp();
    const script = `const { openBackend } = await import(${JSON.stringify(join(ROOT, 'dist/bundle/api/hfi1-sdma.mjs'))});
      await openBackend({ sysroot: ${JSON.stringify(snap)} });
      process.exit(0);`;
    // A child: what is left behind is decided when the process exits.
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, TMPDIR: base },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(base)).toEqual([]);
  });
});
