import { describe, expect, it } from 'vitest';
import {
  CHECK_REG_OFFSETS,
  CHIP_NAMES,
  cclocksToNs,
  checkRegOffset,
  chipModel,
  ENGINE_REG_OFFSETS,
  type EngineReg,
  engineBlockRange,
  engineRegAt,
  engineRegOffset,
  interruptSources,
  isHealthyRunningCtrl,
  memoryRegOffset,
  nsToCclocks,
  unexpectedRunningCtrl,
} from '../../src/progress/chip.js';
import * as K from '../../src/progress/constants.js';
import { ctrlNames } from '../../src/progress/csr.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';

const wfr = chipModel('wfr');
const jkr = chipModel('jkr');
const REGS = Object.keys(ENGINE_REG_OFFSETS) as EngineReg[];
const engine = fc.integer({ min: 0, max: 15 });
const reg = fc.constantFrom(...REGS);

// The WFR per-engine constants of constants.ts, by register name, for engine 0.
const WFR_ENGINE0: Record<EngineReg, number> = {
  ctrl: K.SEND_DMA_CTRL,
  status: K.SEND_DMA_STATUS,
  baseAddr: K.SEND_DMA_BASE_ADDR,
  lenGen: K.SEND_DMA_LEN_GEN,
  tail: K.SEND_DMA_TAIL,
  head: K.SEND_DMA_HEAD,
  headAddr: K.SEND_DMA_HEAD_ADDR,
  priorityThld: K.SEND_DMA_PRIORITY_THLD,
  idleCnt: K.SEND_DMA_IDLE_CNT,
  reloadCnt: K.SEND_DMA_RELOAD_CNT,
  descCnt: K.SEND_DMA_DESC_CNT,
  descFetchedCnt: K.SEND_DMA_DESC_FETCHED_CNT,
  engErrStatus: K.SEND_DMA_ENG_ERR_STATUS,
  engErrMask: K.SEND_DMA_ENG_ERR_MASK,
  engErrClear: K.SEND_DMA_ENG_ERR_CLEAR,
};

describe('CSR map per chip (chip_registers.h, chip_registers_jkr.h)', () => {
  test.prop([engine, reg], fcParams(300, 20_000))('WFR offsets are those of constants.ts', (e, r) => {
    expect(engineRegOffset(wfr, r, e)).toBe(WFR_ENGINE0[r] + K.SDMA_ENGINE_STRIDE * e);
  });

  test.prop([fc.constantFrom(...CHIP_NAMES), engine, reg], fcParams(500, 50_000))(
    'engineRegAt inverts engineRegOffset on both chips',
    (name, e, r) => {
      const chip = chipModel(name);
      expect(engineRegAt(chip, engineRegOffset(chip, r, e))).toEqual({ engine: e, reg: r });
    },
  );

  test.prop([fc.constantFrom(...CHIP_NAMES), engine, reg], fcParams(500, 50_000))(
    'every per-engine register lies inside its engine block and inside BAR0, 8-byte aligned',
    (name, e, r) => {
      const chip = chipModel(name);
      const off = engineRegOffset(chip, r, e);
      const block = chip.engineBase + chip.engineStride * e;
      expect(off).toBeGreaterThanOrEqual(block);
      expect(off + 8).toBeLessThanOrEqual(block + chip.engineStride);
      expect(off + 8).toBeLessThanOrEqual(chip.bar0Size);
      expect(off % 8).toBe(0);
    },
  );

  test.prop([fc.integer({ min: 0, max: 0x800_0000 })], fcParams(1000, 100_000))(
    'an offset outside every engine block or between registers is no register',
    (off) => {
      const at = engineRegAt(jkr, off);
      if (at) expect(engineRegOffset(jkr, at.reg, at.engine)).toBe(off);
      else {
        const rel = off - jkr.engineBase;
        const inner = ((rel % jkr.engineStride) + jkr.engineStride) % jkr.engineStride;
        const outside = rel < 0 || rel >= jkr.engineStride * 16;
        expect(outside || !Object.values(ENGINE_REG_OFFSETS).includes(inner as never)).toBe(true);
      }
    },
  );

  it('lays out JKR engines 0x2000 apart from 0x1A00000, within kreg2 of a 128 MiB BAR0', () => {
    expect(jkr.bar0Size).toBe(128 * 1024 * 1024);
    expect(wfr.bar0Size).toBe(64 * 1024 * 1024);
    expect(engineRegOffset(jkr, 'ctrl', 3)).toBe(0x1a06000);
    expect(engineRegOffset(jkr, 'head', 15)).toBe(0x1a1e028);
    expect(engineRegOffset(wfr, 'head', 15)).toBe(0x1a00f28);
    expect(engineBlockRange(jkr)).toEqual({ start: 0x1a00000, end: 0x1a20000 });
    expect(engineBlockRange(jkr).end).toBeLessThan(0x2000000); // PIO starts at 0x2000000
    expect(engineBlockRange(wfr)).toEqual({ start: K.SDMA_CSR_BLOCK_START, end: K.SDMA_CSR_BLOCK_START + K.SDMA_CSR_BLOCK_SIZE });
  });

  it('puts the engine memory config at SEND_DMA_MEMORY (WFR) or SEND_DMA_CFG_MEMORY 0x1B00B00 + 8e (JKR)', () => {
    expect(memoryRegOffset(wfr, 0)).toBe(K.SEND_DMA_MEMORY);
    expect(memoryRegOffset(wfr, 5)).toBe(K.SEND_DMA_MEMORY + 5 * 0x100);
    expect(memoryRegOffset(jkr, 0)).toBe(0x1b00b00);
    expect(memoryRegOffset(jkr, 5)).toBe(0x1b00b28);
    expect(jkr.sendDmaEngines).toBe(0x1b00018);
    expect(wfr.sendDmaEngines).toBe(K.SEND_DMA_ENGINES);
  });

  it('has SEND_DMA_CHECK_* registers on WFR only', () => {
    expect(checkRegOffset(wfr, 'checkSlid', 2)).toBe(K.SEND_DMA_CHECK_SLID + 0x200);
    expect(checkRegOffset(wfr, 'checkEnable', 0)).toBe(K.SEND_DMA_CHECK_ENABLE);
    for (const r of Object.keys(CHECK_REG_OFFSETS) as (keyof typeof CHECK_REG_OFFSETS)[]) {
      expect(checkRegOffset(jkr, r, 0)).toBeNull();
    }
  });
});

describe('interrupt sources per chip (chip.h / chip_jkr.h; the engine interrupt masks, sdma.c)', () => {
  test.prop([engine], fcParams(16, 16))('WFR: sources 192/208/224 + e in register 3, masks as constants.ts', (e) => {
    const s = interruptSources(wfr, e);
    expect(s).toMatchObject({ engErr: 16 + e, sdma: 192 + e, progress: 208 + e, idle: 224 + e, reg: K.CCE_INT_SDMA_REG });
    expect(s.intMask).toBe(K.intMask(e));
    expect(s.progressMask).toBe(K.progressMask(e));
    expect(s.idleMask).toBe(K.idleMask(e));
  });

  test.prop([engine], fcParams(16, 16))('JKR: sources 272/288/304 + e in register 4, bits 16/32/48 + e', (e) => {
    const s = interruptSources(jkr, e);
    expect(s).toMatchObject({ engErr: 16 + e, sdma: 272 + e, progress: 288 + e, idle: 304 + e, reg: 4 });
    expect(s.intMask).toBe(1n << BigInt(16 + e));
    expect(s.progressMask).toBe(1n << BigInt(32 + e));
    expect(s.idleMask).toBe(1n << BigInt(48 + e));
  });
});

describe('core clock per chip', () => {
  it('is 1242 ps on WFR and 602 ps on JKR: 250 ns of sdma_idle_cnt is 201 and 415 cycles', () => {
    expect(wfr.cclockPs).toBe(K.ASIC_CCLOCK_PS);
    expect(nsToCclocks(wfr, 250)).toBe(201);
    expect(nsToCclocks(jkr, 250)).toBe(415);
    expect(cclocksToNs(jkr, 415)).toBe(249);
    expect(cclocksToNs(wfr, 201)).toBe(249);
  });
});

describe('CTRL of a running engine per build (sdma_sendctrl and the s99 CTRL write, sdma.c)', () => {
  it('takes 0x19, 0x29 and 0x39 as healthy on the Cornelis hfi1 and hfi2, whatever the chip (threshold, single descriptor)', () => {
    for (const d of ['cornelis', 'hfi2'] as const) {
      for (const c of [0x9n, 0x19n, 0x29n, 0x39n]) expect(isHealthyRunningCtrl(d, c)).toBe(true);
    }
  });

  it('flags 0x19 upstream as an unexpected bit 4, and 0x9 as healthy', () => {
    expect(isHealthyRunningCtrl('upstream', 0x9n)).toBe(true);
    expect(isHealthyRunningCtrl('upstream', 0x19n)).toBe(false);
    expect(unexpectedRunningCtrl('upstream', 0x19n)).toEqual({ missing: 0n, extra: 0x10n });
  });

  it('flags a missing ENABLE or INT_ENABLE, and HALT, on every build', () => {
    for (const driver of ['upstream', 'cornelis', 'hfi2'] as const) {
      expect(unexpectedRunningCtrl(driver, 0x18n).missing).toBe(0x1n);
      expect(unexpectedRunningCtrl(driver, 0x11n).missing).toBe(0x8n);
      expect(unexpectedRunningCtrl(driver, 0xbn).extra).toBe(0x2n);
    }
    expect(unexpectedRunningCtrl('hfi2', 0x49n).extra).toBe(0x40n);
  });

  it('names bits 4 and 5 on JKR and keeps the WFR names as before', () => {
    expect(ctrlNames(0x39n, 'jkr')).toEqual(['ENABLE', 'INT_ENABLE', 'THRESHOLD_ENABLE', 'SINGLE_DESCRIPTOR']);
    expect(ctrlNames(0x19n)).toEqual(['ENABLE', 'INT_ENABLE']);
    expect(ctrlNames(0x19n, 'wfr')).toEqual(['ENABLE', 'INT_ENABLE']);
  });
});
