// The head-lock progress sequence and sdma_progress (sdma_progress, sdma.h; the head_lock seqlock, sdma.h).

import { freeCount } from './ring.js';

/**
 * raw_seqcount_begin (the head_lock seqlock, sdma.h): the sequence with bit 0 cleared, so a sample taken while a writer
 * is inside its section (odd value v) reads v − 1. Sequences are unsigned 32-bit.
 */
export function sampleSeq(seq: number): number {
  return (seq & ~1) >>> 0;
}

/**
 * read_seqretry (the head_lock seqlock, sdma.h): true iff the current sequence differs from the sample, which is the case
 * once any write section has started or completed since the sample was taken.
 */
export function seqChanged(currentSeq: number, sampledSeq: number): boolean {
  return currentSeq >>> 0 !== sampledSeq >>> 0;
}

/** The parts of an engine that sdma_progress reads. */
export interface ProgressState {
  /** The current head-lock sequence (or the backend's stand-in for it, see SeqSource). */
  seq: number;
  descqCnt: number;
  /** Free-running u32 counters (struct sdma_engine, sdma.h). */
  descqHead: number;
  descqTail: number;
}

/**
 * sdma_progress(sde, seq, tx) exactly as sdma_progress (sdma.h): 1 when the sequence moved since `seqAtSleep`
 * and `numDesc` now fits in the free count (with the −1 of sdma_descq_freecnt, sdma.h); 0 otherwise.
 * `numDesc` is the ring slots the request takes: on the cornelis/hfi2 builds num_desc + num_pad (txRingSlots).
 */
export function sdmaProgress(state: ProgressState, seqAtSleep: number, numDesc: number): 0 | 1 {
  if (state.seq >>> 0 === seqAtSleep >>> 0) return 0;
  return numDesc <= freeCount(state.descqCnt, state.descqHead, state.descqTail) ? 1 : 0;
}

/** Why sdma_progress answered as it did. */
export type ProgressReason = 'fits' | 'no-movement' | 'no-room';

/** sdma_progress with its side effect and its reason spelled out. */
export interface ProgressOutcome {
  result: 0 | 1;
  reason: ProgressReason;
  /** The sequence moved since the sample. */
  moved: boolean;
  /**
   * The refreshed desc_avail when the sequence moved (sdma_progress, sdma.h: the kernel re-reads the free count
   * into its cache only then); null when it did not move and the cache is left alone.
   */
  descAvail: number | null;
}

/** sdma_progress as in sdma.h; returning the result, why, and the desc_avail refresh. */
export function sdmaProgressOutcome(state: ProgressState, seqAtSleep: number, numDesc: number): ProgressOutcome {
  if (state.seq >>> 0 === seqAtSleep >>> 0) {
    return { result: 0, reason: 'no-movement', moved: false, descAvail: null };
  }
  const descAvail = freeCount(state.descqCnt, state.descqHead, state.descqTail);
  const fits = numDesc <= descAvail;
  return { result: fits ? 1 : 0, reason: fits ? 'fits' : 'no-room', moved: true, descAvail };
}
