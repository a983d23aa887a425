// The driver builds and what they change in the ring arithmetic and in a request's descriptor count:
// `upstream` (hfi1 in the kernel tree), `cornelis` (the out-of-tree hfi1 of Cornelis' OPA distribution, which
// drives WFR and JKR) and `hfi2` (the Cornelis driver posted to linux-rdma).
//
// Differences modelled (sdma.h / sdma.c of each build):
// - sdma_descq_inprocess: upstream returns descq_cnt − freecnt = in flight + 1; cornelis and hfi2 return
//   (descq_cnt + tail − head) & (descq_cnt − 1) = in flight. sdma_engine_progress_schedule's test
//   (in-process < descq_cnt / 8 → nothing) is the same expression in all three, so it fires one descriptor later
//   on cornelis/hfi2 (in flight ≥ 256 for a 2048 ring, against 255 upstream).
// - num_pad (sdma_desc_pad_count, sdma.h): after closing a txreq, cornelis/hfi2 set
//   round_up(num_desc, pad_sdma_desc) − num_desc. sdma_send_txreq admits num_desc + num_pad against desc_avail and
//   writes that many pads with the request; sdma_send_txlist admits num_desc against desc_avail rounded down to the
//   pad and pads the batch once per tail update; sdma_check_progress and sdma_progress compare num_desc + num_pad on
//   both paths. Upstream has no pad.
// - sdma_align (make_tx_sdma_desc, sdma.h): cornelis/hfi2 may split a fragment at 256-byte boundaries.
//
// A choice where the sources leave it open: the hfi2 postings of 2026 may have no module parameters at all; we
// take the per-device values (pad_sdma_desc, sdma_align, sdma_threshold) to follow the same "-1 = automatic" rule
// then: 32 / 2 / 32 on a JKR chip in an AMD host, else 0. A caller that knows the values passes them.

import type { ChipName } from './chip.js';
import { freeCount, inProcess, inProcessInFlight, u16 } from './ring.js';

export const DRIVER_NAMES = ['upstream', 'cornelis', 'hfi2'] as const;
/** The driver build: upstream hfi1, the Cornelis out-of-tree hfi1, or hfi2. */
export type DriverName = (typeof DRIVER_NAMES)[number];

/** True when `s` names a driver build. */
export function isDriverName(s: unknown): s is DriverName {
  return s === 'upstream' || s === 'cornelis' || s === 'hfi2';
}

/** True when the build counts in-process as the real in-flight count (cornelis, hfi2). */
export function countsInFlightOnly(driver: DriverName): boolean {
  return driver !== 'upstream';
}

/**
 * sdma_descq_inprocess of the build (sdma.h): upstream in flight + 1 (1 for an empty ring, computed as
 * descq_cnt − freecnt in u16); cornelis/hfi2 (descq_cnt + tail − head) & (descq_cnt − 1).
 */
export function inProcessFor(driver: DriverName, descqCnt: number, descqHead: number, descqTail: number): number {
  if (driver === 'upstream') return inProcess(descqCnt, descqHead, descqTail);
  return inProcessInFlight(descqCnt, descqHead, descqTail);
}

/**
 * sdma_descq_freecnt of the build (sdma.h): upstream descq_cnt − (tail − head) − 1; cornelis/hfi2
 * descq_cnt − 1 − inprocess. Equal whenever in flight ≤ descq_cnt − 1 (every consistent ring).
 */
export function freeCountFor(driver: DriverName, descqCnt: number, descqHead: number, descqTail: number): number {
  if (driver === 'upstream') return freeCount(descqCnt, descqHead, descqTail);
  return u16(descqCnt - 1 - inProcessFor(driver, descqCnt, descqHead, descqTail));
}

/** Whether sdma_engine_progress_schedule (sdma.h) forces a progress interrupt: in-process ≥ descq_cnt / 8. */
export function progressScheduleFiresFor(driver: DriverName, descqCnt: number, descqHead: number, descqTail: number): boolean {
  return inProcessFor(driver, descqCnt, descqHead, descqTail) >= Math.floor(descqCnt / 8);
}

/** The smallest in-flight count at which the progress schedule fires: descq_cnt / 8 − 1 upstream, descq_cnt / 8 else. */
export function scheduleInFlight(driver: DriverName, descqCnt: number): number {
  const threshold = Math.floor(descqCnt / 8);
  return driver === 'upstream' ? threshold - 1 : threshold;
}

/** pad_sdma_desc values the driver accepts (its module parameter description: 0, 4, 8, 16, 32). */
export const PAD_SDMA_DESC_VALUES: readonly number[] = [0, 4, 8, 16, 32];

/**
 * num_pad of a closed txreq (sdma_desc_pad_count, sdma.h): round_up(num_desc, pad_sdma_desc) − num_desc on
 * cornelis/hfi2, 0 when pad_sdma_desc is 0 and always 0 upstream.
 */
export function numPadFor(driver: DriverName, numDesc: number, padSdmaDesc: number): number {
  if (driver === 'upstream' || padSdmaDesc === 0) return 0;
  if (!PAD_SDMA_DESC_VALUES.includes(padSdmaDesc)) {
    throw new RangeError(`pad_sdma_desc must be one of ${PAD_SDMA_DESC_VALUES.join(', ')}, got ${padSdmaDesc}`);
  }
  return Math.ceil(numDesc / padSdmaDesc) * padSdmaDesc - numDesc;
}

/** The ring slots a request takes (sdma_progress, sdma.h; sdma_send_txreq, sdma.c): num_desc + num_pad. */
export function ringSlots(numDesc: number, numPad: number): number {
  return numDesc + numPad;
}

/** The two submission paths: sdma_send_txreq (verbs QPs, IPoIB) and sdma_send_txlist (PSM, user SDMA). */
export type SubmitPath = 'txreq' | 'txlist';

/** What one path admits a request against now. */
export interface PathFit {
  /** Slots the request is admitted on: num_desc + num_pad (txreq) or num_desc (txlist). */
  need: number;
  /** What it is compared with: the free count (txreq), or the free count rounded down to the pad (txlist). */
  room: number;
  fits: boolean;
  /** room − need: the room left (negative: the shortfall). */
  headroom: number;
  /** False when no retirement can ever make the room (need above what an empty ring offers). */
  canEverFit: boolean;
}

/** round_down(n, pad) of the kernel (pad a power of two; 0 leaves n). */
export function roundDownToPad(n: number, padSdmaDesc: number): number {
  return padSdmaDesc === 0 ? n : n - (n % padSdmaDesc);
}

/**
 * Whether a request of `numDesc` descriptors is admitted now on each path, given the free count and what an empty
 * ring offers (descq_cnt − 1): sdma_send_txreq tests num_desc + num_pad ≤ desc_avail; sdma_send_txlist tests
 * num_desc ≤ round_down(desc_avail, pad_sdma_desc) (its batch pads then always fit: sdma.c).
 */
export function pathFits(
  driver: DriverName,
  free: number,
  emptyFree: number,
  numDesc: number,
  padSdmaDesc: number,
): Record<SubmitPath, PathFit> {
  const pad = driver === 'upstream' ? 0 : padSdmaDesc;
  const admits = (need: number, room: number, best: number): PathFit => ({
    need,
    room,
    fits: need <= room,
    headroom: room - need,
    canEverFit: need <= best,
  });
  return {
    txreq: admits(ringSlots(numDesc, numPadFor(driver, numDesc, pad)), free, emptyFree),
    txlist: admits(numDesc, roundDownToPad(free, pad), roundDownToPad(emptyFree, pad)),
  };
}

/** sdma_align modes (make_tx_sdma_desc, sdma.h): none, 256-all, 256-head-tail, 256-tail. */
export type SdmaAlign = 0 | 1 | 2 | 3;

/** Per-device settings of the cornelis/hfi2 builds (struct hfi1_devdata / hfi2_devdata: sdma_threshold, pad_sdma_desc, sdma_align). */
export interface DriverSettings {
  sdmaThreshold: number;
  padSdmaDesc: number;
  sdmaAlign: SdmaAlign;
}

/**
 * The settings a build uses when its module parameters are left at −1 (sdma.c of cornelis/hfi2): 32 / 32 / 2 on
 * a JKR chip in an AMD host, else 0; upstream has none of them.
 */
export function defaultDriverSettings(driver: DriverName, chip: ChipName, amdHost: boolean): DriverSettings {
  if (driver === 'upstream' || chip !== 'jkr' || !amdHost) return { sdmaThreshold: 0, padSdmaDesc: 0, sdmaAlign: 0 };
  return { sdmaThreshold: 32, padSdmaDesc: 32, sdmaAlign: 2 };
}

const ALIGN = 256;

/**
 * The descriptor lengths one fragment becomes under sdma_align (make_tx_sdma_desc, sdma.h):
 * 1 splits off an unaligned head, then 256-byte chunks, then the rest; 2 splits off an unaligned head, then one
 * aligned middle, then the rest; 3 splits at the last 256-byte boundary inside the fragment (when there is one);
 * 0 keeps the fragment whole.
 */
export function alignSplit(addr: number, len: number, mode: SdmaAlign): number[] {
  if (mode === 0 || len === 0) return [len];
  const out: number[] = [];
  let a = addr;
  let rest = len;
  if (mode === 3) {
    const end = a + rest;
    const same = Math.floor(a / ALIGN) === Math.floor(end / ALIGN);
    const head = rest - (end % ALIGN);
    if (head !== 0 && !same) {
      out.push(head);
      rest -= head;
    }
    if (rest !== 0) out.push(rest);
    return out;
  }
  if (a % ALIGN !== 0) {
    const first = Math.min(ALIGN - (a % ALIGN), rest);
    out.push(first);
    rest -= first;
    a += first;
  }
  if (mode === 1) {
    while (rest >= ALIGN) {
      out.push(ALIGN);
      rest -= ALIGN;
    }
  } else {
    const middle = rest - (rest % ALIGN);
    if (middle !== 0) {
      out.push(middle);
      rest -= middle;
    }
  }
  if (rest !== 0) out.push(rest);
  return out;
}
