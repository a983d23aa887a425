// `emu write` / `emu serve` into places they must not write: `/` in every spelling, a file, a
// directory holding something else, symlinks planted inside an emulated tree, a directory the
// user cannot write. Each case: the documented exit code, a message naming the path, and nothing
// outside the temp dir changed (a canary tree hashed before and after).
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSpeed } from '../../src/cli/emu.js';
import { TREE_MARKER, TREE_STAGING } from '../../src/emu/tree.js';
import { runCli } from '../support/cli.js';
import { nobodyUnavailable } from '../support/nobody.js';
import { cliGuarded, type Run } from './sources-tree.js';

const WRITE = ['emu', 'write', '--engines', '2', '--workload', 'idle', '--at-ms', '3'];
const BAR = 'sys/bus/pci/devices/0000:05:00.0/resource0';
const DBG = 'sys/kernel/debug/hfi1/hfi1_0';

let tmp = '';
let canary = '';

/** Every path under `dir` with its type and bytes (symlinks by target), hashed. */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      h.update(`${p} ${st.mode} ${st.size}\n`);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) h.update(readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex');
}

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'hfi1-hostile-'));
  canary = join(tmp, 'canary');
  mkdirSync(join(canary, 'sub'), { recursive: true });
  writeFileSync(join(canary, 'victim'), 'precious\n');
  writeFileSync(join(canary, 'sub', 'other'), 'also precious\n');
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

async function writeInto(dir: string) {
  return runCli([...WRITE, '--sysroot', dir]);
}

describe('emu write refuses where it must not write', () => {
  it.each(['/', '/.', '//', '/../', '/tmp/..'])('--sysroot %s is a usage error (64) and writes nothing', async (root) => {
    const r = await writeInto(root);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(`--sysroot ${root}:`);
    expect(r.stderr).toMatch(/never written; pass an empty or new directory/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join('/', TREE_MARKER))).toBe(false);
  });

  it('a symlink that resolves to / is refused (64)', async () => {
    const link = join(tmp, 'root-link');
    symlinkSync('/', link);
    const r = await writeInto(link);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('resolves to /');
    expect(existsSync(join('/', TREE_MARKER))).toBe(false);
  });

  it('an existing regular file is a usage error (64) naming it, and the file is untouched', async () => {
    const before = treeHash(canary);
    const r = await writeInto(join(canary, 'victim'));
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(`--sysroot ${join(canary, 'victim')}: not a directory`);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(treeHash(canary)).toBe(before);
  });

  it('a non-empty directory that holds no emulated tree is refused (73) and left as it was', async () => {
    const before = treeHash(canary);
    const r = await writeInto(canary);
    expect(r.code).toBe(73);
    expect(r.stderr).toContain(`--sysroot ${canary}: a non-empty directory`);
    expect(r.stderr).toContain('Pass an empty or new directory');
    expect(treeHash(canary)).toBe(before);
  });

  it('a tree written earlier (its marker) is rewritten; an empty or new directory is fine', async () => {
    const dir = join(tmp, 'new', 'host');
    expect((await writeInto(dir)).code).toBe(0);
    expect(readFileSync(join(dir, TREE_MARKER), 'utf8')).toMatch(/^hfi1-sdma \d+\.\d+\.\d+/);
    const again = await writeInto(dir);
    expect(again.stderr).toMatch(/^hfi1-sdma: .* is one instant: nothing in it moves.*emu serve --sysroot /);
    expect(again.code).toBe(0);
    expect(existsSync(join(dir, TREE_STAGING))).toBe(false);
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    expect((await writeInto(empty)).code).toBe(0);
  });

  it('a marker that is a symlink does not count: the directory is refused (73)', async () => {
    const dir = join(tmp, 'fake');
    mkdirSync(dir);
    writeFileSync(join(tmp, 'real-marker'), 'hfi1-sdma 0.1.0\n');
    symlinkSync(join(tmp, 'real-marker'), join(dir, TREE_MARKER));
    writeFileSync(join(dir, 'data'), 'x');
    expect((await writeInto(dir)).code).toBe(73);
  });
});

describe('symlinks planted inside an emulated tree are never followed', () => {
  it('a resource0 symlink to an outside file is replaced, never written through', async () => {
    const dir = join(tmp, 'host');
    expect((await writeInto(dir)).code).toBe(0);
    const before = treeHash(canary);
    rmSync(join(dir, BAR));
    symlinkSync(join(canary, 'victim'), join(dir, BAR));
    const r = await writeInto(dir);
    expect(r.code).toBe(0);
    expect(treeHash(canary)).toBe(before);
    const st = lstatSync(join(dir, BAR));
    expect(st.isFile()).toBe(true);
    expect(st.size).toBe(0x4000000);
  });

  it('a planted symlink in place of sdes or a counter is replaced by the file, the target untouched', async () => {
    const dir = join(tmp, 'host');
    expect((await writeInto(dir)).code).toBe(0);
    const before = treeHash(canary);
    for (const rel of [`${DBG}/sdes`, `${DBG}/counters`, 'sys/class/infiniband/hfi1_0/hw_counters/SDMAInt0,32']) {
      rmSync(join(dir, rel));
      symlinkSync(join(canary, 'victim'), join(dir, rel));
    }
    expect((await writeInto(dir)).code).toBe(0);
    expect(treeHash(canary)).toBe(before);
    expect(lstatSync(join(dir, DBG, 'sdes')).isFile()).toBe(true);
  });

  it('a symlinked directory inside the tree is refused (73) naming it, nothing written through it', async () => {
    const dir = join(tmp, 'host');
    expect((await writeInto(dir)).code).toBe(0);
    const before = treeHash(canary);
    rmSync(join(dir, DBG), { recursive: true });
    symlinkSync(canary, join(dir, DBG));
    const r = await writeInto(dir);
    expect(r.code).toBe(73);
    expect(r.stderr).toContain(join(dir, DBG));
    expect(r.stderr).toContain('refusing to write through it');
    expect(treeHash(canary)).toBe(before);
  });
});

describe('emu serve refuses the same places before serving', () => {
  it('--sysroot /. and a foreign directory: the exit code, and no "serving" line', async () => {
    const root = await runCli(['emu', 'serve', '--sysroot', '/.']);
    expect(root.code).toBe(64);
    expect(root.stderr).not.toContain('serving');
    const before = treeHash(canary);
    const foreign = await runCli(['emu', 'serve', '--sysroot', canary]);
    expect(foreign.code).toBe(73);
    expect(foreign.stderr).not.toContain('serving');
    expect(treeHash(canary)).toBe(before);
  });
});

describe('emu serve --speed', () => {
  it.each(['1e-300', '0', '-1', '1001', 'abc', 'Infinity'])('--speed %s is a usage error (64)', async (speed) => {
    const r = await runCli(['emu', 'serve', '--sysroot', join(tmp, 'host'), '--speed', speed]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('--speed must be a number from 0.001 to 1000');
    expect(existsSync(join(tmp, 'host'))).toBe(false);
  });

  it('accepts the bounds themselves', () => {
    expect(parseSpeed('0.001')).toBe(0.001);
    expect(parseSpeed('1000')).toBe(1000);
    expect(parseSpeed(undefined)).toBe(1);
  });
});

const noNobody = nobodyUnavailable();

describe('a directory the user cannot write', () => {
  it.skipIf(noNobody !== null)(
    `run as nobody: 77 naming the path, no stack trace${noNobody ? ` (skipped: it cannot run as nobody here: ${noNobody})` : ''}`,
    () => {
      const locked = join(tmp, 'locked');
      mkdirSync(locked);
      chmodSync(tmp, 0o755);
      chmodSync(locked, 0o555);
      // A child (one for both): the rights of another user (nobody) belong to a process.
      const [r, below] = cliGuarded(
        [
          { root: locked, args: WRITE },
          { root: join(locked, 'new'), args: WRITE },
        ],
        { asNobody: true },
      ) as [Run, Run];
      expect(r.stderr).toContain(locked);
      expect(r.stderr).toContain('permission denied');
      expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(r.code).toBe(77);
      expect(below.code).toBe(77);
      expect(readdirSync(locked)).toEqual([]);
      expect(existsSync(join(locked, 'new'))).toBe(false);
    },
  );
});
