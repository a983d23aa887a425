// Crafted manifests: every path taken from snapshot.json must stay inside the unpacked tree and
// nothing is written through a path the archive controls; a manifest of the wrong shape is exit 65
// naming the archive and the field, never a JavaScript internal.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOf, type Loose, type RawEntry, withManifest, writeArchive } from '../snapshot/craft.js';
import { expectRefused, type HostileEnv, hostileEnv } from '../snapshot/hostile-env.js';

let env: HostileEnv;
let base: RawEntry[];
beforeAll(async () => {
  env = await hostileEnv();
  base = entriesOf(env.good);
});
afterAll(() => env.restore());

let n = 0;
function crafted(entries: readonly RawEntry[]): string {
  return writeArchive(join(env.base, `evil${++n}.tar.gz`), entries);
}

/** A version-1 archive (files at the root) from the base snapshot's first instant. */
function asV1(edit: (m: Loose) => void = () => {}): RawEntry[] {
  const files = base
    .filter((e) => e.path.startsWith('instants/0/'))
    .map((e) => ({ ...e, path: e.path.slice('instants/0/'.length) }));
  const v2 = JSON.parse(String(base.find((e) => e.path === 'snapshot.json')?.data));
  const m = {
    format: 'hfi1-sdma-snapshot/1',
    time: v2.time,
    host: v2.host,
    toolVersion: v2.toolVersion,
    sysroot: v2.sysroot,
    units: v2.units,
    sources: v2.instants[0].sources,
    barBlocks: v2.instants[0].barBlocks,
  };
  edit(m);
  return [...files, { path: 'snapshot.json', data: JSON.stringify(m) }];
}

describe('a crafted manifest never writes or reads outside the snapshot', () => {
  it('the base snapshot reads (the mutations below are what fails)', async () => {
    const { runCli } = await import('../support/cli.js');
    const r = await runCli(['--sysroot', env.good, 'engines', '--json']);
    expect(r.code).toBe(0);
    expect((await runCli(['--sysroot', crafted(asV1()), 'engines', '--json'])).code).toBe(0);
  });

  it('version 1: a resource0 that climbs out of the tree', async () => {
    const evil = crafted(asV1((m) => (m.barBlocks[0].resource0 = '../../canary/victim')));
    await expectRefused(env, evil, /snapshot\.json: barBlocks\[0\]\.resource0 climbs out/);
  });

  it('version 1: a resource0 inside the tree that is not the unit’s own', async () => {
    const evil = crafted(asV1((m) => (m.barBlocks[0].resource0 = 'proc/interrupts')));
    await expectRefused(env, evil, /barBlocks\[0\]\.resource0 must be the resource0 of a unit/);
  });

  it('version 2: a BAR block file or resource0 elsewhere', async () => {
    await expectRefused(
      env,
      crafted(
        withManifest(base, (m) => {
          m.instants[0].barBlocks[0].resource0 = '/etc/passwd';
        }),
      ),
      /instants\[0\]\.barBlocks\[0\]\.resource0 is an absolute path/,
    );
    await expectRefused(
      env,
      crafted(
        withManifest(base, (m) => {
          m.instants[0].barBlocks[0].file = '../../../canary/victim';
        }),
      ),
      /instants\[0\]\.barBlocks\[0\]\.file must be/,
    );
  });

  it('a file stored once that would be copied from outside', async () => {
    const evil = crafted(
      withManifest(base, (m) => {
        m.once = ['../../../../canary/etc/passwd'];
      }),
    );
    await expectRefused(env, evil, /once\[0\] climbs out with \.\./);
  });

  it('a note on a source that is not a short string', async () => {
    await expectRefused(
      env,
      crafted(
        withManifest(base, (m) => {
          m.instants[0].sources[0].note = { evil: true };
        }),
      ),
      /instants\[0\]\.sources\[0\]\.note must be a string/,
    );
  });

  it('unit names and PCI addresses that are paths', async () => {
    await expectRefused(
      env,
      crafted(
        withManifest(base, (m) => {
          m.units[0].name = '../../../canary/x';
        }),
      ),
      /units\[0\]\.name must be hfi1_<N>/,
    );
    await expectRefused(
      env,
      crafted(
        withManifest(base, (m) => {
          m.units[0].pci = '../../../../canary';
        }),
      ),
      /units\[0\]\.pci must be a PCI address/,
    );
  });

  it('a manifest of the wrong shape is named field by field', async () => {
    const cases: [(m: Loose) => unknown, RegExp][] = [
      [
        (m) => {
          m.units = 5;
        },
        /snapshot\.json: units must be a list of \{name, pci\}, got 5/,
      ],
      [
        (m) => {
          m.instants = {};
        },
        /instants must be a list/,
      ],
      [
        (m) => {
          m.instants = [];
        },
        /instants must hold at least one instant/,
      ],
      [
        (m) => {
          m.instants[0].timeMs = '0';
        },
        /instants\[0\]\.timeMs must be a number/,
      ],
      [
        (m) => {
          m.instants[0].sources = [{ path: 1 }];
        },
        /instants\[0\]\.sources\[0\]\.path must be a string/,
      ],
      [
        (m) => {
          m.format = 'hfi1-sdma-snapshot/9';
        },
        /format must be hfi1-sdma-snapshot\/1 or hfi1-sdma-snapshot\/2/,
      ],
      [() => [1, 2], /the manifest must be an object/],
      [() => '{"format": ', /snapshot\.json is not valid JSON/],
    ];
    for (const [edit, what] of cases) {
      const stderr = await expectRefused(env, crafted(withManifest(base, edit)), what);
      expect(stderr).not.toMatch(/is not iterable|undefined|TypeError/);
    }
  });

  it('later instants must not go back in time', async () => {
    const two = [
      ...base,
      ...base
        .filter((e) => e.path.startsWith('instants/0/'))
        .map((e) => ({ ...e, path: e.path.replace('instants/0/', 'instants/1/') })),
    ];
    const evil = crafted(
      withManifest(two, (m) => {
        m.instants.push({ ...m.instants[0], timeMs: -5 });
        return m;
      }),
    );
    await expectRefused(env, evil, /instants\[1\]\.timeMs must be a number from 0/);
  });
});

describe('the archive must hold what the manifest says, and nothing where the tool rebuilds', () => {
  it('a manifest larger than any the tool writes is not parsed', async () => {
    const evil = crafted(withManifest(base, (m) => `${JSON.stringify(m)}${' '.repeat(17 * 1024 * 1024)}`));
    await expectRefused(env, evil, /snapshot\.json is 17\d{6} bytes, more than hfi1-sdma ever writes/);
  });

  it('no snapshot.json', async () => {
    await expectRefused(env, crafted(base.filter((e) => e.path !== 'snapshot.json')), /holds no snapshot\.json/);
  });

  it('a captured file the archive lacks (cut at an entry boundary)', async () => {
    const evil = crafted(base.filter((e) => !e.path.endsWith('/sdes')));
    await expectRefused(
      env,
      evil,
      /:instants\/0\/sys\/kernel\/debug\/hfi1\/hfi1_0\/sdes: listed in snapshot\.json but not in the archive/,
    );
  });

  it('an entry where resource0 is rebuilt', async () => {
    const evil = crafted([{ path: 'instants/0/sys/bus/pci/devices/0000:05:00.0/resource0', data: 'x' }, ...base]);
    await expectRefused(
      env,
      evil,
      /:instants\/0\/sys\/bus\/pci\/devices\/0000:05:00\.0\/resource0: the archive holds an entry where/,
    );
  });

  it('a directory where the device link is made', async () => {
    const evil = crafted([{ path: 'instants/0/sys/class/infiniband/hfi1_0/device/x', data: 'x' }, ...base]);
    await expectRefused(env, evil, /:instants\/0\/sys\/class\/infiniband\/hfi1_0\/device: the archive holds an entry where/);
  });

  it('a BAR block of the wrong size', async () => {
    const evil = crafted(base.map((e) => (e.path.endsWith('.sdma-csr') ? { ...e, data: Buffer.alloc(8) } : e)));
    await expectRefused(env, evil, /resource0\.sdma-csr: is 8 bytes, the SDMA CSR block is 4096/);
  });
});
