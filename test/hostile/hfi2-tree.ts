// Hostile hfi2 (CN5000) and Cornelis hfi1 trees: the good hand-built tree of test/hw/hfi2-tree.ts, its files
// by name, a readable 128 MiB JKR BAR image, and the read of every source through the live backend.
import { join } from 'node:path';
import { expect } from 'vitest';
import { isHfi1SdmaError } from '../../src/errors.js';
import { openHwBackend } from '../../src/hw/index.js';
import { chipModel, engineRegOffset } from '../../src/progress/chip.js';
import { writeBarImage } from '../hw/bar-image.js';
import { type Hfi2TreeOptions, JKR_BDF, writeHfi2Tree } from '../hw/hfi2-tree.js';

const JKR = chipModel('jkr');

/** A readable JKR BAR image: 16 engines, engines 8 to 15 running with 2048-entry rings. */
export function goodJkrBar(path: string): void {
  const regs = new Map<number, bigint>([[JKR.sendDmaEngines, 16n]]);
  for (let e = 8; e < 16; e++) {
    regs.set(engineRegOffset(JKR, 'ctrl', e), 0x9n);
    regs.set(engineRegOffset(JKR, 'lenGen', e), 0x40800n);
  }
  writeBarImage(path, regs, JKR.bar0Size);
}

/** Write a good hfi2 tree under `root` (options as writeHfi2Tree) and return the paths of its sources. */
export function goodHfi2Tree(root: string, o: Hfi2TreeOptions = {}) {
  const cls = writeHfi2Tree(root, o);
  const module = o.module ?? 'hfi2';
  const dbg = join(root, 'sys/kernel/debug', module, `${module}_0`);
  const pci = join(root, 'sys/bus/pci/devices', JKR_BDF);
  return {
    root,
    cls,
    hwResources: join(cls, 'hw_resources'),
    vl: join(cls, 'sdma8/vl'),
    cpuList: join(cls, 'sdma8/cpu_list'),
    sdmaCpuList: join(dbg, 'sdma_cpu_list'),
    sdes: join(dbg, 'sdes'),
    counters: join(dbg, 'counters'),
    counterNames: join(dbg, 'counter_names'),
    qpStats: join(dbg, 'qp_stats'),
    interrupts: join(root, 'proc/interrupts'),
    vendor: join(pci, 'vendor'),
    device: join(pci, 'device'),
    subsystem: join(pci, 'subsystem_device'),
    driver: join(pci, 'driver'),
    resource0: join(pci, 'resource0'),
    params: join(root, 'sys/module', module, 'parameters'),
  };
}

const CODES = new Set(['E_PARSE', 'E_UNAVAILABLE', 'E_DEVICE_GONE', 'E_PERMISSION']);

/** Run `what`; a failure must be one of our source errors naming the tree or the unit. */
export async function onlyOurErrors(root: string, what: () => Promise<unknown>): Promise<void> {
  try {
    await what();
  } catch (e) {
    if (!isHfi1SdmaError(e)) throw e;
    expect(CODES.has(e.code), `${e.code}: ${e.message}`).toBe(true);
    expect(e.message.includes(root) || /^hfi[12]_0/.test(e.message), e.message).toBe(true);
  }
}

/** Open the tree and read every source of every unit: samples, rings, waiters, link, warnings. */
export async function readEverything(root: string): Promise<void> {
  let backend: Awaited<ReturnType<typeof openHwBackend>> | null = null;
  await onlyOurErrors(root, async () => {
    backend = await openHwBackend({ sysroot: root, clock: { nowMs: () => 5000 } });
  });
  if (!backend) return;
  const b: Awaited<ReturnType<typeof openHwBackend>> = backend;
  try {
    for (const info of await b.units()) {
      const u = await b.unit(info.unit);
      await onlyOurErrors(root, () => u.sample());
      for (const e of info.engineIds) await onlyOurErrors(root, () => u.ring(e));
      await onlyOurErrors(root, async () => u.waiters?.());
      await onlyOurErrors(root, async () => u.link?.());
      for (const w of u.warnings?.() ?? []) expect(w.message).toContain(root);
    }
  } finally {
    await b.close();
  }
}

/** The files of goodHfi2Tree that the randomized tests mutate. */
export const HFI2_FILES = [
  'hwResources',
  'vl',
  'cpuList',
  'sdmaCpuList',
  'sdes',
  'counters',
  'counterNames',
  'qpStats',
  'interrupts',
  'vendor',
  'device',
  'subsystem',
] as const;
