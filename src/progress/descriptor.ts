// The 16-byte hardware descriptor (the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h): qw0 at byte 0, qw1 at byte 8, both little-endian.
// Decoding works on the four 32-bit halves so that the per-descriptor path allocates nothing;
// the bigint forms are for the edges (CLI arguments, JSON, tests).

import {
  SDMA_DESC0_BYTE_COUNT_MASK,
  SDMA_DESC1_GENERATION_MASK,
  SDMA_DESC1_GENERATION_SHIFT,
  SDMA_DESC1_HEAD_TO_HOST,
  SDMA_DESC1_HEADER_DWS_MASK,
  SDMA_DESC1_HEADER_INDEX_MASK,
  SDMA_DESC1_HEADER_MODE_MASK,
  SDMA_DESC1_INT_REQ,
} from './constants.js';

const TWO_32 = 0x1_0000_0000;
const ADDR_LIMIT = 2 ** 48;

/** Every field of a descriptor (the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h). */
export interface DescriptorFields {
  first: boolean; // qw0 63 FIRST_DESC
  last: boolean; // qw0 62 LAST_DESC
  len: number; // qw0 61:48 BYTE_COUNT (0–16383)
  addr: number; // qw0 47:0 PHY_ADDR (48 bits, exact in a double)
  ahgUpdate: number; // qw1 63:32 HEADER_UPDATE1 (u32)
  ahgMode: number; // qw1 15:13 HEADER_MODE
  ahgIdx: number; // qw1 12:8 HEADER_INDEX
  ahgDws: number; // qw1 7:4 HEADER_DWS
  gen: number; // qw1 3:2 GENERATION
  intReq: boolean; // qw1 1 INT_REQ
  headToHost: boolean; // qw1 0 HEAD_TO_HOST
}

/** A blank record to decode into. */
export function emptyDescriptor(): DescriptorFields {
  return {
    first: false,
    last: false,
    len: 0,
    addr: 0,
    ahgUpdate: 0,
    ahgMode: 0,
    ahgIdx: 0,
    ahgDws: 0,
    gen: 0,
    intReq: false,
    headToHost: false,
  };
}

// Single fields, for hot paths that look at one or two of them (the chip's fetch loop).

/** FIRST_DESC from the high half of qw0. */
export function descFirst(qw0Hi: number): boolean {
  return (qw0Hi & 0x8000_0000) !== 0;
}

/** BYTE_COUNT from the high half of qw0. */
export function descByteCount(qw0Hi: number): number {
  return (qw0Hi >>> 16) & SDMA_DESC0_BYTE_COUNT_MASK;
}

/** HEADER_MODE from the low half of qw1. */
export function descAhgMode(qw1Lo: number): number {
  return (qw1Lo >>> 13) & SDMA_DESC1_HEADER_MODE_MASK;
}

/** GENERATION from the low half of qw1. */
export function descGeneration(qw1Lo: number): number {
  return (qw1Lo >>> SDMA_DESC1_GENERATION_SHIFT) & SDMA_DESC1_GENERATION_MASK;
}

/** Decode a descriptor given as its four 32-bit halves into `out` (no allocation). */
export function decodeWords(qw0Lo: number, qw0Hi: number, qw1Lo: number, qw1Hi: number, out: DescriptorFields): DescriptorFields {
  out.first = descFirst(qw0Hi);
  out.last = (qw0Hi & 0x4000_0000) !== 0;
  out.len = descByteCount(qw0Hi);
  out.addr = (qw0Hi & 0xffff) * TWO_32 + (qw0Lo >>> 0);
  out.ahgUpdate = qw1Hi >>> 0;
  out.ahgMode = descAhgMode(qw1Lo);
  out.ahgIdx = (qw1Lo >>> 8) & SDMA_DESC1_HEADER_INDEX_MASK;
  out.ahgDws = (qw1Lo >>> 4) & SDMA_DESC1_HEADER_DWS_MASK;
  out.gen = descGeneration(qw1Lo);
  out.intReq = (qw1Lo & SDMA_DESC1_INT_REQ) !== 0;
  out.headToHost = (qw1Lo & SDMA_DESC1_HEAD_TO_HOST) !== 0;
  return out;
}

/** Decode a descriptor given as two 64-bit qwords. */
export function decode(qw0: bigint, qw1: bigint, out: DescriptorFields = emptyDescriptor()): DescriptorFields {
  return decodeWords(
    Number(qw0 & 0xffff_ffffn),
    Number((qw0 >> 32n) & 0xffff_ffffn),
    Number(qw1 & 0xffff_ffffn),
    Number((qw1 >> 32n) & 0xffff_ffffn),
    out,
  );
}

/** Decode descriptor `index` of a ring held as 32-bit words (4 per descriptor, little-endian). */
export function decodeAt(words: Uint32Array, index: number, out: DescriptorFields): DescriptorFields {
  const w = index * 4;
  return decodeWords(words[w] ?? 0, words[w + 1] ?? 0, words[w + 2] ?? 0, words[w + 3] ?? 0, out);
}

function checkField(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`descriptor field ${name} must be an integer from 0 to ${max}, got ${value}`);
  }
}

/** The four 32-bit halves of a descriptor [qw0Lo, qw0Hi, qw1Lo, qw1Hi]; fields are range-checked. */
export function encodeWords(f: DescriptorFields): [number, number, number, number] {
  checkField('len', f.len, SDMA_DESC0_BYTE_COUNT_MASK);
  checkField('addr', f.addr, ADDR_LIMIT - 1);
  checkField('ahgUpdate', f.ahgUpdate, 0xffff_ffff);
  checkField('ahgMode', f.ahgMode, SDMA_DESC1_HEADER_MODE_MASK);
  checkField('ahgIdx', f.ahgIdx, SDMA_DESC1_HEADER_INDEX_MASK);
  checkField('ahgDws', f.ahgDws, SDMA_DESC1_HEADER_DWS_MASK);
  checkField('gen', f.gen, SDMA_DESC1_GENERATION_MASK);
  const addrHi = Math.floor(f.addr / TWO_32);
  const qw0Lo = f.addr % TWO_32;
  const qw0Hi = ((f.first ? 0x8000_0000 : 0) | (f.last ? 0x4000_0000 : 0) | (f.len << 16) | addrHi) >>> 0;
  const qw1Lo =
    ((f.ahgMode << 13) |
      (f.ahgIdx << 8) |
      (f.ahgDws << 4) |
      (f.gen << SDMA_DESC1_GENERATION_SHIFT) |
      (f.intReq ? SDMA_DESC1_INT_REQ : 0) |
      (f.headToHost ? SDMA_DESC1_HEAD_TO_HOST : 0)) >>>
    0;
  return [qw0Lo, qw0Hi, qw1Lo, f.ahgUpdate >>> 0];
}

/** Encode a descriptor as two 64-bit qwords. */
export function encode(f: DescriptorFields): { qw0: bigint; qw1: bigint } {
  const [a, b, c, d] = encodeWords(f);
  return { qw0: (BigInt(b) << 32n) | BigInt(a), qw1: (BigInt(d) << 32n) | BigInt(c) };
}

/** Generation of a descriptor written at free-running tail `descqTail` (SDMA_DESC1_GENERATION, sdma.h; submit_tx, sdma.c). */
export function generationFromTail(descqTail: number, shift: number): number {
  return (descqTail >>> shift) & SDMA_DESC1_GENERATION_MASK;
}

/** The low qw1 half with its generation field replaced (submit_tx, sdma.c: the ring copy gets the real one). */
export function withGeneration(qw1Lo: number, gen: number): number {
  return ((qw1Lo & ~(SDMA_DESC1_GENERATION_MASK << SDMA_DESC1_GENERATION_SHIFT)) | (gen << SDMA_DESC1_GENERATION_SHIFT)) >>> 0;
}

/** The debugfs flag string (sdma_seqfile_dump_sde, sdma.c): four characters in the order I H F L, `-` where clear. */
export function flagString(f: Pick<DescriptorFields, 'intReq' | 'headToHost' | 'first' | 'last'>): string {
  return (f.intReq ? 'I' : '-') + (f.headToHost ? 'H' : '-') + (f.first ? 'F' : '-') + (f.last ? 'L' : '-');
}

/** Parse a flag string as sdma_seqfile_dump_sde (sdma.c) prints it back into its four bits; null when it is not of that form. */
export function parseFlagString(s: string): Pick<DescriptorFields, 'intReq' | 'headToHost' | 'first' | 'last'> | null {
  if (s.length !== 4) return null;
  const i = s[0];
  const h = s[1];
  const f = s[2];
  const l = s[3];
  if ((i !== 'I' && i !== '-') || (h !== 'H' && h !== '-') || (f !== 'F' && f !== '-') || (l !== 'L' && l !== '-')) {
    return null;
  }
  return { intReq: i === 'I', headToHost: h === 'H', first: f === 'F', last: l === 'L' };
}

/** `0x` and 16 lowercase hex digits, as debugfs prints addresses and qwords. */
export function hex16(value: bigint | number): string {
  return `0x${value.toString(16).padStart(16, '0')}`;
}

/** `0x` and lowercase hex without leading zeros, as `0x%llx` prints. */
export function hex(value: bigint | number): string {
  return `0x${value.toString(16)}`;
}
