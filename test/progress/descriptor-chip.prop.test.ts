import { describe, expect, it } from 'vitest';
import { decode, emptyDescriptor, encode } from '../../src/progress/descriptor.js';
import {
  type ChipDescriptor,
  DESC_RESERVED,
  decodeFor,
  decodeWordsJkr,
  encodeFor,
  jkrDescByteCount,
  jkrDescFirst,
} from '../../src/progress/descriptor-chip.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';

const U64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });

function fieldsFor(addrBits: number): fc.Arbitrary<ChipDescriptor> {
  return fc.record({
    first: fc.boolean(),
    last: fc.boolean(),
    len: fc.integer({ min: 0, max: 0x3fff }),
    addr: fc.bigInt({ min: 0n, max: 2n ** BigInt(addrBits) - 1n }),
    ahgUpdate: fc.integer({ min: 0, max: 0xffff_ffff }),
    ahgMode: fc.integer({ min: 0, max: 7 }),
    ahgIdx: fc.integer({ min: 0, max: 31 }),
    ahgDws: fc.integer({ min: 0, max: 15 }),
    gen: fc.integer({ min: 0, max: 3 }),
    intReq: fc.boolean(),
    headToHost: fc.boolean(),
  });
}

describe('JKR descriptor codec (JKR_SDMA_DESC0_/JKR_SDMA_DESC1_ fields, sdma_defs.h)', () => {
  test.prop([fieldsFor(58)], fcParams(2000, 200_000))('decode(encode(x)) = x for every field, 58-bit addresses', (f) => {
    const { qw0, qw1 } = encodeFor('jkr', f);
    expect(decodeFor('jkr', qw0, qw1)).toEqual(f);
  });

  test.prop([fieldsFor(58)], fcParams(1000, 100_000))('fields land at the JKR bit positions', (f) => {
    const { qw0, qw1 } = encodeFor('jkr', f);
    expect(qw0).toBe(f.addr); // qw0 57:0, 63:58 clear
    expect(qw0 >> 58n).toBe(0n);
    expect((qw1 >> 31n) & 1n).toBe(f.first ? 1n : 0n);
    expect((qw1 >> 30n) & 1n).toBe(f.last ? 1n : 0n);
    expect((qw1 >> 16n) & 0x3fffn).toBe(BigInt(f.len));
    expect(qw1 >> 32n).toBe(BigInt(f.ahgUpdate));
    expect((qw1 >> 13n) & 7n).toBe(BigInt(f.ahgMode));
    expect((qw1 >> 8n) & 0x1fn).toBe(BigInt(f.ahgIdx));
    expect((qw1 >> 4n) & 0xfn).toBe(BigInt(f.ahgDws));
    expect((qw1 >> 2n) & 3n).toBe(BigInt(f.gen));
    expect((qw1 >> 1n) & 1n).toBe(f.intReq ? 1n : 0n);
    expect(qw1 & 1n).toBe(f.headToHost ? 1n : 0n);
  });

  test.prop([U64, U64], fcParams(1000, 100_000))(
    'decode of any two qwords re-encodes to them with the reserved bits (qw0 63:58) cleared',
    (qw0, qw1) => {
      const re = encodeFor('jkr', decodeFor('jkr', qw0, qw1));
      expect(re.qw0).toBe(qw0 & ~DESC_RESERVED.jkr.qw0);
      expect(re.qw1).toBe(qw1);
    },
  );

  test.prop([U64, U64], fcParams(1000, 100_000))('decoded fields stay within their widths', (qw0, qw1) => {
    const d = decodeFor('jkr', qw0, qw1);
    expect(d.addr < 2n ** 58n).toBe(true);
    expect(d.len).toBeLessThanOrEqual(0x3fff);
    expect(d.gen).toBeLessThanOrEqual(3);
    expect(d.ahgMode).toBeLessThanOrEqual(7);
    expect(d.ahgIdx).toBeLessThanOrEqual(31);
    expect(d.ahgDws).toBeLessThanOrEqual(15);
    expect(d.ahgUpdate).toBeLessThanOrEqual(0xffff_ffff);
  });

  test.prop([fieldsFor(53)], fcParams(1000, 100_000))('the word-level decoder agrees with the bigint one below 2^53', (f) => {
    const { qw0, qw1 } = encodeFor('jkr', f);
    const w = (q: bigint, hi: boolean) => Number((hi ? q >> 32n : q) & 0xffff_ffffn);
    const out = decodeWordsJkr(w(qw0, false), w(qw0, true), w(qw1, false), w(qw1, true), emptyDescriptor());
    expect({ ...out, addr: BigInt(out.addr) }).toEqual(f);
    expect(jkrDescFirst(w(qw1, false))).toBe(f.first);
    expect(jkrDescByteCount(w(qw1, false))).toBe(f.len);
  });

  test.prop([fieldsFor(48)], fcParams(1000, 100_000))('the WFR path of decodeFor/encodeFor is descriptor.ts', (f) => {
    const viaChip = encodeFor('wfr', f);
    expect(viaChip).toEqual(encode({ ...f, addr: Number(f.addr) }));
    expect(decodeFor('wfr', viaChip.qw0, viaChip.qw1)).toEqual({ ...decode(viaChip.qw0, viaChip.qw1), addr: f.addr });
  });

  it('decodes the 64-byte one-descriptor packet of each layout to the same fields', () => {
    // WFR: FIRST|LAST|len 64 in qw0 above a 48-bit address; JKR: the same three in qw1 bits 31, 30, 29:16.
    const wfr = decodeFor('wfr', 0xc040_0000_0010_0000n, 0x5n);
    const jkr = decodeFor('jkr', 0x10_0000n, 0xc040_0005n);
    expect(jkr).toEqual(wfr);
    expect(jkr).toMatchObject({ first: true, last: true, len: 64, addr: 0x10_0000n, gen: 1, headToHost: true });
  });

  it('reads a WFR descriptor wrongly as JKR: the chip matters', () => {
    const asJkr = decodeFor('jkr', 0xc040_0000_0010_0000n, 0x5n);
    expect(asJkr).toMatchObject({ first: false, last: false, len: 0, addr: 0x40_0000_0010_0000n });
  });

  it('keeps a full 58-bit address exactly, which a double cannot', () => {
    const addr = 2n ** 58n - 1n;
    const { qw0 } = encodeFor('jkr', { ...decodeFor('jkr', 0n, 0n), addr });
    expect(qw0).toBe(0x03ff_ffff_ffff_ffffn);
    expect(decodeFor('jkr', qw0, 0n).addr).toBe(addr);
  });

  it.each([
    ['jkr', 'addr 2^58', { addr: 2n ** 58n }],
    ['wfr', 'addr 2^48', { addr: 2n ** 48n }],
    ['jkr', 'len 0x4000', { len: 0x4000 }],
    ['jkr', 'gen 4', { gen: 4 }],
    ['jkr', 'ahgIdx 32', { ahgIdx: 32 }],
    ['jkr', 'addr -1', { addr: -1n }],
  ] as const)('refuses out-of-range fields on %s: %s', (chip, _label, bad) => {
    expect(() => encodeFor(chip, { ...decodeFor(chip, 0n, 0n), ...bad })).toThrow(RangeError);
  });
});
