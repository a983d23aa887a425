// hfi2 (CN5000) and Cornelis discovery on trees no driver wrote: the device/driver link a loop, pointing outside the
// sysroot or at nothing; PCI id files empty, garbled, huge or a directory; every module parameter absent or odd;
// hw_resources and sdma<E> directories out of range; a 128 MiB JKR BAR image short, sparse or all-ones. The CLI
// answers or exits with the documented code and a message naming the file; never a stack trace, never a hang.
import { mkdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readError } from '../../src/hw/fsio.js';
import { openHwBackend } from '../../src/hw/index.js';
import { chipModel, ENGINE_REG_OFFSETS, type EngineReg, engineRegOffset } from '../../src/progress/chip.js';
import { ALL_ONES_64 } from '../../src/progress/constants.js';
import { writeBarImage } from '../hw/bar-image.js';
import { runCli } from '../support/cli.js';
import { goodHfi2Tree, goodJkrBar, readEverything } from './hfi2-tree.js';
import { cli, cliChild, type Oddity, replaceWith, tempRoots } from './sources-tree.js';

const fresh = tempRoots();
const JKR = chipModel('jkr');

/** `engines --json` on the tree, in-process: exit 0 and the one unit's flavour, or the failure. */
async function enginesJson(root: string) {
  const r = await runCli(['--sysroot', root, 'engines', '--json'], { NO_COLOR: '1' });
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  return { r, unit: r.code === 0 ? JSON.parse(r.stdout).units[0] : null };
}

/** The one unit's info, read in-process (the CLI runs above cover the exit codes). */
async function unitInfo(root: string) {
  const b = await openHwBackend({ sysroot: root });
  try {
    const [info] = await b.units();
    return info;
  } finally {
    await b.close();
  }
}

describe('the device/driver link', () => {
  const cases: [string, (driver: string) => void, string][] = [
    ['a loop', (d) => symlinkSync('driver', d), 'hfi2'],
    ['outside the sysroot', (d) => symlinkSync('/nonexistent/bus/pci/drivers/hfi1', d), 'hfi1'],
    ['to nothing', (d) => symlinkSync('../../../bus/pci/drivers/gone', d), 'hfi2'],
    ['a directory', (d) => mkdirSync(d), 'hfi2'],
    ['a regular file', (d) => writeFileSync(d, 'hfi1\n'), 'hfi2'],
  ];
  it.each(cases)('%s: only its name is read; the module falls back to the unit name', async (_, make, module) => {
    const t = goodHfi2Tree(fresh(), { driverLink: null });
    make(t.driver);
    const { r, unit } = await enginesJson(t.root);
    expect(r.code, r.stderr).toBe(0);
    expect(unit).toMatchObject({ name: 'hfi2_0', module, chip: 'jkr' });
  });
});

describe('PCI id files', () => {
  const odd: [string, (p: string) => void][] = [
    ['empty', (p) => writeFileSync(p, '')],
    ['not hex', (p) => writeFileSync(p, 'zz\n')],
    ['huge', (p) => writeFileSync(p, Buffer.alloc(2 << 20, 0x30))],
    ['binary', (p) => writeFileSync(p, Buffer.from([0xff, 0xfe, 0, 1]))],
    ...(['dir', 'fifo', 'loop', 'dev-zero'] as Oddity[]).map((k): [string, (p: string) => void] => [k, (p) => replaceWith(p, k)]),
  ];
  it.each(odd)('vendor %s: no PCI id, the chip from the 128 MiB BAR0', async (_, make) => {
    const t = goodHfi2Tree(fresh(), { bar: goodJkrBar });
    make(t.vendor);
    const info = await unitInfo(t.root);
    expect(info).toMatchObject({ name: 'hfi2_0', engineIds: [8, 9, 10, 11, 12, 13, 14, 15] });
    expect(info?.flavour?.chip).toBe('jkr');
  });
  it.each(odd)('subsystem_device %s: the unit is read as usual', async (_, make) => {
    const t = goodHfi2Tree(fresh());
    make(t.subsystem);
    expect((await unitInfo(t.root))?.flavour?.chip).toBe('jkr');
  });
  it('vendor garbled into the CLI: exit 0, the chip from the BAR0 size', async () => {
    const t = goodHfi2Tree(fresh(), { bar: goodJkrBar });
    writeFileSync(t.vendor, '\x1b[2J\n');
    const { r, unit } = await enginesJson(t.root);
    expect(r.code, r.stderr).toBe(0);
    expect(unit).toMatchObject({ chip: 'jkr' });
  });
});

describe('module parameters: all optional', () => {
  it('no parameters directory, or one that is a file: defaults, exit 0', async () => {
    for (const make of [() => {}, (p: string) => writeFileSync(p, 'x')]) {
      const t = goodHfi2Tree(fresh());
      rmSync(t.params, { recursive: true, force: true });
      mkdirSync(join(t.params, '..'), { recursive: true });
      make(t.params);
      const { r, unit } = await enginesJson(t.root);
      expect(r.code, r.stderr).toBe(0);
      expect(unit).toMatchObject({ driver: 'hfi2', descqCnt: 2048 });
    }
  });
  it.each(['dir', 'fifo', 'loop', 'dev-urandom'] as Oddity[])(
    'sdma_descq_cnt a %s: the default ring with a warning naming it',
    async (kind) => {
      const t = goodHfi2Tree(fresh(), { params: { sdma_descq_cnt: '64\n', pad_sdma_desc: '1\n' } });
      const file = join(t.params, 'sdma_descq_cnt');
      replaceWith(file, kind);
      const b = await openHwBackend({ sysroot: t.root });
      try {
        const u = await b.unit(0);
        expect(u.info?.descqCnt).toBe(2048);
        expect(u.info?.flavour?.driver).toBe('hfi2');
        expect(u.warnings?.().find((w) => w.path === file)?.message).toContain(file);
      } finally {
        await b.close();
      }
    },
  );
  it('sdma_descq_cnt garbled: exit 65 naming the file and line', async () => {
    const t = goodHfi2Tree(fresh(), { params: { sdma_descq_cnt: '20\u00008\n' } });
    const { r } = await enginesJson(t.root);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${join(t.params, 'sdma_descq_cnt')}:1:1:`);
  });
});

describe('engine windows out of range', () => {
  it.each(['sde 8-99\n', 'sde 15-8\n', 'sde 8-15 extra\n', `sde ${'9'.repeat(400)}-1\n`, 'sde\0 8-15\n'])(
    'hw_resources %j with no sdma<E> directories: the engines from sdes, a warning naming hw_resources',
    async (text) => {
      const t = goodHfi2Tree(fresh(), { engineDirs: [], hwResources: text });
      const { r, unit } = await enginesJson(t.root);
      expect(r.code, r.stderr).toBe(0);
      expect(unit.engineIds.length).toBeGreaterThan(0);
      await readEverything(t.root);
    },
  );
  it('an sdma16 directory: exit 65 naming it', async () => {
    const t = goodHfi2Tree(fresh(), { engineDirs: [8, 16] });
    const { r } = await enginesJson(t.root);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(join(t.cls, 'sdma16'));
  });
});

describe('a 128 MiB JKR BAR image', () => {
  it.each([
    ['64 MiB (the WFR size)', 64 << 20],
    ['one byte', 1],
    ['empty', 0],
  ])('cut to %s: not read, the other sources still are', async (_, size) => {
    const t = goodHfi2Tree(fresh(), { bar: goodJkrBar });
    truncateSync(t.resource0, size);
    const { r, unit } = await enginesJson(t.root);
    expect(r.code, r.stderr).toBe(0);
    for (const e of unit.engines) expect(e.sources).not.toContain('bar');
    await readEverything(t.root);
  });

  it('sparse, all zero: read, nothing gone', async () => {
    const t = goodHfi2Tree(fresh(), { bar: (p) => writeBarImage(p, new Map(), JKR.bar0Size) });
    const { r, unit } = await enginesJson(t.root);
    expect(r.code, r.stderr).toBe(0);
    for (const e of unit.engines) expect(e).toMatchObject({ gone: false });
  });

  it('all-ones at every engine register: the engines are gone, never all-ones values', async () => {
    const regs = new Map<number, bigint>([[JKR.sendDmaEngines, ALL_ONES_64]]);
    for (let e = 0; e < 16; e++) {
      for (const reg of Object.keys(ENGINE_REG_OFFSETS) as EngineReg[]) regs.set(engineRegOffset(JKR, reg, e), ALL_ONES_64);
    }
    const t = goodHfi2Tree(fresh(), { bar: (p) => writeBarImage(p, regs, JKR.bar0Size) });
    const { r, unit } = await enginesJson(t.root);
    expect([0, 69], r.stderr).toContain(r.code);
    if (r.code === 69) expect(r.stderr).toContain(t.resource0);
    else for (const e of unit.engines) expect(e).toMatchObject({ gone: true, state: null });
  });
});

describe('messages of a vanished hfi2 source', () => {
  it('ENOENT names the file and does not blame the hfi1 driver', () => {
    const e = readError(Object.assign(new Error('gone'), { code: 'ENOENT' }), '/sys/kernel/debug/hfi2/hfi2_0/sdes');
    expect(e.code).toBe('E_DEVICE_GONE');
    expect(e.message).toMatch(
      /^\/sys\/kernel\/debug\/hfi2\/hfi2_0\/sdes: ENOENT: the device or its driver \(hfi1, hfi2\) went away/,
    );
  });
});

describe('a unit whose PCI id names no known chip', () => {
  it('is left out, and doctor names the vendor file and the id it read', async () => {
    const t = goodHfi2Tree(fresh());
    writeFileSync(t.vendor, '0x43\n'); // 0x434e cut short
    // A child: the one run here that exits 66, through the process's own exit path.
    const r = cliChild(t.root, ['engines']);
    expect(r.code).toBe(66);
    expect(r.stderr).toContain("run 'hfi1-sdma doctor'");
    const d = await cli(t.root, ['doctor']);
    expect(d.stdout).toContain(`hfi2_0 is left out: ${t.vendor} and device read 0043:0001, no chip this program knows`);
  });
});
