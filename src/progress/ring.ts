// Ring arithmetic on the kernel's free-running counters, with C's wrap semantics (struct sdma_engine, sdma.h; sdma_descq_freecnt, sdma.h).
// descq_head/descq_tail are u32, tx_head/tx_tail u16, descq_cnt u16; results that the kernel
// returns as u16 are truncated to 16 bits exactly as C truncates them.

import { SDMA_DESCQ_CNT_DEFAULT, SDMA_DESCQ_CNT_MAX, SDMA_DESCQ_CNT_MIN } from './constants.js';
import type { DriverName } from './driver.js';

/** Truncate to an unsigned 32-bit value (C `u32`). */
export function u32(x: number): number {
  return x >>> 0;
}

/** Truncate to an unsigned 16-bit value (C `u16`). */
export function u16(x: number): number {
  return x & 0xffff;
}

/** A valid ring size: a power of two from 64 to 32768 (sdma_get_descq_cnt, sdma.c). */
export function isValidDescqCnt(cnt: number): boolean {
  return Number.isInteger(cnt) && cnt >= SDMA_DESCQ_CNT_MIN && cnt <= SDMA_DESCQ_CNT_MAX && (cnt & (cnt - 1)) === 0;
}

/**
 * The ring size the driver uses for a `sdma_descq_cnt` module parameter (sdma_get_descq_cnt, sdma.c): truncated to
 * 16 bits first, then the default 2048 replaces anything that is not a valid size. 65600
 * truncates to 64 and is accepted.
 */
export function descqCntFromParam(param: number): number {
  const truncated = u16(param);
  return isValidDescqCnt(truncated) ? truncated : SDMA_DESCQ_CNT_DEFAULT;
}

/** sdma_shift = log2(descq_cnt) (sdma_get_descq_cnt, sdma.c). */
export function sdmaShift(descqCnt: number): number {
  return 31 - Math.clz32(descqCnt);
}

/** sdma_mask = descq_cnt − 1 (sdma_get_descq_cnt, sdma.c). */
export function sdmaMask(descqCnt: number): number {
  return descqCnt - 1;
}

/** Ring slot of a free-running counter (struct sdma_engine, sdma.h). */
export function slot(counter: number, descqCnt: number): number {
  return counter & (descqCnt - 1);
}

/** Descriptors written and not retired: descq_tail − descq_head in u32 arithmetic (struct sdma_engine, sdma.h). */
export function inFlight(descqHead: number, descqTail: number): number {
  return u32(descqTail - descqHead);
}

/**
 * sdma_descq_freecnt (sdma_descq_freecnt, sdma.h): descq_cnt − (tail − head) − 1, returned as u16. One slot stays
 * empty so that full (in flight = cnt − 1) and empty (tail == head) differ. On inconsistent
 * counters (in flight ≥ cnt) the C result wraps, and so does this one.
 */
export function freeCount(descqCnt: number, descqHead: number, descqTail: number): number {
  return u16(descqCnt - inFlight(descqHead, descqTail) - 1);
}

/** sdma_descq_inprocess (sdma_descq_freecnt, sdma.h): descq_cnt − freecnt = in flight + 1 (1 for an empty ring). */
export function inProcess(descqCnt: number, descqHead: number, descqTail: number): number {
  return u16(descqCnt - freeCount(descqCnt, descqHead, descqTail));
}

/**
 * sdma_descq_inprocess of the cornelis hfi1 and hfi2 builds (sdma.h): (descq_cnt + tail − head) & (descq_cnt − 1),
 * the real in-flight count (0 for an empty ring).
 */
export function inProcessInFlight(descqCnt: number, descqHead: number, descqTail: number): number {
  return u32(descqCnt + descqTail - descqHead) & (descqCnt - 1);
}

/** sdma_empty (sdma_descq_freecnt, sdma.h): a raw u32 comparison of tail and head. */
export function isEmpty(descqHead: number, descqTail: number): boolean {
  return u32(descqHead) === u32(descqTail);
}

/** The largest free count a ring of this size can ever show (sdma_descq_freecnt, sdma.h): descq_cnt − 1. */
export function maxFree(descqCnt: number): number {
  return descqCnt - 1;
}

/** The in-process count at which sdma_engine_progress_schedule fires (sdma_engine_progress_schedule, sdma.h): descq_cnt / 8. */
export function scheduleThreshold(descqCnt: number): number {
  return Math.floor(descqCnt / 8);
}

/**
 * Whether sdma_engine_progress_schedule would force a progress interrupt (sdma_engine_progress_schedule, sdma.h): in-process
 * ≥ descq_cnt / 8, i.e. in flight ≥ 255 for a 2048 ring.
 */
export function progressScheduleFires(descqCnt: number, descqHead: number, descqTail: number): boolean {
  return inProcess(descqCnt, descqHead, descqTail) >= scheduleThreshold(descqCnt);
}

/** Ring arithmetic of one engine at one moment, as `fit` reports it. */
export interface FitReport {
  /** The driver build whose arithmetic was used (upstream hfi1 unless told). */
  driver: DriverName;
  descqCnt: number;
  head: number;
  tail: number;
  inFlight: number;
  free: number;
  numDesc: number;
  /** Pad descriptors that follow the request (num_pad; 0 upstream), counted in the room check. */
  numPad: number;
  fits: boolean;
  scheduleThreshold: number;
  /** sdma_descq_inprocess of the driver build: in flight + 1 upstream, in flight on cornelis/hfi2. */
  inProcess: number;
  /** Free count − (numDesc + numPad): the room left after the request (negative: the shortfall). */
  headroom: number;
  /** False when numDesc + numPad exceeds descq_cnt − 1: no amount of retirement makes room. */
  canEverFit: boolean;
}

/**
 * Would a request of numDesc descriptors (and numPad pad descriptors) fit now (sdma_descq_freecnt, sdma.h;
 * sdma_send_txreq, sdma.c: num_desc + num_pad ≤ free count)? `driver` decides the in-process count.
 */
export function fitReport(
  descqCnt: number,
  descqHead: number,
  descqTail: number,
  numDesc: number,
  driver: DriverName = 'upstream',
  numPad = 0,
): FitReport {
  const free = freeCount(descqCnt, descqHead, descqTail);
  const flight = inFlight(descqHead, descqTail);
  const slots = numDesc + numPad;
  return {
    driver,
    descqCnt,
    head: u32(descqHead),
    tail: u32(descqTail),
    inFlight: flight,
    free,
    numDesc,
    numPad,
    fits: slots <= free,
    scheduleThreshold: scheduleThreshold(descqCnt),
    inProcess:
      driver === 'upstream' ? inProcess(descqCnt, descqHead, descqTail) : inProcessInFlight(descqCnt, descqHead, descqTail),
    headroom: free - slots,
    canEverFit: slots <= maxFree(descqCnt),
  };
}
