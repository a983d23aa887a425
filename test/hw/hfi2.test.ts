// A CN5000 host running hfi2 with an engine window 8..15 (an SR-IOV function), read end to end by the live
// backend from a hand-built tree: the engine set, the flavour and its evidence, samples, counters, interrupts,
// the ring decoded with the JKR codec, and a stall on engine 8 reported as engine 8.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Backend, Clock } from '../../src/backend.js';
import { findHfiPciDevices, findUnits, openHwBackend } from '../../src/hw/index.js';
import { chipModel, engineRegOffset, memoryRegOffset } from '../../src/progress/chip.js';
import { classify, DEFAULT_CLASSIFY_OPTIONS, newTrack } from '../../src/progress/classify.js';
import { writeBarImage } from './bar-image.js';
import { fixture } from './fixtures.js';
import { JKR_BDF, writeHfi2Tree } from './hfi2-tree.js';

const base = mkdtempSync(join(tmpdir(), 'hfi2-root-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(base, String(n++));
const JKR = chipModel('jkr');
const WINDOW = [8, 9, 10, 11, 12, 13, 14, 15];

async function withBackend<T>(root: string, clock: Clock, f: (b: Backend) => Promise<T>): Promise<T> {
  const b = await openHwBackend({ sysroot: root, clock });
  try {
    return await f(b);
  } finally {
    await b.close();
  }
}

/** A 128 MiB JKR BAR image: engine 8 running with three descriptors in flight, its memory configuration set. */
const jkrBar = (path: string) =>
  writeBarImage(
    path,
    new Map([
      [JKR.sendDmaEngines, 16n],
      [engineRegOffset(JKR, 'ctrl', 8), 0x19n],
      [engineRegOffset(JKR, 'tail', 8), 3n],
      [engineRegOffset(JKR, 'head', 8), 0n],
      [engineRegOffset(JKR, 'lenGen', 8), 0x40800n],
      [engineRegOffset(JKR, 'descFetchedCnt', 8), 3n],
      [memoryRegOffset(JKR, 8), 0x400010n],
      [engineRegOffset(JKR, 'ctrl', 15), 0x39n],
    ]),
    JKR.bar0Size,
  );

describe('an hfi2 unit with the engine window 8-15', () => {
  it('has engineIds 8..15 and the hfi2/jkr/2-port flavour with one evidence line per decision', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    const [u, ...rest] = await findUnits(root);
    expect(rest).toEqual([]);
    expect(u).toMatchObject({ unit: 0, name: 'hfi2_0', pci: JKR_BDF, engines: 8, engineIds: WINDOW });
    expect(u?.flavour).toMatchObject({ module: 'hfi2', chip: 'jkr', driver: 'hfi2', ports: 2 });
    expect(u?.flavour.evidence).toEqual([
      'module hfi2: device/driver links to ../../../bus/pci/drivers/hfi2',
      'chip jkr: PCI id 434e:0001, subsystem 0002 (device/vendor, device/device)',
      'driver hfi2: the hfi2 module',
      'ports 2: ports/1, ports/2',
      `engines 8-15: the sdma<E> directories of ${join(root, 'sys/class/infiniband/hfi2_0')}`,
    ]);
  });

  it('takes the window from hw_resources when there are no sdma<E> directories', async () => {
    const root = fresh();
    writeHfi2Tree(root, { engineDirs: [] });
    const [u] = await findUnits(root);
    expect(u?.engineIds).toEqual(WINDOW);
    expect(u?.flavour.evidence.at(-1)).toContain('hw_resources line 6 (sde, last engine included)');
  });

  it('reads sde 0-16 as exclusive (there is no engine 16)', async () => {
    const root = fresh();
    writeHfi2Tree(root, { engineDirs: [], hwResources: fixture('hfi2/hw_resources-exclusive'), sdes: null });
    const [u] = await findUnits(root);
    expect(u?.engineIds).toEqual(Array.from({ length: 16 }, (_, i) => i));
  });

  it('takes the window from the sdes records when neither directories nor hw_resources show it', async () => {
    const root = fresh();
    writeHfi2Tree(root, { engineDirs: [], hwResources: null });
    const [u] = await findUnits(root);
    expect(u?.engineIds).toEqual(WINDOW);
  });

  it('samples are keyed 8..15: sdes, counters by their parsed index, interrupts hfi2_0 sdma<E>, two-port vl', async () => {
    const root = fresh();
    writeHfi2Tree(root, { vl: (e) => (e === 15 ? '-1,2' : '0,0') });
    await withBackend(root, { nowMs: () => 0 }, async (b) => {
      const unit = await b.unit(0);
      const samples = await unit.sample();
      expect(samples.map((s) => s.engine)).toEqual(WINDOW);
      const s8 = samples[0];
      expect(s8?.state).toBe('s99_Running');
      expect(s8?.csr?.ctrl).toBe(0x19n);
      expect(s8?.counters?.sdmaInt).toBe(1008n); // SDMAInt8, not the 1st engine's SDMAInt0
      expect(s8?.counters?.descFetched).toBe(5008n);
      expect(s8?.vl).toBe(0);
      expect(samples[7]?.vl).toBe(2); // port 1 does not map engine 15 (-1); port 2 maps it to VL 2
      expect(samples[6]?.csr?.ctrl).toBe(0x39n); // threshold and single-descriptor bits (sdes C)
    });
  });

  it('without counters, seq comes from the hfi2_0 sdma<E> vectors by absolute index', async () => {
    const root = fresh();
    writeHfi2Tree(root, { counters: false });
    await withBackend(root, { nowMs: () => 0 }, async (b) => {
      const samples = await (await b.unit(0)).sample([8, 15]);
      expect(samples.map((s) => [s.engine, s.seqSource, s.seq])).toEqual([
        [8, 'interrupts', 2 * (800 + 8)],
        [15, 'interrupts', 2 * (1500 + 15)],
      ]);
    });
  });

  it('without sdma<E>/cpu_list, the user CPUs come from debugfs sdma_cpu_list (every port), and a garbled one is left out', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    for (const e of WINDOW) rmSync(join(root, `sys/class/infiniband/hfi2_0/sdma${e}/cpu_list`));
    await withBackend(root, { nowMs: () => 0 }, async (b) => {
      const samples = await (await b.unit(0)).sample();
      expect(samples.map((s) => [s.engine, s.cpuList])).toEqual([
        [8, '2'],
        [9, '2'],
        [10, '10'],
        [11, '10'],
        [12, '10'],
        [13, 'empty'],
        [14, 'empty'],
        [15, 'empty'],
      ]);
    });
    writeFileSync(join(root, 'sys/kernel/debug/hfi2/hfi2_0/sdma_cpu_list'), 'cpu  2: pidx 0:  vl0: [ sdma 8\n');
    await withBackend(root, { nowMs: () => 0 }, async (b) => {
      const unit = await b.unit(0);
      expect((await unit.sample([8]))[0]?.cpuList).toBeNull();
      expect(
        unit
          .warnings?.()
          .map((w) => w.message)
          .join('\n'),
      ).toMatch(/sdma_cpu_list.*the user CPU list of the engines is left out/);
    });
  });

  it('names the window for an engine outside it', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    await withBackend(root, { nowMs: () => 0 }, async (b) => {
      const unit = await b.unit(0);
      await expect(unit.sample([3])).rejects.toMatchObject({
        code: 'E_NO_ENGINE',
        message: 'hfi2_0 has engines 8-15; there is no engine 3',
      });
      await expect(unit.ring(0)).rejects.toMatchObject({ code: 'E_NO_ENGINE' });
    });
  });

  it('the ring of engine 8 is decoded from d0/d1 with the JKR codec (58-bit address, FIRST/LAST/len in qw1)', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    await withBackend(root, { nowMs: () => 0 }, async (b) => {
      const ring = await (await b.unit(0)).ring(8);
      expect(ring).toMatchObject({ engine: 8, head: 0, tail: 3 });
      expect(ring.descriptors).toEqual([
        {
          slot: 0,
          flags: '--F-',
          addr: 0x0200000000123000n,
          gen: 1,
          len: 64,
          ahgIdx: 3,
          ahgMode: 1,
          qw0: 0x0200000000123000n,
          qw1: 0x80402304n,
        },
        { slot: 1, flags: '----', addr: 0x200004000n, gen: 1, len: 4096, qw0: 0x200004000n, qw1: 0x10000004n },
        { slot: 2, flags: 'IH-L', addr: 0x5000n, gen: 1, len: 1000, qw0: 0x5000n, qw1: 0x43e80007n },
      ]);
    });
  });

  it('a stall on engine 8 is reported as engine 8, never as engine 0', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    let nowMs = 0;
    await withBackend(root, { nowMs: () => nowMs }, async (b) => {
      const unit = await b.unit(0);
      const tracks = new Map<number, ReturnType<typeof newTrack>>();
      const verdicts = new Map<number, string>();
      for (const t of [0, 1500, 3000]) {
        nowMs = t;
        for (const s of await unit.sample()) {
          const track = tracks.get(s.engine) ?? newTrack();
          tracks.set(s.engine, track);
          verdicts.set(s.engine, classify(track, s, { ...DEFAULT_CLASSIFY_OPTIONS, descqCnt: 2048 }).verdict);
        }
      }
      expect(verdicts.get(8)).toBe('stalled');
      expect(verdicts.has(0)).toBe(false);
      expect([...verdicts].filter(([, v]) => v === 'stalled').map(([e]) => e)).toEqual([8]);
      expect(verdicts.get(9)).toBe('idle');
    });
  });

  it('reads the JKR BAR (128 MiB image, engine blocks 0x2000 apart, SEND_DMA_CFG_MEMORY) when sdes is absent', async () => {
    const root = fresh();
    writeHfi2Tree(root, { sdes: null, bar: jkrBar });
    await withBackend(root, { nowMs: () => 0 }, async (b) => {
      const [s8, s9] = await (await b.unit(0)).sample([8, 9]);
      expect(s8?.engine).toBe(8);
      expect(s8?.csr).toMatchObject({ ctrl: 0x19n, hwTail: 3n, hwHead: 0n, memory: 0x400010n, lenGen: 0x40800n, checkSlid: 0n });
      expect(s9?.csr?.ctrl).toBe(0n);
    });
  });

  it('a BAR image of WFR size under a JKR id is not this chip resource0: left out with the reason', async () => {
    const root = fresh();
    writeHfi2Tree(root, { bar: (p) => writeBarImage(p, new Map()) });
    const [u] = await findUnits(root);
    const bar = u?.sources.find((s) => s.source === 'bar');
    expect(bar).toMatchObject({ readable: false });
    expect(bar?.reason).toContain("smaller than the chip's 128 MiB BAR0");
  });

  it('skips a device with an unknown chip id, and lists 434e:0001 among the HFIs on the PCI bus', async () => {
    const root = fresh();
    writeHfi2Tree(root, { pciId: ['0x434e', '0x0009'] });
    expect(await findUnits(root)).toEqual([]);
    const other = fresh();
    writeHfi2Tree(other);
    expect(await findHfiPciDevices(other)).toEqual([JKR_BDF]);
  });
});
