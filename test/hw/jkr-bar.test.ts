// The JKR register map through src/hw: a 128 MiB sparse BAR image with the CSRs at the JKR offsets (engine
// blocks 0x2000 apart from 0x1A00000, SEND_DMA_CFG_MEMORY, SEND_DMA_ENGINES 0x1B00018, no CHECK registers), read
// with pread; the window refuses anything else; all-ones means the device is gone.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSdmaWindow, readEngineCount, readEngineCsrs, sdmaWindowFor } from '../../src/hw/regs.js';
import {
  chipModel,
  ENGINE_REG_OFFSETS,
  type EngineReg,
  engineRegAt,
  engineRegOffset,
  memoryRegOffset,
} from '../../src/progress/chip.js';
import { ALL_ONES_64, BAR0_SIZE } from '../../src/progress/constants.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';
import { writeBarImage } from './bar-image.js';

const JKR = chipModel('jkr');
const dir = mkdtempSync(join(tmpdir(), 'jkr-bar-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the JKR window on a BAR image', () => {
  const image = join(dir, 'resource0');
  writeBarImage(
    image,
    new Map<number, bigint>([
      [JKR.sendDmaEngines, 16n],
      [JKR.sendDmaMemSize, 6272n],
      [engineRegOffset(JKR, 'ctrl', 11), 0x29n],
      [engineRegOffset(JKR, 'status', 11), 1n << 57n],
      [engineRegOffset(JKR, 'engErrStatus', 11), 0x42n],
      [engineRegOffset(JKR, 'tail', 11), 0x7ffn],
      [engineRegOffset(JKR, 'head', 11), 0x12n],
      [engineRegOffset(JKR, 'lenGen', 11), 0x40800n],
      [engineRegOffset(JKR, 'reloadCnt', 11), 0xc9n],
      [engineRegOffset(JKR, 'descFetchedCnt', 11), 0xfffffff0n],
      [memoryRegOffset(JKR, 11), 0x1880498n],
      // What would be engine 11's CTRL on WFR: never read on JKR.
      [0x1a00000 + 0x100 * 11, 0xdeadn],
    ]),
    JKR.bar0Size,
  );

  it('reads an engine at its JKR offsets, its memory from SEND_DMA_CFG_MEMORY, SLC as 0', () => {
    const w = openSdmaWindow(image, JKR);
    try {
      w.check();
      expect(readEngineCount(w, image, JKR)).toBe(16);
      expect(readEngineCsrs(w, 11, JKR)).toEqual({
        ctrl: 0x29n,
        status: 1n << 57n,
        errStatus: 0x42n,
        hwTail: 0x7ffn,
        hwHead: 0x12n,
        headDma: null,
        memory: 0x1880498n,
        lenGen: 0x40800n,
        reloadCnt: 0xc9n,
        checkSlid: 0n,
        descFetchedCnt: 0xfffffff0n,
      });
      expect(readEngineCsrs(w, 10, JKR).ctrl).toBe(0n);
    } finally {
      w.close();
    }
  });

  it('refuses reads outside the JKR registers (a WFR CHECK register, past engine 15, between blocks)', () => {
    const w = openSdmaWindow(image, JKR);
    try {
      expect(() => w.read64(engineRegOffset(JKR, 'ctrl', 0) + 0xa0)).toThrow(RangeError);
      expect(() => w.read64(engineRegOffset(JKR, 'ctrl', 16))).toThrow(RangeError);
      expect(() => w.read64(JKR.sendDmaEngines + 8)).toThrow(RangeError);
      expect(() => w.read64(0x1800000)).toThrow(RangeError);
    } finally {
      w.close();
    }
  });

  it('the window is page aligned, spans the engine blocks and SEND_DMA_CFG_MEMORY, and wants a 128 MiB file', () => {
    const spec = sdmaWindowFor(JKR);
    expect(spec.start % 4096).toBe(0);
    expect(spec.start + spec.length).toBeGreaterThanOrEqual(memoryRegOffset(JKR, 16));
    expect(spec.minFileBytes).toBe(128 << 20);
    const small = join(dir, 'wfr-sized');
    writeBarImage(small, new Map(), BAR0_SIZE);
    expect(() => openSdmaWindow(small, JKR)).toThrow(expect.objectContaining({ code: 'E_UNAVAILABLE' }));
  });

  it('all-ones SEND_DMA_ENGINES: the device is gone', () => {
    const gone = join(dir, 'gone');
    writeBarImage(gone, new Map([[JKR.sendDmaEngines, ALL_ONES_64]]), JKR.bar0Size);
    const w = openSdmaWindow(gone, JKR);
    try {
      expect(() => readEngineCount(w, gone, JKR)).toThrow(expect.objectContaining({ code: 'E_DEVICE_GONE' }));
    } finally {
      w.close();
    }
  });
});

describe('the JKR CSR map', () => {
  const regs = Object.keys(ENGINE_REG_OFFSETS) as EngineReg[];
  test.prop([fc.integer({ min: 0, max: 15 }), fc.constantFrom(...regs)], fcParams(200, 2000))(
    'engineRegAt(engineRegOffset(e, reg)) is (e, reg), and every offset lies in the window',
    (engine, reg) => {
      const off = engineRegOffset(JKR, reg, engine);
      expect(engineRegAt(JKR, off)).toEqual({ engine, reg });
      const spec = sdmaWindowFor(JKR);
      expect(off >= spec.start && off + 8 <= spec.start + spec.length).toBe(true);
    },
  );
});
