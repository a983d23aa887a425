// One fetch step of the chip (descriptors in the chip's layout: WFR qw0, or JKR qw1 for FIRST and the length): from HEAD, descriptors are checked for their generation (SDMA_DESC1_GENERATION, sdma.h) and
// completed at the engine's rate until the tail, `maxBatch` descriptors, an INT_REQ descriptor, or
// the DESC_CNT progress threshold (the engine interrupt masks, sdma.c). The loop reads the ring's words and allocates nothing.
import {
  SDMA_AHG_APPLY_UPDATE2,
  SDMA_DESC1_GENERATION_MASK,
  SDMA_DESC1_GENERATION_SHIFT,
  SDMA_DESC1_HEAD_TO_HOST,
  SDMA_DESC1_INT_REQ,
} from '../progress/constants.js';
import { descAhgMode, descByteCount, descFirst, descGeneration, generationFromTail } from '../progress/descriptor.js';
import { jkrDescByteCount, jkrDescFirst } from '../progress/descriptor-chip.js';
import { doubleFields } from './double-fields.js';
import type { EmuConfig } from './host.js';
import { padQw1Lo } from './ring-layout.js';

/** The generation field of qw1: the only bits a pad (sdma_pad with its slot's generation) may have set. */
const PAD_GENERATION = SDMA_DESC1_GENERATION_MASK << SDMA_DESC1_GENERATION_SHIFT;

/** Local interrupt bits; the engine turns them into its interrupt masks (sdma.c). */
export const INT_SDMA = 1;
export const INT_PROGRESS = 2;
export const INT_IDLE = 4;

/** The outcome of a step, applied when the chip finishes it. */
export class FetchStep {
  /** HEAD after the step (a ring slot). */
  end = 0;
  count = 0;
  /** The generation counter after the step. */
  gen = 0;
  progress = 0;
  edit = 0;
  /** Slot written to head_dma (HEAD_TO_HOST, the head write-back, sdma.c), −1 when none. */
  headDma = -1;
  bits = 0;
  endNs = 0;
  /** Bytes the step's descriptors move, and the packets (FIRST descriptors) among them: what leaves the port. */
  bytes = 0;
  packets = 0;

  constructor() {
    doubleFields(this, 'endNs');
  }
}

/** The chip registers a step starts from. */
export interface FetchStart {
  hwHead: number;
  hwTail: number;
  genCount: number;
  genCheck: boolean;
  progressCount: number;
  editRemaining: number;
  descCnt: number;
  slow: number;
}

/**
 * Compute one step into `out`; returns the descriptors completed. 0 means the descriptor at HEAD
 * has the wrong generation (a later mismatch ends the step early and is found by the next one).
 */
export function computeStep(d: Uint32Array, c: FetchStart, cfg: EmuConfig, nowNs: number, out: FetchStep): number {
  const mask = cfg.descqCnt - 1;
  const shift = 31 - Math.clz32(cfg.descqCnt);
  const nsPerDesc = (1e9 / cfg.chip.descPerSec) * c.slow;
  const nsPerByte = (1e9 / cfg.chip.bytesPerSec) * c.slow;
  const limit = cfg.chip.maxBatch;
  let t = 0;
  let slot = c.hwHead;
  let gen = c.genCount;
  let prog = c.progressCount;
  let edit = c.editRemaining;
  let headDma = -1;
  let bits = 0;
  let k = 0;
  let bytes = 0;
  let packets = 0;
  const jkr = cfg.jkr;
  const tail = c.hwTail;
  const genCheck = c.genCheck;
  // Only the padding builds (the Cornelis hfi1 and hfi2 with pad_sdma_desc) write pads: elsewhere the run is skipped.
  const padded = cfg.flavour.driver !== 'upstream' && cfg.flavour.settings.padSdmaDesc > 0;
  while (slot !== tail && k < limit) {
    if (edit === 0 && padded) {
      // A run of pads (sdma_pad: every word zero but the slot's generation; no data, no flags), taken in a tight
      // loop: the same checks and counts as below, stopping before the one that meets the DESC_CNT threshold.
      const stop = Math.min(limit, c.descCnt > 0 ? k + c.descCnt - 1 - prog : limit);
      const k0 = k;
      // A pad's qw1 is its generation alone: with the check on, one comparison against the word a pad at this
      // slot must hold (it changes only where the generation counter crosses a ring's length).
      let padQ = genCheck ? padQw1Lo(gen, shift) : -1;
      while (slot !== tail && k < stop) {
        const w = slot << 2;
        const q = d[w + 2] as number;
        if (((d[w] as number) | (d[w + 1] as number) | (d[w + 3] as number)) !== 0) break;
        if (padQ >= 0 ? q !== padQ : (q & ~PAD_GENERATION) !== 0) break;
        gen = (gen + 1) >>> 0;
        k++;
        slot = (slot + 1) & mask;
        if (genCheck && (gen & mask) === 0) padQ = padQw1Lo(gen, shift);
      }
      if (c.descCnt > 0) prog += k - k0;
      if (slot === tail || k >= limit) break;
    }
    const w = slot << 2;
    const hi = d[w + 1] as number;
    const q1 = d[w + 2] as number;
    if (edit > 0) edit--;
    else {
      if (genCheck && descGeneration(q1) !== generationFromTail(gen, shift)) break;
      if (jkr ? jkrDescFirst(q1) : descFirst(hi)) {
        packets++;
        const mode = descAhgMode(q1);
        if (mode >= SDMA_AHG_APPLY_UPDATE2) edit = mode - 2; // AHG edit descriptors carry no generation (submit_tx, sdma.c)
      }
    }
    // A zero-length descriptor is a pad (sdma_pad, cornelis/hfi2): fetched with the packet's descriptors, it
    // moves no data; the emulator charges it nothing, so padding costs ring slots, not link time (a choice).
    const len = jkr ? jkrDescByteCount(q1) : descByteCount(hi);
    if (len !== 0) t += Math.max(len * nsPerByte, nsPerDesc);
    bytes += len;
    gen = (gen + 1) >>> 0;
    k++;
    slot = (slot + 1) & mask;
    if (q1 & SDMA_DESC1_HEAD_TO_HOST) headDma = slot;
    if (q1 & SDMA_DESC1_INT_REQ) {
      bits |= INT_SDMA; // INT_REQ
      break;
    }
    if (c.descCnt > 0 && ++prog >= c.descCnt) {
      prog = 0;
      bits |= INT_PROGRESS;
      break;
    }
  }
  out.end = slot;
  out.count = k;
  out.gen = gen;
  out.progress = prog;
  out.edit = edit;
  out.headDma = headDma;
  out.bits = bits;
  out.endNs = nowNs + Math.round(t);
  out.bytes = bytes;
  out.packets = packets;
  return k;
}
