// Crafted snapshots of an hfi2 (CN5000) host: links at the hfi2 paths (the device and driver links, the uverbs
// ibdev, a debugfs file leading out), an sdes larger than any, a JKR CSR block cut short or all-ones, garbled hfi2
// files. Each is refused with exit 65 naming archive:entry, or read with the file named in a warning; nothing outside
// the temporary directory changes and the temporary directory is removed.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOf, hashTree, type RawEntry, writeArchive } from '../snapshot/craft.js';
import { expectRefused, type HostileEnv, hostileEnv } from '../snapshot/hostile-env.js';
import { runCli } from '../support/cli.js';
import { goodHfi2Tree, goodJkrBar } from './hfi2-tree.js';

let env: HostileEnv;
let base: RawEntry[];
beforeAll(async () => {
  env = await hostileEnv();
  const t = goodHfi2Tree(join(env.base, 'hfi2-root'), { bar: goodJkrBar, params: { pad_sdma_desc: '1\n' } });
  const good = join(env.base, 'hfi2.tar.gz');
  const r = await runCli(['--sysroot', t.root, '--backend', 'hw', 'snapshot', '-o', good]);
  if (r.code !== 0) throw new Error(`capturing the hfi2 snapshot failed: ${r.stderr}`);
  base = entriesOf(good);
});
afterAll(() => env.restore());

let n = 0;
const crafted = (entries: readonly RawEntry[]) => writeArchive(join(env.base, `hfi2-evil${++n}.tar.gz`), entries);
const replaced = (suffix: string, data: Buffer | string) =>
  crafted(base.map((e) => (e.path.endsWith(suffix) ? { ...e, data } : e)));
const I = 'instants/0/';

describe('links at hfi2 paths', () => {
  const cases: [string, string, string, RegExp][] = [
    ['the device link', 'sys/class/infiniband/hfi2_0/device', '../../../bus/pci/devices/0000:41:00.0', /is a link to/],
    ['the driver link', 'sys/bus/pci/devices/0000:41:00.0/driver', '../../../bus/pci/drivers/hfi2', /is a link to/],
    ['a uverbs ibdev', 'sys/class/infiniband_verbs/uverbs0/ibdev', '../../infiniband/hfi2_0/node_type', /is a link to/],
    [
      'sdes out of the tree',
      'sys/kernel/debug/hfi2/hfi2_0/sdes2',
      '../../../../../../../../../canary/victim',
      /outside the snapshot/,
    ],
    ['resource0 to /dev/mem', 'sys/bus/pci/devices/0000:41:00.0/resource0', '/dev/mem', /outside the snapshot/],
  ];
  it.each(cases)('%s: exit 65 naming the entry', async (_, rel, link, what) => {
    const stderr = await expectRefused(
      env,
      crafted([{ path: `${I}${rel}`, type: 'SymbolicLink', linkpath: link }, ...base]),
      what,
    );
    expect(stderr).toContain(`:${I}${rel}:`);
  });
});

describe('hfi2 files a kernel never writes', () => {
  async function engines(archive: string) {
    const r = await runCli(['--sysroot', archive, 'engines']);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain(env.tmp);
    expect(hashTree(env.canary)).toBe(env.canaryHash);
    expect(readdirSync(env.tmp)).toEqual([]);
    return r;
  }

  it('an sdes larger than any: read without it, a warning naming archive:entry', async () => {
    const archive = replaced('hfi2_0/sdes', Buffer.alloc(8 << 20, 0x41));
    const r = await engines(archive);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${archive}:${I}sys/kernel/debug/hfi2/hfi2_0/sdes: holds more than`);
  });

  it('a JKR CSR block cut short: exit 65 naming it', async () => {
    const archive = replaced('resource0.sdma-csr', Buffer.alloc(100));
    const r = await engines(archive);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${archive}:${I}sys/bus/pci/devices/0000:41:00.0/resource0.sdma-csr: is 100 bytes`);
  });

  it('a JKR CSR block all-ones: exit 69, the engines gone, the hfi2 driver named', async () => {
    const archive = replaced('resource0.sdma-csr', Buffer.alloc(1052672, 0xff));
    const r = await engines(archive);
    expect(r.code).toBe(69);
    expect(r.stdout).toContain('GONE');
    expect(r.stderr).toContain('reload the hfi2 driver');
  });

  it.each([
    ['hw_resources', 'sde 8-99\n', /hw_resources:1:1: the engine window 8-99/],
    ['hfi2_0/sdma8/vl', '0,\x1b\n', /sdma8\/vl:1:3: expected the VL/],
    ['hfi2_0/counter_names', 'SDMAInt8,32\n\0\n', /counter_names:2:1:/],
  ])('%s garbled: the file named as archive:entry with its line and column', async (suffix, text, what) => {
    const archive = replaced(suffix, text);
    const r = await engines(archive);
    expect([0, 65]).toContain(r.code);
    expect(r.stderr).toContain(`${archive}:${I}`);
    expect(r.stderr).toMatch(what);
    expect(r.stderr).not.toContain('\x1b');
  });
});
