// The descriptor codec per chip. WFR is descriptor.ts (FIRST, LAST and BYTE_COUNT in qw0, a 48-bit address).
// JKR (the JKR_SDMA_DESC0_/JKR_SDMA_DESC1_ fields, sdma_defs.h) moves FIRST (qw1 bit 31), LAST (qw1 bit 30) and
// BYTE_COUNT (qw1 bits 29:16) to qw1 and gives the address 58 bits of qw0 (57:0); the rest of qw1 (AHG fields,
// generation, INT_REQ, HEAD_TO_HOST, HEADER_UPDATE1) is common. qw0 bits 63:58 are reserved on JKR, qw1 bits 31:16
// on WFR: decoding ignores reserved bits and encoding leaves them 0.

import type { ChipName } from './chip.js';
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
import { type DescriptorFields, decode as decodeWfr, encode as encodeWfr } from './descriptor.js';

const TWO_32 = 0x1_0000_0000;

/** JKR_SDMA_DESC0_PHY_ADDR: bits 57:0 of qw0 (sdma_defs.h). */
export const JKR_DESC0_PHY_ADDR_BITS = 58;
/** JKR_SDMA_DESC1_FIRST_DESC / LAST_DESC / BYTE_COUNT positions in qw1 (sdma_defs.h). */
export const JKR_DESC1_FIRST_BIT = 31;
export const JKR_DESC1_LAST_BIT = 30;
export const JKR_DESC1_BYTE_COUNT_SHIFT = 16;

/** Address bits of a descriptor on each chip. */
export const DESC_ADDR_BITS: Readonly<Record<ChipName, number>> = { wfr: 48, jkr: JKR_DESC0_PHY_ADDR_BITS };

/** The bits a chip does not define, per qword (ignored by decode, never set by encode). */
export const DESC_RESERVED: Readonly<Record<ChipName, { qw0: bigint; qw1: bigint }>> = {
  wfr: { qw0: 0n, qw1: 0xffff_0000n },
  jkr: { qw0: 0xfc00_0000_0000_0000n, qw1: 0n },
};

/** A decoded descriptor of either chip; the address is a bigint because a JKR address does not fit a double. */
export interface ChipDescriptor extends Omit<DescriptorFields, 'addr'> {
  addr: bigint;
}

// Single JKR fields from the low half of qw1, for hot paths.

/** JKR FIRST_DESC from the low half of qw1. */
export function jkrDescFirst(qw1Lo: number): boolean {
  return (qw1Lo & 0x8000_0000) !== 0;
}

/** JKR BYTE_COUNT from the low half of qw1. */
export function jkrDescByteCount(qw1Lo: number): number {
  return (qw1Lo >>> JKR_DESC1_BYTE_COUNT_SHIFT) & SDMA_DESC0_BYTE_COUNT_MASK;
}

/**
 * Decode a JKR descriptor from its four 32-bit halves into `out` (no allocation). `out.addr` is a double: exact
 * below 2^53 (every address a simulated ring uses); decodeFor gives the exact 58-bit value.
 */
export function decodeWordsJkr(
  qw0Lo: number,
  qw0Hi: number,
  qw1Lo: number,
  qw1Hi: number,
  out: DescriptorFields,
): DescriptorFields {
  out.first = jkrDescFirst(qw1Lo);
  out.last = (qw1Lo & 0x4000_0000) !== 0;
  out.len = jkrDescByteCount(qw1Lo);
  out.addr = (qw0Hi & 0x03ff_ffff) * TWO_32 + (qw0Lo >>> 0);
  out.ahgUpdate = qw1Hi >>> 0;
  out.ahgMode = (qw1Lo >>> 13) & SDMA_DESC1_HEADER_MODE_MASK;
  out.ahgIdx = (qw1Lo >>> 8) & SDMA_DESC1_HEADER_INDEX_MASK;
  out.ahgDws = (qw1Lo >>> 4) & SDMA_DESC1_HEADER_DWS_MASK;
  out.gen = (qw1Lo >>> SDMA_DESC1_GENERATION_SHIFT) & SDMA_DESC1_GENERATION_MASK;
  out.intReq = (qw1Lo & SDMA_DESC1_INT_REQ) !== 0;
  out.headToHost = (qw1Lo & SDMA_DESC1_HEAD_TO_HOST) !== 0;
  return out;
}

/** Decode a descriptor of `chip` given as two 64-bit qwords (the WFR path is descriptor.ts's decode). */
export function decodeFor(chip: ChipName, qw0: bigint, qw1: bigint): ChipDescriptor {
  if (chip === 'wfr') {
    const d = decodeWfr(qw0, qw1);
    return { ...d, addr: BigInt(d.addr) };
  }
  const lo = Number(qw1 & 0xffff_ffffn);
  const fields = decodeWordsJkr(0, 0, lo, Number((qw1 >> 32n) & 0xffff_ffffn), {} as DescriptorFields);
  return { ...fields, addr: qw0 & ((1n << BigInt(JKR_DESC0_PHY_ADDR_BITS)) - 1n) };
}

function checkField(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`descriptor field ${name} must be an integer from 0 to ${max}, got ${value}`);
  }
}

/** Encode a descriptor of `chip` as two qwords; fields are range-checked (RangeError) as descriptor.ts does. */
export function encodeFor(chip: ChipName, f: ChipDescriptor): { qw0: bigint; qw1: bigint } {
  const addrLimit = 1n << BigInt(DESC_ADDR_BITS[chip]);
  if (f.addr < 0n || f.addr >= addrLimit) {
    throw new RangeError(`descriptor field addr must be from 0 to ${addrLimit - 1n} on ${chip}, got ${f.addr}`);
  }
  if (chip === 'wfr') return encodeWfr({ ...f, addr: Number(f.addr) });
  checkField('len', f.len, SDMA_DESC0_BYTE_COUNT_MASK);
  checkField('ahgUpdate', f.ahgUpdate, 0xffff_ffff);
  checkField('ahgMode', f.ahgMode, SDMA_DESC1_HEADER_MODE_MASK);
  checkField('ahgIdx', f.ahgIdx, SDMA_DESC1_HEADER_INDEX_MASK);
  checkField('ahgDws', f.ahgDws, SDMA_DESC1_HEADER_DWS_MASK);
  checkField('gen', f.gen, SDMA_DESC1_GENERATION_MASK);
  const qw1Lo =
    ((f.first ? 0x8000_0000 : 0) |
      (f.last ? 0x4000_0000 : 0) |
      (f.len << JKR_DESC1_BYTE_COUNT_SHIFT) |
      (f.ahgMode << 13) |
      (f.ahgIdx << 8) |
      (f.ahgDws << 4) |
      (f.gen << SDMA_DESC1_GENERATION_SHIFT) |
      (f.intReq ? SDMA_DESC1_INT_REQ : 0) |
      (f.headToHost ? SDMA_DESC1_HEAD_TO_HOST : 0)) >>>
    0;
  return { qw0: f.addr, qw1: (BigInt(f.ahgUpdate >>> 0) << 32n) | BigInt(qw1Lo) };
}
