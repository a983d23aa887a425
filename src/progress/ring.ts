// Ring arithmetic on the kernel's free-running counters, with C's wrap semantics (struct sdma_engine, sdma.h; sdma_descq_freecnt, sdma.h).
// descq_head/descq_tail are u32, tx_head/tx_tail u16, descq_cnt u16; results that the kernel
// returns as u16 are truncated to 16 bits exactly as C truncates them.

import { SDMA_DESCQ_CNT_DEFAULT, SDMA_DESCQ_CNT_MAX, SDMA_DESCQ_CNT_MIN } from './constants.js';
import { type DriverName, numPadFor, type PathFit, pathFits, type SubmitPath } from './driver.js';

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
  /** pad_sdma_desc of the device (0 upstream or off). */
  padSdmaDesc: number;
  /** num_pad of the request (sdma_desc_pad_count; 0 upstream): what sdma_send_txreq adds to it. */
  numPad: number;
  /** The path `fits`, `headroom` and `canEverFit` are of. */
  path: SubmitPath;
  fits: boolean;
  scheduleThreshold: number;
  /** sdma_descq_inprocess of the driver build: in flight + 1 upstream, in flight on cornelis/hfi2. */
  inProcess: number;
  /** The counted path's room less what it admits the request on (negative: the shortfall). */
  headroom: number;
  /** False when the counted path can never admit the request, however much retires. */
  canEverFit: boolean;
  /** Both paths: sdma_send_txreq (verbs QPs, IPoIB) and sdma_send_txlist (PSM). */
  paths: Record<SubmitPath, PathFit>;
}

/**
 * Would a request of numDesc descriptors be admitted now (sdma_descq_freecnt, sdma.h; sdma_send_txreq and
 * sdma_send_txlist, sdma.c)? `driver` decides the in-process count and whether pads count; `padSdmaDesc` is the
 * device's pad_sdma_desc; `path` the path the verdict fields describe (both are in `paths`).
 */
export function fitReport(
  descqCnt: number,
  descqHead: number,
  descqTail: number,
  numDesc: number,
  driver: DriverName = 'upstream',
  padSdmaDesc = 0,
  path: SubmitPath = 'txreq',
): FitReport {
  const free = freeCount(descqCnt, descqHead, descqTail);
  const flight = inFlight(descqHead, descqTail);
  const pad = driver === 'upstream' ? 0 : padSdmaDesc;
  const paths = pathFits(driver, free, maxFree(descqCnt), numDesc, pad);
  const counted = paths[path];
  return {
    driver,
    descqCnt,
    head: u32(descqHead),
    tail: u32(descqTail),
    inFlight: flight,
    free,
    numDesc,
    padSdmaDesc: pad,
    numPad: numPadFor(driver, numDesc, pad),
    path,
    fits: counted.fits,
    scheduleThreshold: scheduleThreshold(descqCnt),
    inProcess:
      driver === 'upstream' ? inProcess(descqCnt, descqHead, descqTail) : inProcessInFlight(descqCnt, descqHead, descqTail),
    headroom: counted.headroom,
    canEverFit: counted.canEverFit,
    paths,
  };
}
