// Reads under a sysroot stay inside it: a link that leads out of the tree (absolute or `../..`, to
// a file or a directory) is refused naming the link, one that stays inside is followed, and no
// device a link names is ever opened. The reproductions of the disclosure: a host file quoted in a
// parse error (on stdout for health), shown as the firmware, served as a metric label, and a
// directory link packing /etc-like files into a snapshot.
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { Containment, containmentOf, OutsideTreeError } from '../../src/hw/contain.js';
import { hwFsFor, realFs } from '../../src/hw/fsio.js';
import { openRegisterWindow } from '../../src/hw/regs.js';
import { sysrootMetrics } from '../export/harness.js';
import { BIN } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { onPath } from '../support/on-path.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';
import { emulatedHost } from './canary.js';

const temp = tempDirs('hfi1-contain-');
const CLS = 'sys/class/infiniband/hfi1_0';
const PARAMS = 'sys/module/hfi1/parameters';
const SHADOW = 'root:zq9secret$6$hunter2:20228:0:99999:7:::\n';

let host = '';
beforeAll(async () => {
  host = join(temp(), 'host');
  await emulatedHost(host);
});

/** A fresh directory holding `secret` (a file outside every tree) and a tree `t` with a few files. */
function smallTree(): { base: string; root: string; secret: string } {
  const base = temp();
  const root = join(base, 't');
  mkdirSync(join(root, 'a/b'), { recursive: true });
  writeFileSync(join(root, 'a/b/inside'), 'inside\n');
  const secret = join(base, 'secret');
  writeFileSync(secret, SHADOW);
  return { base, root, secret };
}

/** Replace `rel` of the shared host by a link to `target` for the length of `fn`. */
async function withLink<T>(rel: string, target: string, fn: () => Promise<T>): Promise<T> {
  const path = join(host, rel);
  const aside = join(temp(), 'aside');
  renameSync(path, aside);
  symlinkSync(target, path);
  try {
    return await fn();
  } finally {
    rmSync(path);
    renameSync(aside, path);
  }
}

describe('Containment', () => {
  it('follows a link that stays inside, refuses one that leaves (absolute or relative) naming it and its target', () => {
    const { root, secret } = smallTree();
    symlinkSync('b/inside', join(root, 'a/in'));
    symlinkSync(secret, join(root, 'a/abs'));
    symlinkSync('../../secret', join(root, 'a/rel'));
    symlinkSync('../..', join(root, 'a/up'));
    const c = new Containment(root);
    const fs = hwFsFor(root);
    expect(c.stat(join(root, 'a/in')).isFile()).toBe(true);
    for (const name of ['abs', 'rel']) {
      const e = (() => {
        try {
          c.stat(join(root, 'a', name));
        } catch (err) {
          return err;
        }
      })();
      expect(e).toBeInstanceOf(OutsideTreeError);
      expect((e as OutsideTreeError).entry).toBe(join(root, 'a', name));
      expect((e as Error).message).toContain(
        `is a symbolic link to ${name === 'abs' ? secret : '../../secret'}, outside the tree ${root}`,
      );
    }
    // A directory on the way that leads out is the one named.
    expect(() => c.readdir(join(root, 'a/up'))).toThrow(`${join(root, 'a/up')}: is a symbolic link to ../.., outside the tree`);
    expect(() => c.stat(join(root, 'a/up/secret'))).toThrow(
      `${join(root, 'a/up/secret')}: ${join(root, 'a/up')} is a symbolic link to ../.., outside the tree`,
    );
    return fs.readFile(join(root, 'a/in')).then((b) => expect(Buffer.from(b).toString()).toBe('inside\n'));
  });

  it('never reads what leads out: readFile, readdir, readlink, canRead and size all refuse', async () => {
    const { base, root, secret } = smallTree();
    mkdirSync(join(base, 'outdir'));
    symlinkSync('x', join(base, 'outdir/link'));
    symlinkSync(secret, join(root, 'f'));
    symlinkSync(join(base, 'outdir'), join(root, 'd'));
    const fs = hwFsFor(root);
    await expect(fs.readFile(join(root, 'f'))).rejects.toThrow(OutsideTreeError);
    await expect(fs.canRead(join(root, 'f'))).rejects.toThrow(OutsideTreeError);
    await expect(fs.readdir(join(root, 'd'))).rejects.toThrow(OutsideTreeError);
    await expect(fs.readlink(join(root, 'd/link'))).rejects.toThrow(OutsideTreeError);
    expect(await fs.size?.(join(root, 'f'))).toBeNull();
  });

  it('a sysroot that is itself a link, later pointed at another tree, stays the tree it named when first read', () => {
    const one = smallTree();
    const two = smallTree();
    writeFileSync(join(two.root, 'only-in-two'), 'two\n');
    const link = join(one.base, 'current');
    symlinkSync(one.root, link);
    const c = new Containment(link);
    expect(c.stat(join(link, 'a/b/inside')).isFile()).toBe(true);
    rmSync(link);
    symlinkSync(two.root, link);
    expect(c.stat(join(link, 'a/b/inside')).isFile()).toBe(true);
    expect(() => c.stat(join(link, 'only-in-two'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    c.close();
  });

  it('under / nothing is contained: the live host reads as the kernel shows it', () => {
    expect(containmentOf('/')).toBeNull();
    expect(containmentOf('//.')).toBeNull();
    expect(hwFsFor('/')).toBe(realFs);
  });

  it('a BAR image behind a link out of the tree is refused, and one inside is read with pread', () => {
    const { base, root } = smallTree();
    writeFileSync(join(base, 'bar'), Buffer.alloc(8192));
    symlinkSync(join(base, 'bar'), join(root, 'resource0'));
    expect(() => openRegisterWindow(join(root, 'resource0'), { start: 0, length: 4096 }, root)).toThrow(
      expect.objectContaining({ code: 'E_UNAVAILABLE', message: expect.stringContaining('outside the tree') }),
    );
    rmSync(join(root, 'resource0'));
    writeFileSync(join(root, 'resource0'), Buffer.alloc(8192));
    const win = openRegisterWindow(join(root, 'resource0'), { start: 0, length: 4096 }, root);
    expect(win.read64(0)).toBe(0n);
    win.close();
  });
});

describe('the disclosures of a crafted tree, reproduced', () => {
  it('a parameter linked to a shadow-like file: never quoted, on stderr (engines) nor on stdout (health)', async () => {
    const secret = join(temp(), 'shadow');
    writeFileSync(secret, SHADOW);
    await withLink(`${PARAMS}/sdma_descq_cnt`, secret, async () => {
      const e = await runCli(['--sysroot', host, '--backend', 'hw', 'engines']);
      const h = await runCli(['--sysroot', host, '--backend', 'hw', 'health']);
      for (const r of [e, h]) expect(`${r.stdout}${r.stderr}`).not.toMatch(/zq9secret|hunter2/);
      expect(e.stderr).toContain(`${join(host, PARAMS, 'sdma_descq_cnt')}: is a symbolic link to ${secret}, outside the tree`);
      expect(e.code).toBe(0);
    });
  });

  it('/proc/self/environ behind a parameter: the environment is never read', async () => {
    process.env.HFI1_CONTAIN_TOKEN = 'zq9secret-token';
    try {
      await withLink(`${PARAMS}/sdma_descq_cnt`, '/proc/self/environ', async () => {
        const r = await runCli(['--sysroot', host, '--backend', 'hw', 'engines', '--json']);
        expect(`${r.stdout}${r.stderr}`).not.toContain('zq9secret');
        expect(r.stderr).toContain('is a symbolic link to /proc/self/environ, outside the tree');
      });
    } finally {
      delete process.env.HFI1_CONTAIN_TOKEN;
    }
  });

  it('a one-line file as the firmware and a one-word file as the port state: not shown, not a metric label', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'hostname'), 'zq9secrethost\n');
    writeFileSync(join(dir, 'word'), 'TopSecretWordzq9\n');
    await withLink(`${CLS}/fw_ver`, join(dir, 'hostname'), () =>
      withLink(`${CLS}/ports/1/state`, join(dir, 'word'), async () => {
        const r = await runCli(['--sysroot', host, '--backend', 'hw', 'engines']);
        expect(r.stdout).not.toContain('zq9secrethost');
        const metrics = await sysrootMetrics(host, 1, 1000);
        expect(metrics).not.toContain('TopSecretWordzq9');
        expect(metrics).toContain('hfi1_sdma_up{unit="hfi1_0"} 1');
      }),
    );
  });

  it('the parameters directory linked to an /etc-like directory: none of its files in the snapshot, the link named', async () => {
    const etc = join(temp(), 'etc');
    mkdirSync(etc);
    writeFileSync(join(etc, 'shadow'), SHADOW);
    writeFileSync(join(etc, 'machine-id'), 'zq9secretmachine\n');
    const out = join(temp(), 's.tar.gz');
    await withLink(PARAMS, etc, async () => {
      const r = await runCli(['--sysroot', host, '--backend', 'hw', 'snapshot', '-o', out, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const tar = gunzipSync(readFileSync(out)).toString('latin1');
      expect(tar).not.toMatch(/zq9secret|hunter2/);
      expect(tar).not.toContain('parameters/shadow');
      const refused = JSON.parse(r.stdout).instants[0].sources.find((s: { path: string }) => s.path === PARAMS);
      expect(refused).toMatchObject({
        captured: false,
        reason: expect.stringContaining(`is a symbolic link to ${etc}, outside the tree`),
      });
    });
  });

  it("proc linked to the host's /proc: neither the host's interrupts nor its command line are read", async () => {
    const out = join(temp(), 's.tar.gz');
    await withLink('proc', '/proc', async () => {
      const r = await runCli(['--sysroot', host, '--backend', 'hw', 'snapshot', '-o', out, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const sources = JSON.parse(r.stdout).instants[0].sources as { path: string; captured: boolean }[];
      for (const p of ['proc/interrupts', 'proc/cmdline']) expect(sources.find((s) => s.path === p)?.captured).toBe(false);
      expect(gunzipSync(readFileSync(out)).toString('latin1')).not.toContain('BOOT_IMAGE');
    });
  });
});

/** strace stops the child only at the calls traced where it can (seccomp-bpf): the same lines, a fraction of the cost. */
const SECCOMP =
  spawnSync('strace', ['-f', '--seccomp-bpf', '-qq', '-e', 'trace=openat', 'true']).status === 0 ? ['--seccomp-bpf'] : [];

/** strace of one CLI run over a sysroot: the lines naming files under it, and the mmap calls on them. */
function traced(args: string[]): string[] {
  const log = join(temp(), 'strace.txt');
  // A child: the system calls of a process are what is checked.
  const r = spawnSync(
    'strace',
    ['-f', ...SECCOMP, '-qq', '-y', '-e', 'trace=openat,openat2,mmap', '-o', log, process.execPath, BIN, ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', HFI1_SDMA_SYSROOT: '' },
      timeout: 60_000,
    },
  );
  if (r.status === null) throw new Error(`strace ${args.join(' ')}: ${r.error ?? r.signal}`);
  return readFileSync(log, 'utf8').split('\n');
}

const HAS_STRACE = onPath('strace');

describe.runIf(HAS_STRACE)('with strace (skipped where strace is not installed)', () => {
  it('under a sysroot no resource0 is mapped and no device a link names is opened (watch, snapshot)', () => {
    const out = temp();
    const path = join(host, 'sys/kernel/debug/hfi1/hfi1_0/sdes');
    renameSync(path, `${path}.aside`);
    symlinkSync('/dev/ptmx', path);
    try {
      // watch samples through the readers every command uses (the exporter and its textfile too); snapshot has its own.
      for (const args of [
        ['watch', '--json', '--count', '2', '--interval-ms', '10'],
        ['snapshot', '-o', join(out, 's.tar.gz')],
      ]) {
        const lines = traced(['--sysroot', host, '--backend', 'hw', ...args]);
        const what = args.join(' ');
        expect(
          lines.some((l) => l.includes('resource0')),
          what,
        ).toBe(true); // it is read...
        expect(
          lines.filter((l) => l.includes('mmap(') && l.includes('resource0')),
          what,
        ).toEqual([]); // ...never mapped
        expect(
          lines.filter((l) => /openat2?\(/.test(l) && l.includes('ptmx') && !l.includes('O_PATH')),
          what,
        ).toEqual([]);
      }
    } finally {
      rmSync(path);
      renameSync(`${path}.aside`, path);
    }
  });
});
