// emu write/serve against a tree someone else can change while it is written: a directory swapped
// for a link after the writer opened it redirects nothing (every write goes through the directory's
// descriptor), the next pass refuses the link, and a target directory another user owns is refused
// before anything is written. A read-only file system is named as such.
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTree } from '../../src/emu/tree-root.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

const temp = tempDirs('hfi1-race-');
const IS_ROOT = process.geteuid?.() === 0;

describe('a directory swapped for a link while the tree is written', () => {
  it('the writes of the pass land in the directory opened, the victim is untouched; the next pass refuses the link (73)', () => {
    const base = temp();
    const dir = join(base, 'tree');
    const victim = join(base, 'victim');
    mkdirSync(victim);
    const w = openTree(dir, '0.0.0');
    w.file('sys/class/infiniband/hfi1_0/fw_ver', '1.0\n');
    // The attacker's move, after the writer opened sys/ and the directories below it.
    renameSync(join(dir, 'sys'), join(dir, 'sys.real'));
    symlinkSync(victim, join(dir, 'sys'));
    w.file('sys/class/infiniband/hfi1_0/serial', '0x1\n');
    w.file('sys/class/infiniband/hfi1_0/hw_counters/SDMAInt0', '5\n', true);
    w.link('sys/class/infiniband/hfi1_0/device', '../../../bus/pci/devices/0000:05:00.0');
    expect(readdirSync(victim)).toEqual([]);
    expect(readFileSync(join(dir, 'sys.real/class/infiniband/hfi1_0/serial'), 'utf8')).toBe('0x1\n');
    w.beginPass();
    expect(() => w.file('sys/class/infiniband/hfi1_0/boardversion', 'x\n')).toThrow(
      expect.objectContaining({ code: 'E_CANT_CREATE', message: expect.stringContaining('refusing to write through it') }),
    );
    expect(readdirSync(victim)).toEqual([]);
    w.close();
  });
});

describe.runIf(IS_ROOT)('as root (skipped otherwise: it needs chown and mount)', () => {
  const mounts: string[] = [];
  afterAll(() => {
    for (const m of mounts) spawnSync('umount', [m]);
  });

  it('a target directory another user owns is refused (73), saying why, and nothing is written in it', async () => {
    const dir = join(temp(), 'theirs');
    mkdirSync(dir);
    chownSync(dir, 65534, 65534);
    const r = await runCli(['emu', 'write', '--sysroot', dir, '--engines', '2', '--workload', 'idle']);
    expect(r.code).toBe(73);
    expect(r.stderr).toContain(`${dir}: owned by uid 65534, not by this user (uid 0)`);
    expect(r.stderr).toContain('as ssh refuses');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a read-only file system is named as one (EROFS), 73', async () => {
    const ro = join(temp(), 'ro');
    mkdirSync(ro);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', ro]).status).toBe(0);
    mounts.push(ro);
    const r = await runCli(['emu', 'write', '--sysroot', join(ro, 'tree'), '--engines', '2', '--workload', 'idle']);
    expect(r.code).toBe(73);
    expect(r.stderr).toContain('read-only file system (EROFS)');
    expect(existsSync(join(ro, 'tree'))).toBe(false);
  });
});
