// Where an output may be written: `export --textfile` and `snapshot -o` write only a regular file
// (or a new one) in a directory. A device node, a FIFO, a symbolic link (to a device or to a file)
// or a directory in its place is refused with 73 and left exactly as it was; so is a path inside
// the sysroot being read; `snapshot -o DIR` is 73 whatever DIR is called.
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkOutputTarget } from '../../src/output-file.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';
import { emulatedHost } from './canary.js';

const temp = tempDirs('hfi1-outputs-');
const IS_ROOT = process.geteuid?.() === 0;

let host = '';
beforeAll(async () => {
  host = join(temp(), 'host');
  await emulatedHost(host);
});

/** What is at `path`, to compare before and after: its type, mode, device numbers, link text or bytes. */
function shape(path: string): string {
  const st = lstatSync(path);
  const what = st.isSymbolicLink()
    ? `link ${readlinkSync(path)}`
    : st.isDirectory()
      ? `dir ${readdirSync(path).join(',')}`
      : st.isFile()
        ? `file ${readFileSync(path, 'latin1')}`
        : `special ${st.rdev}`;
  return `${st.mode} ${what}`;
}

/** The odd targets an output may be pointed at, made in a fresh directory. */
function oddTargets(): [string, string][] {
  const d = temp();
  const out: [string, string][] = [];
  const fifo = join(d, 'fifo.tar.gz');
  if (spawnSync('mkfifo', [fifo]).status === 0) out.push(['a FIFO', fifo]);
  mkdirSync(join(d, 'dir.tar.gz'));
  out.push(['a directory', join(d, 'dir.tar.gz')]);
  writeFileSync(join(d, 'victim'), 'precious\n');
  symlinkSync(join(d, 'victim'), join(d, 'file-link.tar.gz'));
  out.push(['a link to a file', join(d, 'file-link.tar.gz')]);
  symlinkSync('/dev/full', join(d, 'full-link.tar.gz'));
  out.push(['a link to /dev/full', join(d, 'full-link.tar.gz')]);
  if (IS_ROOT) {
    // Device nodes of their own (null and full), never the host's: a defect would replace these, not /dev's.
    for (const [name, minor] of [
      ['null.tar.gz', '3'],
      ['full.tar.gz', '7'],
    ] as const) {
      if (spawnSync('mknod', ['-m', '666', join(d, name), 'c', '1', minor]).status === 0)
        out.push([`a device node (${name})`, join(d, name)]);
    }
  }
  return out;
}

describe('an output onto something that is not a regular file: 73, left as it was', () => {
  it('export --textfile onto each (device nodes too when run as root)', async () => {
    for (const [what, target] of oddTargets()) {
      const before = shape(target);
      const r = await runCli(['--sysroot', host, '--backend', 'hw', 'export', '--textfile', target]);
      expect(r.code, `${what}: ${r.stderr}`).toBe(73);
      expect(r.stderr).toContain(`--textfile ${target}: is a`);
      expect(r.stderr).toContain('it is left as it is');
      expect(shape(target), what).toBe(before);
    }
  });

  it('snapshot -o onto each, and onto a directory not named .tar.gz (73, not a usage error)', async () => {
    const plain = join(temp(), 'outdir');
    mkdirSync(plain);
    for (const [what, target] of [...oddTargets(), ['a directory without the suffix', plain] as [string, string]]) {
      const before = shape(target);
      const r = await runCli(['--sysroot', host, '--backend', 'hw', 'snapshot', '-o', target]);
      expect(r.code, `${what}: ${r.stderr}`).toBe(73);
      expect(r.stderr).toContain(`-o ${target}: is a`);
      expect(shape(target), what).toBe(before);
    }
  });

  it('a regular file is replaced, and a new name is created', async () => {
    const d = temp();
    writeFileSync(join(d, 'old.prom'), 'old\n');
    expect((await runCli(['--sysroot', host, '--backend', 'hw', 'export', '--textfile', join(d, 'old.prom')])).code).toBe(0);
    expect(readFileSync(join(d, 'old.prom'), 'utf8')).toContain('hfi1_sdma_up');
    expect((await runCli(['--sysroot', host, '--backend', 'hw', 'export', '--textfile', join(d, 'new.prom')])).code).toBe(0);
  });
});

describe('an output inside the sysroot being read: 73 naming it, nothing written there', () => {
  it('--textfile over a source of the tree, and snapshot -o into the tree', async () => {
    const param = join(host, 'sys/module/hfi1/parameters/sdma_descq_cnt');
    const before = shape(param);
    const t = await runCli(['--sysroot', host, '--backend', 'hw', 'export', '--textfile', param]);
    expect(t.code).toBe(73);
    expect(t.stderr).toContain(`--textfile ${param}: lies inside ${host}, which is being read`);
    expect(shape(param)).toBe(before);
    const dir = join(host, 'sys/module/hfi1/parameters');
    const names = readdirSync(dir);
    const s = await runCli(['--sysroot', host, '--backend', 'hw', 'snapshot', '-o', join(dir, 'x.tar.gz')]);
    expect(s.code).toBe(73);
    expect(s.stderr).toContain(`lies inside ${host}`);
    expect(readdirSync(dir)).toEqual(names);
  });

  it('a link to the tree counts as the tree, and the snapshot file read is protected too', () => {
    const link = join(temp(), 'alias');
    symlinkSync(host, link);
    expect(() => checkOutputTarget(join(link, 'proc/x.prom'), '--textfile', [host])).toThrow(/lies inside/);
    const snap = join(temp(), 'node.tar.gz');
    writeFileSync(snap, 'x');
    expect(() => checkOutputTarget(snap, '--textfile', [snap])).toThrow(/lies inside/);
    expect(() => checkOutputTarget(join(temp(), 'fine.prom'), '--textfile', [host, '/'])).not.toThrow();
  });
});
