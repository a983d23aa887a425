import { describe, expect, it } from 'vitest';
import {
  type DescriptorFields,
  decode,
  encode,
  flagString,
  generationFromTail,
  parseFlagString,
  withGeneration,
} from '../../src/progress/descriptor.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';

const fields: fc.Arbitrary<DescriptorFields> = fc.record({
  first: fc.boolean(),
  last: fc.boolean(),
  len: fc.integer({ min: 0, max: 0x3fff }),
  addr: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
  ahgUpdate: fc.integer({ min: 0, max: 0xffff_ffff }),
  ahgMode: fc.integer({ min: 0, max: 7 }),
  ahgIdx: fc.integer({ min: 0, max: 31 }),
  ahgDws: fc.integer({ min: 0, max: 15 }),
  gen: fc.integer({ min: 0, max: 3 }),
  intReq: fc.boolean(),
  headToHost: fc.boolean(),
});

describe('descriptor encode/decode (the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h)', () => {
  test.prop([fields], fcParams(2000, 200_000))('decode(encode(x)) = x for every field', (f) => {
    const { qw0, qw1 } = encode(f);
    expect(decode(qw0, qw1)).toEqual(f);
  });

  test.prop([fields], fcParams(1000, 100_000))('fields land at their bit positions', (f) => {
    const { qw0, qw1 } = encode(f);
    expect((qw0 >> 63n) & 1n).toBe(f.first ? 1n : 0n);
    expect((qw0 >> 62n) & 1n).toBe(f.last ? 1n : 0n);
    expect((qw0 >> 48n) & 0x3fffn).toBe(BigInt(f.len));
    expect(qw0 & 0xffff_ffff_ffffn).toBe(BigInt(f.addr));
    expect(qw1 >> 32n).toBe(BigInt(f.ahgUpdate));
    expect((qw1 >> 13n) & 7n).toBe(BigInt(f.ahgMode));
    expect((qw1 >> 8n) & 0x1fn).toBe(BigInt(f.ahgIdx));
    expect((qw1 >> 4n) & 0xfn).toBe(BigInt(f.ahgDws));
    expect((qw1 >> 2n) & 3n).toBe(BigInt(f.gen));
    expect((qw1 >> 1n) & 1n).toBe(f.intReq ? 1n : 0n);
    expect(qw1 & 1n).toBe(f.headToHost ? 1n : 0n);
    // Bits 31:16 of qw1 are unused by the driver and stay clear.
    expect((qw1 >> 16n) & 0xffffn).toBe(0n);
  });

  test.prop([fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })], fcParams(1000, 100_000))(
    'decode of any two qwords re-encodes to the same qwords (bits 31:16 of qw1 aside)',
    (qw0, qw1) => {
      const re = encode(decode(qw0, qw1));
      expect(re.qw0).toBe(qw0);
      expect(re.qw1).toBe(qw1 & ~(0xffffn << 16n));
    },
  );

  it('refuses out-of-range fields', () => {
    const f: DescriptorFields = decode(0n, 0n);
    expect(() => encode({ ...f, len: 0x4000 })).toThrow(/len/);
    expect(() => encode({ ...f, addr: 2 ** 48 })).toThrow(/addr/);
    expect(() => encode({ ...f, gen: 4 })).toThrow(/gen/);
  });
});

describe('flags and generation (sdma_seqfile_dump_sde, sdma.c, SDMA_DESC1_GENERATION, sdma.h, the head write-back, sdma.c)', () => {
  it('renders the typical flag strings in the order I H F L', () => {
    const d = (first: boolean, last: boolean, intReq: boolean, headToHost: boolean) =>
      flagString({ first, last, intReq, headToHost });
    expect(d(true, true, false, true)).toBe('-HFL'); // single-descriptor packet
    expect(d(true, false, false, false)).toBe('--F-'); // first
    expect(d(false, false, false, false)).toBe('----'); // middle
    expect(d(false, true, false, true)).toBe('-H-L'); // last
    expect(d(false, true, true, true)).toBe('IH-L'); // urgent last
  });

  test.prop([fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean()])(
    'parseFlagString inverts flagString',
    (first, last, intReq, headToHost) => {
      const f = { first, last, intReq, headToHost };
      expect(parseFlagString(flagString(f))).toEqual(f);
    },
  );

  it('rejects malformed flag strings', () => {
    for (const s of ['', 'IHF', 'HIFL', 'IHFLX', 'ihfl', '-H-l']) expect(parseFlagString(s)).toBeNull();
  });

  it('takes the generation from the tail before the increment and wraps modulo 4', () => {
    expect(generationFromTail(0, 11)).toBe(0);
    expect(generationFromTail(2047, 11)).toBe(0);
    expect(generationFromTail(2048, 11)).toBe(1);
    expect(generationFromTail(4 * 2048, 11)).toBe(0);
    expect(generationFromTail(0xffff_ffff, 11)).toBe(3);
    expect(generationFromTail(64, 6)).toBe(1);
  });

  it('replaces only the generation field of qw1', () => {
    expect(withGeneration(0xffff_ffff, 0)).toBe(0xffff_fff3);
    expect(withGeneration(0x0000_0001, 2)).toBe(0x0000_0009);
  });
});
