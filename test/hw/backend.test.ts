import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Backend, Clock } from '../../src/backend.js';
import { type HwFs, realFs } from '../../src/hw/fsio.js';
import { findUnits, openHwBackend } from '../../src/hw/index.js';
import { engineReg } from '../../src/hw/regs.js';
import {
  ALL_ONES_64,
  SEND_DMA_CTRL,
  SEND_DMA_DESC_FETCHED_CNT,
  SEND_DMA_ENGINES,
  SEND_DMA_LEN_GEN,
  SEND_DMA_STATUS,
} from '../../src/progress/constants.js';
import { writeBarImage } from './bar-image.js';
import { fixture } from './fixtures.js';
import { writeTree } from './sysroot.js';

const base = mkdtempSync(join(tmpdir(), 'hfi1-root-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(base, String(n++));
const clock: Clock = { nowMs: () => 1234 };

async function withBackend<T>(root: string, f: (b: Backend) => Promise<T>): Promise<T> {
  const b = await openHwBackend({ sysroot: root, clock });
  try {
    return await f(b);
  } finally {
    await b.close();
  }
}

const goodBar = (path: string) =>
  writeBarImage(
    path,
    new Map([
      [SEND_DMA_ENGINES, 16n],
      [engineReg(SEND_DMA_CTRL, 0), 0x9n],
      [engineReg(SEND_DMA_LEN_GEN, 0), 0x40800n],
      [engineReg(SEND_DMA_DESC_FETCHED_CNT, 0), 77n],
      [engineReg(SEND_DMA_CTRL, 1), 0x8n],
    ]),
  );

describe('discovery (the hfi1 sysfs attributes, sysfs.c, num_sdma, chip.c, sdma_get_descq_cnt, sdma.c)', () => {
  it('finds the unit, its PCI address, engines and ring size', async () => {
    const root = fresh();
    writeTree(root, { engines: 2, descqCntParam: '65600\n' });
    const [u, ...rest] = await findUnits(root);
    expect(rest).toEqual([]);
    expect(u).toMatchObject({ unit: 0, name: 'hfi1_0', pci: '0000:05:00.0', engines: 2, descqCnt: 64 });
  });

  it('ignores an RDMA device that is not an Omni-Path HFI, and an empty tree', async () => {
    const root = fresh();
    writeTree(root, { vendorDevice: ['0x15b3', '0x1017'] });
    expect(await findUnits(root)).toEqual([]);
    expect(await findUnits(fresh())).toEqual([]);
  });

  it('uses 2048 when the parameter is missing or invalid (sdma_get_descq_cnt, sdma.c)', async () => {
    const root = fresh();
    writeTree(root, { descqCntParam: '1000\n' });
    expect((await findUnits(root))[0]?.descqCnt).toBe(2048);
    const root2 = fresh();
    writeTree(root2, { descqCntParam: null });
    expect((await findUnits(root2))[0]?.descqCnt).toBe(2048);
  });
});

describe('samples merged from every readable source', () => {
  it('as root: sdes header, BAR DESC_FETCHED_CNT, counters seq, sysfs', async () => {
    const root = fresh();
    writeTree(root, { bar: goodBar });
    await withBackend(root, async (b) => {
      const [info] = await b.units();
      // The fixture's debugfs has no port counter files: the ports' counters come from sysfs (here none).
      expect(info?.sources.filter((s) => !s.readable).map((s) => s.source)).toEqual([
        'hwCounters',
        'portCounters',
        'procPsm',
        'trace',
      ]);
      const u = await b.unit(0);
      const [s0, s1] = await u.sample();
      expect(s0).toMatchObject({
        unit: 0,
        engine: 0,
        timeMs: 1234,
        state: 's99_Running',
        cpu: 3,
        seq: 12,
        seqSource: 'counters',
      });
      expect(s0?.sources).toEqual(['sdes', 'bar', 'counters', 'interrupts', 'sysfs']);
      expect(s0?.csr?.descFetchedCnt).toBe(77n);
      expect(s0?.csr?.headDma).toBe(0n);
      expect(s0?.sw).toMatchObject({ descqTail: 3, descqHead: 0, swTail: 3 });
      expect(s0).toMatchObject({ vl: 0, cpuList: '0-3,8', gone: false });
      expect(s1).toMatchObject({ engine: 1, vl: 1, cpuList: 'empty', counters: { idleInt: 0x100000001n } });
      const ring = await u.ring(0);
      expect(ring).toMatchObject({ unit: 0, engine: 0, descqCnt: 2048, head: 0, tail: 3 });
      expect(ring.descriptors.map((d) => d.flags)).toEqual(['--F-', '-H-L', '-HFL']);
    });
  });

  it('without debugfs: registers from the BAR, seq from /proc/interrupts', async () => {
    const root = fresh();
    writeTree(root, { debugfs: 'empty', bar: goodBar });
    await withBackend(root, async (b) => {
      const [info] = await b.units();
      const sdes = info?.sources.find((s) => s.source === 'sdes');
      expect(sdes).toMatchObject({ readable: false, reason: expect.stringContaining('not mounted') });
      expect(sdes?.fix).toContain('mount -t debugfs none /sys/kernel/debug');
      const [s0] = await (await b.unit(0)).sample([0]);
      expect(s0).toMatchObject({ state: null, sw: null, seq: 3000, seqSource: 'interrupts' });
      expect(s0?.csr).toMatchObject({ ctrl: 0x9n, headDma: null, descFetchedCnt: 77n });
      expect(s0?.sources).toEqual(['bar', 'interrupts', 'sysfs']);
      await expect((await b.unit(0)).ring(0)).rejects.toMatchObject({ code: 'E_UNAVAILABLE' });
    });
  });

  it('the reduced, unprivileged view: sysfs, hw_counters and /proc/interrupts', async () => {
    const root = fresh();
    const hw: Record<string, string> = {};
    for (const [k, v] of Object.entries({ SDEDscFdCn: 1, SDMAInt: 10, SDMAErrCt: 5, SDMAIdInt: 20, SDMAPrIntCn: 30 })) {
      hw[`${k}0,32`] = `${v}\n`;
      hw[`${k}1,32`] = `${v + 1}\n`;
    }
    writeTree(root, { debugfs: 'absent', hwCounters: hw });
    await withBackend(root, async (b) => {
      const [info] = await b.units();
      expect(info?.sources.filter((s) => s.readable).map((s) => s.source)).toEqual(['hwCounters', 'interrupts', 'sysfs']);
      const [s0] = await (await b.unit(0)).sample([0]);
      // seq = 2 × (SDMAInt + SDMAIdInt + SDMAPrIntCn + SDMAErrCt); the error count since driver load is kept
      expect(s0).toMatchObject({
        csr: null,
        sw: null,
        seq: 130,
        seqSource: 'counters',
        counters: { sdmaInt: 10n, errCount: 5n },
      });
      expect(s0?.sources).toEqual(['hwCounters', 'interrupts', 'sysfs']);
    });
  });

  it('a device whose BAR reads all-ones gives gone samples, not an error', async () => {
    const root = fresh();
    writeTree(root, {
      sdes: fixture('sdes/device-gone.txt') + fixture('sdes/upstream.txt').split('\n').slice(6).join('\n'),
      bar: (p) =>
        writeBarImage(
          p,
          new Map([
            [SEND_DMA_ENGINES, ALL_ONES_64],
            [engineReg(SEND_DMA_STATUS, 0), ALL_ONES_64],
          ]),
        ),
    });
    await withBackend(root, async (b) => {
      const [s0, s1] = await (await b.unit(0)).sample();
      expect(s0?.gone).toBe(true);
      expect(s1?.gone).toBe(true);
    });
  });

  it('refuses an engine the unit does not have and a unit that does not exist', async () => {
    const root = fresh();
    writeTree(root);
    await withBackend(root, async (b) => {
      await expect((await b.unit(0)).sample([2])).rejects.toMatchObject({ code: 'E_NO_ENGINE' });
      await expect(b.unit(1)).rejects.toMatchObject({ code: 'E_NO_DEVICE' });
    });
  });

  it('a malformed descriptor line: a sample uses the headers, ring rejects with E_PARSE naming the file and line', async () => {
    const root = fresh();
    writeTree(root, { sdes: fixture('sdes/upstream.txt').replace('len:4032', 'len:40320') });
    await withBackend(root, async (b) => {
      const u = await b.unit(0);
      const samples = await u.sample();
      expect(samples[0]?.sources).toContain('sdes');
      await expect(u.ring(0)).rejects.toMatchObject({
        code: 'E_PARSE',
        line: 4,
        file: join(root, 'sys/kernel/debug/hfi1/hfi1_0/sdes'),
      });
    });
  });

  it('a malformed header line rejects a sample with E_PARSE naming the file and line', async () => {
    const root = fresh();
    writeTree(root, { sdes: fixture('sdes/upstream.txt').replace('SDE 0 CPU 3 ', 'SDE 0 CPU x ') });
    await withBackend(root, async (b) => {
      await expect((await b.unit(0)).sample()).rejects.toMatchObject({
        code: 'E_PARSE',
        file: join(root, 'sys/kernel/debug/hfi1/hfi1_0/sdes'),
      });
    });
  });

  it('a torn sdes cutting a wanted engine reports the cut record', async () => {
    const root = fresh();
    writeTree(root, { sdes: fixture('sdes/upstream.txt').slice(0, -20) });
    await withBackend(root, async (b) => {
      const u = await b.unit(0);
      expect((await u.sample([0]))[0]?.state).toBe('s99_Running');
      await expect(u.sample([1])).rejects.toMatchObject({ code: 'E_PARSE', line: 7 });
    });
  });

  it('reads a 64-entry ring (sdma_descq_cnt = 64)', async () => {
    const root = fresh();
    writeTree(root, { engines: 1, sdes: fixture('sdes/full-64.txt'), descqCntParam: '64\n' });
    await withBackend(root, async (b) => {
      const ring = await (await b.unit(0)).ring(0);
      expect(ring.descqCnt).toBe(64);
      expect(ring.descriptors).toHaveLength(63);
      expect(ring.descriptors[58]?.slot).toBe(63);
      expect(ring.descriptors[59]?.slot).toBe(0);
    });
  });
});

describe('read failures after discovery become coded errors', () => {
  const failing = (suffix: string, code: string): HwFs => ({
    ...realFs,
    readFile: async (p) => {
      if (p.endsWith(suffix)) throw Object.assign(new Error(`${code}: ${p}`), { code });
      return realFs.readFile(p);
    },
  });

  it.each([
    ['EPERM', 'E_PERMISSION', /lockdown/],
    ['EACCES', 'E_PERMISSION', /run as root/],
    ['ENOENT', 'E_DEVICE_GONE', /went away/],
    ['EIO', 'E_UNAVAILABLE', /EIO/],
  ])('%s reading sdes → %s', async (errno, code, message) => {
    const root = fresh();
    writeTree(root);
    const b = await openHwBackend({ sysroot: root, clock, fs: failing('/sdes', errno) });
    try {
      await expect((await b.unit(0)).sample()).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
    } finally {
      await b.close();
    }
  });
});
