// What _submit_tx (sdma.c of the Cornelis hfi1 and hfi2) writes into the ring on a JKR chip or with pad
// descriptors. A request's words are built in the WFR layout by src/progress/txreq.ts; on JKR each descriptor is
// moved to the JKR layout (FIRST/LAST/BYTE_COUNT in qw1, the address in qw0 bits 57:0; descriptor-chip.ts).
//
// Pads as _submit_tx writes them: each is the never-assigned static `sdma_pad` with its slot's generation added
// (qw0 = 0; qw1 = the generation only: no FIRST, no LAST, address 0, length 0, so no AHG line in `sdes`), and
// they go in just before the packet's last descriptor, which keeps its LAST and HEAD_TO_HOST/INT_REQ bits. A
// one-descriptor packet gets no pad at all (the loop that writes them starts at the second descriptor), though
// desc_avail is charged for them. The txreq still retires after its last descriptor.
import { SDMA_AHG_APPLY_UPDATE1 } from '../progress/constants.js';
import { generationFromTail, withGeneration } from '../progress/descriptor.js';
import { JKR_DESC1_BYTE_COUNT_SHIFT } from '../progress/descriptor-chip.js';
import type { Engine } from './engine.js';
import type { EmuTx } from './tx.js';

const FIRST_LAST = 0xc000_0000;

/**
 * The low qw1 word of the pad at ring position `counter` (descq_tail or the chip's generation counter): the
 * generation alone, as _submit_tx stamps the static sdma_pad; every other word of a pad is 0, in either chip layout.
 */
export function padQw1Lo(counter: number, shift: number): number {
  return withGeneration(0, generationFromTail(counter, shift));
}

/** One WFR-layout descriptor (four u32 words) in the JKR layout, written at word `w` of `d`. */
export function putJkr(d: Uint32Array, w: number, lo0: number, hi0: number, lo1: number, hi1: number): void {
  const flags = hi0 & FIRST_LAST; // FIRST (bit 63) and LAST (bit 62) of qw0 become qw1 bits 31 and 30
  const len = (hi0 >>> 16) & 0x3fff;
  d[w] = lo0;
  d[w + 1] = hi0 & 0xffff; // address bits 47:32; JKR bits 57:48 stay 0
  d[w + 2] = ((lo1 & 0xffff) | flags | (len << JKR_DESC1_BYTE_COUNT_SHIFT)) >>> 0;
  d[w + 3] = hi1;
}

/** AHG edit descriptors after the first (ahg_mode > SDMA_AHG_APPLY_UPDATE1: mode >> 1), which carry no generation. */
export function ahgEdits(firstQw1Lo: number): number {
  const mode = (firstQw1Lo >>> 13) & 7;
  return mode > SDMA_AHG_APPLY_UPDATE1 ? mode >> 1 : 0;
}

/** A request's words moved to the JKR layout once (its AHG edit descriptors, which carry update words, as they are). */
export function jkrLayout(words: Uint32Array, numDesc: number): Uint32Array {
  const out = new Uint32Array(numDesc * 4);
  const edits = ahgEdits(words[2] as number);
  for (let k = 0; k < numDesc; k++) {
    const w = k << 2;
    if (k >= 1 && k <= edits) out.set(words.subarray(w, w + 4), w);
    else putJkr(out, w, words[w] as number, words[w + 1] as number, words[w + 2] as number, words[w + 3] as number);
  }
  return out;
}

/**
 * _submit_tx's copy (submit_tx, sdma.c): the request's descriptors written into the ring from the free-running
 * position `tail`, each with the generation of its slot (AHG edit descriptors as they are), in the engine's chip
 * layout; returns the position after them. The submission path writes at descq_tail; the fast model writes the
 * requests in flight again after it skips a stretch (fast-forward.ts), so a ring's words are always the ones its
 * txreq records say.
 */
export function writeTxAt(e: Engine, tx: EmuTx, pad: number, tail: number): number {
  if (pad !== 0 || (e.host.cfg.jkr && tx.chipWords === null)) return writeRingDescriptors(e, tx, pad, tail);
  const d = e.descq;
  const src = tx.chipWords ?? tx.words;
  const edits = ahgEdits(src[2] as number);
  const mask = e.mask;
  const shift = e.shift;
  for (let k = 0; k < tx.numDesc; k++) {
    const w = (tail & mask) << 2;
    const s = k << 2;
    d[w] = src[s] as number;
    d[w + 1] = src[s + 1] as number;
    const q1 = src[s + 2] as number;
    d[w + 2] = k >= 1 && k <= edits ? q1 : withGeneration(q1, generationFromTail(tail, shift));
    d[w + 3] = src[s + 3] as number;
    tail = (tail + 1) >>> 0;
  }
  return tail;
}

/**
 * The copy of the Cornelis hfi1 and hfi2 (_submit_tx, sdma.c of those builds): the request's descriptors from `tail`
 * in the engine's chip layout (`tx.chipWords` when the sender made them once, else moved here), with `pad` pads
 * before the last one (none for a one-descriptor request); returns the position after what was written. The caller
 * records the txreq and charges desc_avail num_desc + pad.
 */
function writeRingDescriptors(e: Engine, tx: EmuTx, pad: number, tail: number): number {
  const d = e.descq;
  const mask = e.mask;
  const shift = e.shift;
  const convert = e.host.cfg.jkr && tx.chipWords === null;
  const src = tx.chipWords ?? tx.words;
  const n = tx.numDesc;
  const edits = ahgEdits(src[2] as number);
  for (let k = 0; k < n; k++) {
    if (k === n - 1 && k > 0) {
      // The pads: the all-zero sdma_pad with each slot's generation, the same words in either chip layout.
      let q = padQw1Lo(tail, shift); // changes only where descq_tail crosses a ring's length
      for (let j = 0; j < pad; j++) {
        const w = (tail & mask) << 2;
        d[w] = 0;
        d[w + 1] = 0;
        d[w + 2] = q;
        d[w + 3] = 0;
        tail = (tail + 1) >>> 0;
        if ((tail & mask) === 0) q = padQw1Lo(tail, shift);
      }
    }
    const w = (tail & mask) << 2;
    const s = k << 2;
    const edit = k >= 1 && k <= edits;
    const q1 = edit ? (src[s + 2] as number) : withGeneration(src[s + 2] as number, generationFromTail(tail, shift));
    if (convert && !edit) putJkr(d, w, src[s] as number, src[s + 1] as number, q1, src[s + 3] as number);
    else {
      d[w] = src[s] as number;
      d[w + 1] = src[s + 1] as number;
      d[w + 2] = q1;
      d[w + 3] = src[s + 3] as number;
    }
    tail = (tail + 1) >>> 0;
  }
  return tail;
}
