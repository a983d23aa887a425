// What submit_tx (sdma.c) writes into the ring on a JKR chip or with pad descriptors (the cornelis and hfi2
// builds). A request's words are built in the WFR layout by src/progress/txreq.ts; on JKR each descriptor is
// moved to the JKR layout (FIRST/LAST/BYTE_COUNT in qw1, the address in qw0 bits 57:0; descriptor-chip.ts), and
// after the request come its num_pad pad descriptors (sdma_desc_pad_count, sdma.h).
//
// A choice where the sources leave it open: a pad descriptor is a one-descriptor no-op packet (FIRST and LAST,
// length 0) at the device's pad buffer, carrying its slot's generation; the request's completion bits
// (HEAD_TO_HOST / INT_REQ) move from its last descriptor to its last pad, so the head the chip reports after the
// request covers its pads and the txreq retires once, when all of its slots are consumed.
import { SDMA_DESC1_HEAD_TO_HOST, SDMA_DESC1_INT_REQ } from '../progress/constants.js';
import { generationFromTail, withGeneration } from '../progress/descriptor.js';
import { JKR_DESC1_BYTE_COUNT_SHIFT } from '../progress/descriptor-chip.js';
import type { Engine } from './engine.js';
import type { EmuTx } from './tx.js';

/** Bus address of the device's shared pad buffer (the txreq builder's default). */
export const PAD_BUFFER_ADDR = 0x1000;

const FIRST_LAST = 0xc000_0000;
const DONE_BITS = SDMA_DESC1_HEAD_TO_HOST | SDMA_DESC1_INT_REQ;

/** One WFR-layout descriptor (four u32 words) in the JKR layout, written at word `w` of `d`. */
export function putJkr(d: Uint32Array, w: number, lo0: number, hi0: number, lo1: number, hi1: number): void {
  const flags = hi0 & FIRST_LAST; // FIRST (bit 63) and LAST (bit 62) of qw0 become qw1 bits 31 and 30
  const len = (hi0 >>> 16) & 0x3fff;
  d[w] = lo0;
  d[w + 1] = hi0 & 0xffff; // address bits 47:32; JKR bits 57:48 stay 0
  d[w + 2] = ((lo1 & 0xffff) | flags | (len << JKR_DESC1_BYTE_COUNT_SHIFT)) >>> 0;
  d[w + 3] = hi1;
}

/**
 * Copy the request's descriptors (generation set, except on AHG edit descriptors) and its pads into the ring from
 * descq_tail, in the engine's chip layout; descq_tail moves past them. The caller records the txreq.
 */
export function writeRingDescriptors(e: Engine, tx: EmuTx): void {
  const d = e.descq;
  const src = tx.words;
  const jkr = e.host.cfg.jkr;
  const mode = (((src[2] as number) >>> 13) & 7) >>> 0;
  const edits = mode === 3 ? 1 : mode === 4 ? 2 : 0;
  const last = tx.numDesc - 1;
  let done = 0;
  for (let k = 0; k < tx.numDesc; k++) {
    const w = (e.descqTail & e.mask) << 2;
    const s = k << 2;
    const edit = k >= 1 && k <= edits;
    let q1 = src[s + 2] as number;
    if (!edit) q1 = withGeneration(q1, generationFromTail(e.descqTail, e.shift));
    if (k === last && tx.numPad > 0) {
      done = q1 & DONE_BITS;
      q1 = (q1 & ~DONE_BITS) >>> 0;
    }
    if (jkr && !edit) putJkr(d, w, src[s] as number, src[s + 1] as number, q1, src[s + 3] as number);
    else {
      d[w] = src[s] as number;
      d[w + 1] = src[s + 1] as number;
      d[w + 2] = q1;
      d[w + 3] = src[s + 3] as number;
    }
    e.descqTail = (e.descqTail + 1) >>> 0;
  }
  for (let k = 0; k < tx.numPad; k++) {
    const w = (e.descqTail & e.mask) << 2;
    const q1 = withGeneration(k === tx.numPad - 1 ? done : 0, generationFromTail(e.descqTail, e.shift));
    if (jkr) putJkr(d, w, PAD_BUFFER_ADDR, FIRST_LAST, q1, 0);
    else {
      d[w] = PAD_BUFFER_ADDR;
      d[w + 1] = FIRST_LAST;
      d[w + 2] = q1;
      d[w + 3] = 0;
    }
    e.descqTail = (e.descqTail + 1) >>> 0;
  }
}
