import { describe, expect, it } from 'vitest';
import { ENG_ERR_BITS, SDMA_ENG_ERR_HALT_MASK } from '../../src/progress/constants.js';
import {
  ctrlNames,
  decodeCtrl,
  decodeEngErr,
  decodeStatus,
  engErrBitByName,
  isAllOnes,
  isHaltClassError,
  isLoggedError,
} from '../../src/progress/csr.js';
import { buildVlMap, selectEngineVl } from '../../src/progress/select.js';

describe('CSR decoding (SEND_DMA_* per-engine CSRs, chip_registers.h, SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h)', () => {
  it('decodes CTRL 0x9 as ENABLE|INT_ENABLE (s99) and 0xc as CLEANUP|INT_ENABLE (s15)', () => {
    expect(decodeCtrl(0x9n)).toEqual({ enable: true, halt: false, cleanup: false, intEnable: true });
    expect(ctrlNames(0xcn)).toEqual(['CLEANUP', 'INT_ENABLE']);
  });

  it('names STATUS bits 56 and 57 and keeps the rest raw', () => {
    expect(decodeStatus((1n << 56n) | (1n << 3n))).toEqual({ engHalted: true, engCleanedUp: false, otherBits: [3] });
    expect(decodeStatus(1n << 57n).engCleanedUp).toBe(true);
  });

  it('has the halt-class mask 0x7FDFF: bits 0–8 and 10–18', () => {
    const fromTable = ENG_ERR_BITS.filter((b) => b.halts).reduce((m, b) => m | (1n << BigInt(b.bit)), 0n);
    expect(fromTable).toBe(SDMA_ENG_ERR_HALT_MASK);
    expect(isHaltClassError(1n << 9n)).toBe(false);
    expect(isHaltClassError(1n << 19n)).toBe(false);
    expect(isHaltClassError(1n << 1n)).toBe(true);
  });

  it('decodes error bits with names and whether they halt', () => {
    expect(decodeEngErr((1n << 1n) | (1n << 20n))).toEqual([
      { bit: 1, name: 'SDmaGenMismatchErr', halts: true },
      { bit: 20, name: 'SDmaAssemblyCorErr', halts: false },
    ]);
    expect(decodeEngErr(1n << 40n)).toEqual([{ bit: 40, name: 'bit40', halts: false }]);
  });

  it('does not log the halt bit alone', () => {
    expect(isLoggedError(1n << 6n)).toBe(false);
    expect(isLoggedError((1n << 6n) | 1n)).toBe(true);
    expect(isLoggedError(0n)).toBe(false);
  });

  it('finds bits by name with or without prefix and suffix', () => {
    expect(engErrBitByName('SDmaGenMismatchErr')?.bit).toBe(1);
    expect(engErrBitByName('genmismatch')?.bit).toBe(1);
    expect(engErrBitByName('nonsense')).toBeUndefined();
  });

  it('recognises an all-ones register', () => {
    expect(isAllOnes(0xffff_ffff_ffff_ffffn)).toBe(true);
    expect(isAllOnes(0xffff_ffffn)).toBe(false);
  });
});

describe('engine selection map (sdma_select_engine_vl, sdma.c)', () => {
  it('16 engines / 8 VLs: VL v → engines {2v, 2v+1}, mask 1', () => {
    const m = buildVlMap(16, 8);
    expect(m.map.map((e) => e.engines)).toEqual(Array.from({ length: 8 }, (_, v) => [2 * v, 2 * v + 1]));
    expect(m.map.every((e) => e.mask === 1)).toBe(true);
    expect(m.engineToVl).toEqual(Array.from({ length: 16 }, (_, e) => e >> 1));
  });

  it('16 engines / 3 VLs: 5, 5, 6 engines with 8 slots each; map[3] aliases map[0]', () => {
    const m = buildVlMap(16, 3);
    expect(m.vls).toBe(4);
    expect(m.mask).toBe(3);
    expect(m.map[0]?.engines).toEqual([0, 1, 2, 3, 4, 0, 1, 2]);
    expect(m.map[1]?.engines).toEqual([5, 6, 7, 8, 9, 5, 6, 7]);
    expect(m.map[2]?.engines).toEqual([10, 11, 12, 13, 14, 15, 10, 11]);
    expect(m.map[3]).toBe(m.map[0]);
  });

  it('selects by selector & mask, and engine 0 for a VL beyond num_vls or without a map', () => {
    const m = buildVlMap(16, 3);
    expect(selectEngineVl(m, 13, 2, 3)).toBe(15); // 13 & 7 = 5 → engine 15
    expect(selectEngineVl(m, 13, 3, 3)).toBe(0);
    expect(selectEngineVl(null, 13, 1, 3)).toBe(0);
  });
});
