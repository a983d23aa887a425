// How the live backend tells upstream hfi1, the Cornelis hfi1 build and hfi2 apart (flavour.ts), from the rules
// and from hand-built trees.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decideChip, decideDriver, decideModule, decidePorts } from '../../src/hw/flavour.js';
import { findUnits } from '../../src/hw/index.js';
import { chipModel } from '../../src/progress/chip.js';
import { BAR0_SIZE } from '../../src/progress/constants.js';
import { writeBarImage } from './bar-image.js';
import { fixture } from './fixtures.js';
import { writeHfi2Tree } from './hfi2-tree.js';
import { writeTree } from './sysroot.js';

const base = mkdtempSync(join(tmpdir(), 'hfi-flavour-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(base, String(n++));

describe('the rules', () => {
  it('module: the driver link first, else the name prefix', () => {
    expect(decideModule({ nameModule: 'hfi1', driverLink: '../../../bus/pci/drivers/hfi2' }).module).toBe('hfi2');
    expect(decideModule({ nameModule: 'hfi2', driverLink: null })).toEqual({
      module: 'hfi2',
      evidence: "module hfi2: the unit name's prefix (no device/driver link)",
    });
    expect(decideModule({ nameModule: 'hfi1', driverLink: '../../../bus/pci/drivers/vfio-pci' }).module).toBe('hfi1');
  });

  it('chip: the PCI id, else the BAR0 size, else WFR', () => {
    expect(decideChip({ pciId: { vendor: 0x8086, device: 0x24f1 }, bar0Bytes: null }).chip).toBe('wfr');
    expect(decideChip({ pciId: { vendor: 0x434e, device: 1 }, bar0Bytes: BAR0_SIZE }).chip).toBe('jkr');
    expect(decideChip({ pciId: null, bar0Bytes: chipModel('jkr').bar0Size }).chip).toBe('jkr');
    expect(decideChip({ pciId: null, bar0Bytes: BAR0_SIZE }).chip).toBe('wfr');
    expect(decideChip({ pciId: null, bar0Bytes: null })).toEqual({
      chip: 'wfr',
      evidence: 'chip wfr: neither a PCI id nor a BAR0 of a known size; assumed',
    });
  });

  it('driver: hfi2 by module; cornelis for hfi1 on JKR, with a Cornelis parameter, or a newer sdes line; else upstream', () => {
    const d = (chip: 'wfr' | 'jkr', params: string[], line: { line: number; kind: 'descriptor' | 'ahg' } | null) =>
      decideDriver('hfi1', chip, params, 'P', line, 'S').driver;
    expect(decideDriver('hfi2', 'wfr', [], 'P', null, 'S').driver).toBe('hfi2');
    expect(d('jkr', [], null)).toBe('cornelis');
    for (const p of ['pad_sdma_desc', 'sdma_align', 'enable_jkr_sdma_mem_init', 'jkr_sdma_credits_limit']) {
      expect(d('wfr', ['sdma_descq_cnt', p], null)).toBe('cornelis');
    }
    expect(d('wfr', ['sdma_descq_cnt', 'num_sdma'], null)).toBe('upstream');
    expect(decideDriver('hfi1', 'wfr', [], 'P', { line: 3, kind: 'ahg' }, 'S')).toEqual({
      driver: 'cornelis',
      evidence: 'driver cornelis: S line 3 is an aidx/amode/alen AHG line',
    });
  });

  it('ports: the ports/<n> directories, 1 when none', () => {
    expect(decidePorts(['1', '2']).ports).toBe(2);
    expect(decidePorts([]).ports).toBe(1);
  });
});

describe('from a tree', () => {
  it('upstream hfi1 on WFR: no Cornelis parameter, upstream sdes lines', async () => {
    const root = fresh();
    writeTree(root);
    const [u] = await findUnits(root);
    expect(u?.flavour).toMatchObject({ module: 'hfi1', chip: 'wfr', driver: 'upstream', ports: 1 });
    expect(u?.engineIds).toEqual([0, 1]);
  });

  it('Cornelis hfi1 on WFR: its module parameters present (every value -1, automatic)', async () => {
    const root = fresh();
    writeTree(root, {
      files: { 'sys/module/hfi1/parameters/pad_sdma_desc': '-1\n', 'sys/module/hfi1/parameters/sdma_align': '-1\n' },
    });
    const [u] = await findUnits(root);
    expect(u?.flavour.driver).toBe('cornelis');
    expect(u?.flavour.evidence).toContain(`driver cornelis: ${join(root, 'sys/module/hfi1/parameters')} has pad_sdma_desc`);
  });

  it('Cornelis hfi1 on WFR: no parameters, but sdes prints the d0/d1 line', async () => {
    const root = fresh();
    writeTree(root, { sdes: fixture('cornelis/sdes-wfr.txt') });
    const [u] = await findUnits(root);
    expect(u?.flavour.driver).toBe('cornelis');
    expect(u?.flavour.evidence).toContain(
      `driver cornelis: ${join(root, 'sys/kernel/debug/hfi1/hfi1_0/sdes')} line 2 is a descriptor line with d0/d1`,
    );
  });

  it('hfi1 on a JKR chip is the Cornelis build; its debugfs is under hfi1/', async () => {
    const root = fresh();
    writeHfi2Tree(root, { module: 'hfi1', hwResources: null, interrupts: null });
    const [u] = await findUnits(root);
    expect(u).toMatchObject({ name: 'hfi1_0', engineIds: [8, 9, 10, 11, 12, 13, 14, 15] });
    expect(u?.flavour).toMatchObject({ module: 'hfi1', chip: 'jkr', driver: 'cornelis', ports: 2 });
    expect(u?.sources.find((s) => s.source === 'sdes')).toMatchObject({
      readable: true,
      path: join(root, 'sys/kernel/debug/hfi1/hfi1_0/sdes'),
    });
  });

  it('hfi2 on WFR (the 2025 and March 2026 postings claimed 8086:24f0): module hfi2, chip wfr, every parameter optional', async () => {
    const root = fresh();
    writeHfi2Tree(root, { pciId: ['0x8086', '0x24f0'], engineDirs: [0, 1], hwResources: null, sdes: null, counters: false });
    const [u] = await findUnits(root);
    expect(u).toMatchObject({ name: 'hfi2_0', descqCnt: 2048, engineIds: [0, 1] });
    expect(u?.flavour).toMatchObject({ module: 'hfi2', chip: 'wfr', driver: 'hfi2' });
  });

  it('no PCI id: a 128 MiB resource0 says JKR', async () => {
    const root = fresh();
    writeHfi2Tree(root, { pciId: null, bar: (p) => writeBarImage(p, new Map(), chipModel('jkr').bar0Size) });
    const [u] = await findUnits(root);
    expect(u?.flavour.chip).toBe('jkr');
    expect(u?.flavour.evidence[1]).toBe('chip jkr: no PCI id; resource0 is 128 MiB (the JKR BAR0)');
  });
});
