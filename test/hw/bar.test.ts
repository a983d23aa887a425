import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { barError, openBarWindow } from '../../src/hw/bar.js';
import { type Libc, libc } from '../../src/hw/ffi.js';
import {
  descqCntFromLenGen,
  engineReg,
  openSdmaWindow,
  readEngineCount,
  readEngineCsrs,
  SDMA_WINDOW,
} from '../../src/hw/regs.js';
import {
  ALL_ONES_64,
  SEND_DMA_CHECK_SLID,
  SEND_DMA_CTRL,
  SEND_DMA_DESC_FETCHED_CNT,
  SEND_DMA_ENG_ERR_STATUS,
  SEND_DMA_ENGINES,
  SEND_DMA_HEAD,
  SEND_DMA_LEN_GEN,
  SEND_DMA_MEMORY,
  SEND_DMA_RELOAD_CNT,
  SEND_DMA_STATUS,
  SEND_DMA_TAIL,
} from '../../src/progress/constants.js';
import { writeBarImage } from './bar-image.js';

const dir = mkdtempSync(join(tmpdir(), 'hfi1-bar-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// SEND_DMA_* per-engine CSRs, chip_registers.h / init_sdma_regs, sdma.c values of engine 3 of a running 16-engine, 2048-entry device
const regs = new Map<number, bigint>([
  [SEND_DMA_ENGINES, 16n],
  [engineReg(SEND_DMA_CTRL, 3), 0x9n],
  [engineReg(SEND_DMA_STATUS, 3), 1n << 57n],
  [engineReg(SEND_DMA_ENG_ERR_STATUS, 3), 0x42n],
  [engineReg(SEND_DMA_TAIL, 3), 0x7ffn],
  [engineReg(SEND_DMA_HEAD, 3), 0x12n],
  [engineReg(SEND_DMA_MEMORY, 3), 0x1880498n],
  [engineReg(SEND_DMA_LEN_GEN, 3), 0x40800n],
  [engineReg(SEND_DMA_RELOAD_CNT, 3), 0xc9n],
  [engineReg(SEND_DMA_CHECK_SLID, 3), 0xffff0001n],
  [engineReg(SEND_DMA_DESC_FETCHED_CNT, 3), 0xfffffff0n],
  [engineReg(SEND_DMA_CTRL, 15), 0xfedcba9876543210n],
]);
const image = join(dir, 'resource0');
writeBarImage(image, regs);

describe('BAR window over a regular file as resource0 (pci_mmap_resource, drivers/pci)', () => {
  it('reads back values at the SEND_DMA_* offsets, 64-bit exact', () => {
    const w = openSdmaWindow(image);
    try {
      expect(w.read64(SEND_DMA_ENGINES)).toBe(16n);
      expect(readEngineCount(w, image)).toBe(16);
      expect(w.read64(engineReg(SEND_DMA_CTRL, 15))).toBe(0xfedcba9876543210n);
      expect(readEngineCsrs(w, 3)).toEqual({
        ctrl: 0x9n,
        status: 1n << 57n,
        errStatus: 0x42n,
        hwTail: 0x7ffn,
        hwHead: 0x12n,
        headDma: null,
        memory: 0x1880498n,
        lenGen: 0x40800n,
        reloadCnt: 0xc9n,
        checkSlid: 0xffff0001n,
        descFetchedCnt: 0xfffffff0n,
      });
      expect(readEngineCsrs(w, 0).ctrl).toBe(0n);
      expect(descqCntFromLenGen(0x40800n)).toBe(2048);
      expect(descqCntFromLenGen(0x40040n)).toBe(64);
    } finally {
      w.close();
    }
  });

  it('refuses misaligned offsets and offsets outside the SDMA registers', () => {
    const w = openSdmaWindow(image);
    try {
      expect(() => w.read64(SEND_DMA_CTRL + 4)).toThrow(RangeError);
      expect(() => w.read64(SEND_DMA_CTRL + 1)).toThrow(RangeError);
      expect(() => w.read64(0)).toThrow(RangeError); // CCE: not mapped
      expect(() => w.read64(0x2000000)).toThrow(RangeError); // PIO send buffers (pci_mmap_resource, drivers/pci)
      expect(() => w.read64(SDMA_WINDOW.start)).toThrow(RangeError); // mapped but not a register we read
      expect(() => w.read64(engineReg(SEND_DMA_CTRL, 16))).toThrow(RangeError); // past engine 15
      expect(() => w.read64(Number.NaN)).toThrow(RangeError);
      expect(() => w.read64(-8)).toThrow(RangeError);
    } finally {
      w.close();
    }
  });

  it('releases the mapping on close, drops the view first, and is safe to close twice', () => {
    const real = libc();
    const calls: string[] = [];
    const spy: Libc = {
      ...real,
      mmap: (...a) => {
        calls.push('mmap');
        return real.mmap(...a);
      },
      munmap: (p, n) => {
        calls.push(`munmap ${n}`);
        return real.munmap(p, n);
      },
      close: (fd) => {
        calls.push('close');
        return real.close(fd);
      },
    };
    const w = openBarWindow(image, SDMA_WINDOW, spy);
    expect(w.read64(SEND_DMA_ENGINES)).toBe(16n);
    expect(calls).toEqual(['mmap']); // the descriptor stays open: check() fstats it before each sample
    w.close();
    expect(w.closed).toBe(true);
    expect(calls).toEqual(['mmap', `munmap ${SDMA_WINDOW.length}`, 'close']);
    expect(() => w.read64(SEND_DMA_ENGINES)).toThrow(/closed/);
    w.close();
    expect(calls).toHaveLength(3);
  });

  it('asks only for O_RDONLY and PROT_READ', () => {
    const real = libc();
    const seen: number[] = [];
    const spy: Libc = {
      ...real,
      open: (p, flags) => {
        seen.push(flags & 3); // O_ACCMODE
        return real.open(p, flags);
      },
      mmap: (len, prot, flags, fd, off) => {
        seen.push(prot);
        return real.mmap(len, prot, flags, fd, off);
      },
    };
    openBarWindow(image, SDMA_WINDOW, spy).close();
    expect(seen).toEqual([0, 1]);
  });

  it('reports a device that reads all-ones as E_DEVICE_GONE', () => {
    const gone = join(dir, 'gone');
    writeBarImage(gone, new Map([[SEND_DMA_ENGINES, ALL_ONES_64]]));
    const w = openSdmaWindow(gone);
    try {
      expect(() => readEngineCount(w, gone)).toThrow(expect.objectContaining({ code: 'E_DEVICE_GONE' }));
    } finally {
      w.close();
    }
  });

  it('refuses a file too small to be BAR0 instead of faulting', () => {
    const small = join(dir, 'small');
    writeBarImage(small, new Map(), 0x1000000);
    expect(() => openSdmaWindow(small)).toThrow(expect.objectContaining({ code: 'E_UNAVAILABLE' }));
    expect(() => openSdmaWindow(join(dir, 'missing'))).toThrow(expect.objectContaining({ code: 'E_UNAVAILABLE' }));
  });

  it('explains EACCES, EPERM (lockdown) and EINVAL (IO_STRICT_DEVMEM) with the fix', () => {
    expect(barError('r0', 'open', 13)).toMatchObject({ code: 'E_PERMISSION', message: expect.stringContaining('run as root') });
    expect(barError('r0', 'mmap', 1)).toMatchObject({ code: 'E_PERMISSION', message: expect.stringContaining('lockdown') });
    const einval = barError('r0', 'mmap', 22);
    expect(einval.code).toBe('E_UNAVAILABLE');
    expect(einval.message).toContain('CONFIG_IO_STRICT_DEVMEM');
    expect(einval.message).toContain('iomem=relaxed');
  });

  it('turns a failed mmap (MAP_FAILED by address) into the errno explanation', () => {
    const real = libc();
    const spy: Libc = { ...real, mmap: () => ({ ptr: null, address: 0xffff_ffff_ffff_ffffn, errno: 1 }) };
    expect(() => openBarWindow(image, SDMA_WINDOW, spy)).toThrow(/lockdown/);
  });
});
