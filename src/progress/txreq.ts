// Building a request (struct sdma_txreq) and counting its descriptors (struct sdma_txreq, sdma_txreq.h; sdma_txadd_page/kvaddr/daddr, sdma.h), with the
// corrected pad rule of 2024 (sdma_txadd_page/kvaddr/daddr, sdma.h "Version history"). Errors are typed results, not exceptions:
// the kernel returns them to its callers, and so do we.
//
// Descriptors are kept as 32-bit words, four per descriptor, in a Uint32Array that starts with
// room for the NUM_DESC embedded descriptors and is replaced by a MAX_DESC array on extension,
// as the kernel replaces `descs[6]` by an allocated array. A write past the end of a typed array
// is dropped silently, so a pad descriptor written without extension would vanish: the tests
// check that it does not.

import {
  MAX_DESC,
  MAX_SDMA_PKT_SIZE,
  NUM_DESC,
  SDMA_AHG_APPLY_UPDATE1,
  SDMA_AHG_APPLY_UPDATE2,
  SDMA_AHG_APPLY_UPDATE3,
  SDMA_AHG_COPY,
  SDMA_DESC1_HEAD_TO_HOST,
  SDMA_DESC1_INT_REQ,
  SDMA_MAP_NONE,
  SDMA_MAP_PAGE,
  SDMA_MAP_SINGLE,
  SDMA_TXREQ_F_AHG_COPY,
  SDMA_TXREQ_F_URGENT,
  SDMA_TXREQ_F_USE_AHG,
} from './constants.js';
import { withGeneration } from './descriptor.js';
import { alignSplit, type DriverName, numPadFor, ringSlots, type SdmaAlign } from './driver.js';

/** The kernel errors a txreq builder returns (sdma_txinit_ahg, sdma.h; sdma_txadd_page/kvaddr/daddr, sdma.h). */
export type TxError = 'ENODATA' | 'EMSGSIZE' | 'ENOMEM' | 'EINVAL';

/** A failed step: the kernel's errno name and what went wrong. */
export interface TxFailure {
  error: TxError;
  message: string;
}

/** How a fragment's memory reaches the descriptor (sdma_txadd_page/kvaddr/daddr, sdma.h): page, kvaddr (single) or daddr. */
export type TxAddKind = 'page' | 'single' | 'daddr';

const MAP_TYPE: Record<TxAddKind, number> = { page: SDMA_MAP_PAGE, single: SDMA_MAP_SINGLE, daddr: SDMA_MAP_NONE };

/** AHG use at init (sdma_txinit_ahg, sdma.h): copy the header into an entry, or apply 1–9 update words. */
export type AhgSpec = { kind: 'copy'; entry: number } | { kind: 'update'; entry: number; updates: number[]; hlen: number };

/** Options that are device settings rather than per-request arguments. */
export interface TxOptions {
  /** sdma_idle_cnt ≠ 0 (default): LAST descriptors get HEAD_TO_HOST, else INT_REQ (sdma_txadd_page/kvaddr/daddr, sdma.h; the head write-back, sdma.c). */
  idleTimeout?: boolean;
  /** Bus address of the device's shared pad buffer (sdma_txadd_page/kvaddr/daddr, sdma.h). */
  padAddr?: number;
  /** Bus address the coalesce buffer is mapped at (sdma_txadd_page/kvaddr/daddr, sdma.h). */
  coalesceAddr?: number;
  /** The driver build (default upstream: no pad descriptors, no alignment splitting). */
  driver?: DriverName;
  /** pad_sdma_desc of a cornelis/hfi2 device: num_pad rounds num_desc up to a multiple of it (0: none). */
  padSdmaDesc?: number;
  /** sdma_align of a cornelis/hfi2 device (make_tx_sdma_desc, sdma.h): fragments split at 256-byte boundaries. */
  sdmaAlign?: SdmaAlign;
}

/** A request under construction or finished. Mirrors the struct's counting fields (struct sdma_txreq, sdma_txreq.h). */
export interface TxReq {
  flags: number;
  packetLen: number; // u16 packet_len (grows by the pad when coalescing)
  tlen: number; // bytes still to be described
  numDesc: number;
  descLimit: number;
  /** Four u32 words per descriptor: qw0 low, qw0 high, qw1 low, qw1 high. */
  words: Uint32Array;
  /** Bytes held in the coalesce buffer, or -1 when there is none. */
  coalesceIdx: number;
  /** Capacity of the coalesce buffer in bytes (tlen + 4 at allocation), 0 when none. */
  coalesceSize: number;
  /** The tx is closed: its last descriptor carries LAST. */
  closed: boolean;
  /** A pad descriptor was added (packet length not a multiple of 4). */
  padded: boolean;
  /** No-op descriptors that follow the request in the ring (num_pad, set on close; 0 upstream). */
  numPad: number;
  readonly options: Required<TxOptions>;
}

const DEFAULT_OPTIONS: Required<TxOptions> = {
  idleTimeout: true,
  padAddr: 0x1000,
  coalesceAddr: 0x2000,
  driver: 'upstream',
  padSdmaDesc: 0,
  sdmaAlign: 0,
};

function fail(error: TxError, message: string): TxFailure {
  return { error, message };
}

/**
 * sdma_txinit_ahg / sdma_txinit (sdma_txinit_ahg, sdma.h): -ENODATA for tlen 0, -EMSGSIZE above MAX_SDMA_PKT_SIZE.
 * AHG arguments the kernel only warns about (more than 9 updates, a header length that is not a
 * multiple of 4 or is 4) are refused here with EINVAL.
 */
export function txInit(flags: number, tlen: number, ahg?: AhgSpec, options: TxOptions = {}): TxReq | TxFailure {
  if (!Number.isInteger(tlen) || tlen < 0) return fail('EINVAL', `tlen must be a non-negative integer, got ${tlen}`);
  if (tlen === 0) return fail('ENODATA', 'tlen is 0: a packet needs at least one byte');
  if (tlen > MAX_SDMA_PKT_SIZE) {
    return fail('EMSGSIZE', `tlen ${tlen} exceeds MAX_SDMA_PKT_SIZE (${MAX_SDMA_PKT_SIZE})`);
  }
  const tx: TxReq = {
    flags,
    packetLen: tlen,
    tlen,
    numDesc: 0,
    descLimit: NUM_DESC,
    words: new Uint32Array(NUM_DESC * 4),
    coalesceIdx: -1,
    coalesceSize: 0,
    closed: false,
    padded: false,
    numPad: 0,
    options: { ...DEFAULT_OPTIONS, ...options },
  };
  tx.words[1] = 0x8000_0000; // descs[0].qw0 = FIRST
  if (flags & SDMA_TXREQ_F_AHG_COPY && ahg?.kind === 'copy') {
    if (!inRange(ahg.entry, 0, 31)) return fail('EINVAL', `AHG entry must be 0-31, got ${ahg.entry}`);
    tx.words[2] = (SDMA_AHG_COPY << 13) | (ahg.entry << 8);
  } else if (flags & SDMA_TXREQ_F_USE_AHG && ahg?.kind === 'update' && ahg.updates.length > 0) {
    const problem = ahgProblem(ahg);
    if (problem) return fail('EINVAL', problem);
    const n = ahg.updates.length;
    const mode = n === 1 ? SDMA_AHG_APPLY_UPDATE1 : n <= 5 ? SDMA_AHG_APPLY_UPDATE2 : SDMA_AHG_APPLY_UPDATE3;
    tx.words[2] = ((mode << 13) | (ahg.entry << 8) | ((ahg.hlen >>> 2) << 4)) >>> 0;
    tx.words[3] = (ahg.updates[0] ?? 0) >>> 0;
    // Edit descriptors 1–2 carry the remaining words: d1.qw0 lo, hi, d1.qw1 lo, hi, d2.qw0 lo, …
    for (let i = 1; i < n; i++) tx.words[4 + (i - 1)] = (ahg.updates[i] ?? 0) >>> 0;
    tx.numDesc = mode - 1; // UPDATE1 → 1, UPDATE2 → 2, UPDATE3 → 3
  }
  return tx;
}

function inRange(v: number, lo: number, hi: number): boolean {
  return Number.isInteger(v) && v >= lo && v <= hi;
}

function ahgProblem(ahg: { entry: number; updates: number[]; hlen: number }): string | null {
  if (!inRange(ahg.entry, 0, 31)) return `AHG entry must be 0-31, got ${ahg.entry}`;
  if (ahg.updates.length > 9) return `at most 9 AHG update words, got ${ahg.updates.length}`;
  if (ahg.hlen % 4 !== 0 || ahg.hlen === 4 || ahg.hlen < 0 || ahg.hlen > 60) {
    return `AHG header length must be a multiple of 4 other than 4 (at most 60), got ${ahg.hlen}`;
  }
  if (ahg.updates.some((u) => !inRange(u, 0, 0xffff_ffff))) return 'AHG update words must be u32';
  return null;
}

/** True when a step failed. */
export function isTxFailure(x: unknown): x is TxFailure {
  return typeof x === 'object' && x !== null && 'error' in x;
}

/**
 * _extend_sdma_tx_descs (sdma_txadd_page/kvaddr/daddr, sdma.h): at 63 descriptors either release the 64th slot (only the pad is
 * left) or allocate the coalesce buffer; at 64, ENOMEM; otherwise move to a 64-entry array with
 * the last slot reserved for coalescing.
 */
function extend(tx: TxReq): TxFailure | null {
  if (tx.numDesc === MAX_DESC - 1) {
    if (tx.tlen === 0) {
      tx.descLimit = MAX_DESC;
    } else if (tx.coalesceIdx < 0) {
      tx.coalesceIdx = 0;
      tx.coalesceSize = tx.tlen + 4;
    }
    return null;
  }
  if (tx.numDesc === MAX_DESC) return fail('ENOMEM', `txreq already holds ${MAX_DESC} descriptors`);
  const bigger = new Uint32Array(MAX_DESC * 4);
  bigger.set(tx.words.subarray(0, tx.numDesc * 4));
  // AHG edit words beyond numDesc (none once data is added) need no copy.
  tx.words = bigger;
  tx.descLimit = MAX_DESC - 1;
  return null;
}

/** Write descriptor numDesc (FIRST and the AHG bits stay on descriptor 0) and count it. */
function writeDescriptor(tx: TxReq, mapType: number, addr: number, len: number): void {
  const w = tx.numDesc * 4;
  const addrHi = Math.floor(addr / 0x1_0000_0000);
  if (tx.numDesc === 0) {
    // Descriptor 0 keeps FIRST in qw0 and the AHG bits in qw1 (sdma_txadd_page/kvaddr/daddr, sdma.h step 1).
    tx.words[w] = addr >>> 0;
    tx.words[w + 1] = (0x8000_0000 | (len << 16) | addrHi) >>> 0;
    tx.words[w + 2] = withGeneration(tx.words[w + 2] ?? 0, mapType);
  } else {
    tx.words[w] = addr >>> 0;
    tx.words[w + 1] = ((len << 16) | addrHi) >>> 0;
    tx.words[w + 2] = withGeneration(0, mapType);
    tx.words[w + 3] = 0;
  }
  tx.numDesc += 1;
}

/**
 * The leading pieces of a fragment that sdma_align splits (make_tx_sdma_desc, sdma.h), written before the last
 * piece; returns the last piece. The kernel reserves room through desc_margin and coalesces early; this model
 * grows the array as txAdd does and refuses (ENOMEM) a split that would pass MAX_DESC.
 */
function writeAlignedHead(tx: TxReq, mapType: number, addr: number, len: number): { addr: number; len: number } | TxFailure {
  const pieces = alignSplit(addr, len, tx.options.sdmaAlign);
  let a = addr;
  for (let i = 0; i < pieces.length - 1; i++) {
    const piece = pieces[i] as number;
    const room = roomForOne(tx);
    if (room) return room;
    writeDescriptor(tx, mapType, a, piece);
    tx.tlen -= piece;
    a += piece;
  }
  const last = pieces[pieces.length - 1] as number;
  const room = roomForOne(tx);
  if (room) return room;
  return { addr: a, len: last };
}

function roomForOne(tx: TxReq): TxFailure | null {
  if (tx.numDesc < tx.descLimit) return null;
  if (tx.descLimit === NUM_DESC) return extend(tx);
  return fail('ENOMEM', `256-byte alignment splitting needs more than ${tx.descLimit} descriptors`);
}

/** Write descriptor numDesc and account for it; closes the tx when tlen reaches 0. */
function addDescriptor(tx: TxReq, mapType: number, addr: number, len: number): TxFailure | null {
  if (tx.options.sdmaAlign !== 0 && tx.options.driver !== 'upstream') {
    const last = writeAlignedHead(tx, mapType, addr, len);
    if (isTxFailure(last)) return last;
    addr = last.addr;
    len = last.len;
  }
  writeDescriptor(tx, mapType, addr, len);
  tx.tlen -= len;
  if (tx.tlen !== 0) return null;
  if (tx.packetLen % 4 !== 0) {
    // The corrected 2024 rule: extend when the array is full, then write the pad descriptor.
    if (tx.numDesc === tx.descLimit) {
      const err = extend(tx);
      if (err) return err;
    }
    const pad = 4 - (tx.packetLen % 4);
    const p = tx.numDesc * 4;
    const padAddr = tx.options.padAddr;
    tx.words[p] = padAddr >>> 0;
    tx.words[p + 1] = ((pad << 16) | Math.floor(padAddr / 0x1_0000_0000)) >>> 0;
    tx.words[p + 2] = withGeneration(0, SDMA_MAP_NONE);
    tx.words[p + 3] = 0;
    tx.numDesc += 1;
    tx.padded = true;
  }
  close(tx);
  return null;
}

/** Close (sdma_txadd_page/kvaddr/daddr, sdma.h step 4): LAST on the last descriptor, default_desc1, URGENT flags. */
function close(tx: TxReq): void {
  const w = (tx.numDesc - 1) * 4;
  tx.words[w + 1] = ((tx.words[w + 1] ?? 0) | 0x4000_0000) >>> 0;
  let qw1 = tx.words[w + 2] ?? 0;
  qw1 |= tx.options.idleTimeout ? SDMA_DESC1_HEAD_TO_HOST : SDMA_DESC1_INT_REQ;
  if (tx.flags & SDMA_TXREQ_F_URGENT) qw1 |= SDMA_DESC1_HEAD_TO_HOST | SDMA_DESC1_INT_REQ;
  tx.words[w + 2] = qw1 >>> 0;
  tx.closed = true;
  // sdma_desc_pad_count, sdma.h (cornelis/hfi2 builds): no-op descriptors up to a multiple of pad_sdma_desc.
  tx.numPad = numPadFor(tx.options.driver, tx.numDesc, tx.options.padSdmaDesc);
}

/**
 * sdma_txadd_page / _kvaddr / _daddr (sdma_txadd_page/kvaddr/daddr, sdma.h): add `len` bytes at bus address `addr`. Returns null
 * on success (including data that went into the coalesce buffer), or the failure. A length of
 * 0 or more than the bytes still to describe is refused with EINVAL (the kernel only warns).
 */
export function txAdd(tx: TxReq, kind: TxAddKind, addr: number, len: number): TxFailure | null {
  if (tx.closed) return fail('EINVAL', 'txreq is already closed: every byte of the packet is described');
  if (!inRange(len, 1, tx.tlen)) return fail('EINVAL', `fragment length must be 1-${tx.tlen}, got ${len}`);
  if (!inRange(addr, 0, 2 ** 48 - 1)) return fail('EINVAL', `address must fit 48 bits, got ${addr}`);
  if (tx.numDesc === tx.descLimit) {
    const err = extend(tx);
    if (err) return err;
    if (tx.coalesceIdx >= 0) return coalesce(tx, kind, len);
  }
  return addDescriptor(tx, MAP_TYPE[kind], addr, len);
}

/** ext_coal_sdma_tx_descs, coalescing part (sdma_txadd_page/kvaddr/daddr, sdma.h): copy, and at the end add one SINGLE descriptor. */
function coalesce(tx: TxReq, kind: TxAddKind, len: number): TxFailure | null {
  if (kind === 'daddr') return fail('EINVAL', 'a pre-mapped (daddr) fragment cannot be copied into the coalesce buffer');
  tx.coalesceIdx += len;
  tx.tlen -= len;
  if (tx.tlen !== 0) return null;
  const pad = (4 - (tx.packetLen % 4)) % 4;
  tx.packetLen += pad;
  const total = tx.coalesceIdx + pad;
  tx.tlen = total;
  tx.descLimit = MAX_DESC;
  return addDescriptor(tx, SDMA_MAP_SINGLE, tx.options.coalesceAddr, total);
}

/** The ring slots a closed tx takes, num_desc + num_pad: what every room check compares with the free count. */
export function txRingSlots(tx: TxReq): number {
  return ringSlots(tx.numDesc, tx.numPad);
}

/** The descriptors of a tx as qword pairs (for display and tests). */
export function txDescriptors(tx: TxReq): { qw0: bigint; qw1: bigint }[] {
  const out: { qw0: bigint; qw1: bigint }[] = [];
  for (let i = 0; i < tx.numDesc; i++) {
    const w = i * 4;
    const q = (lo: number, hi: number) => (BigInt(tx.words[w + hi] ?? 0) << 32n) | BigInt(tx.words[w + lo] ?? 0);
    out.push({ qw0: q(0, 1), qw1: q(2, 3) });
  }
  return out;
}

/** A packet described as fragments, for counting in one call. */
export interface TxSpec {
  flags?: number;
  tlen: number;
  ahg?: AhgSpec;
  fragments: { kind: TxAddKind; len: number; addr?: number }[];
  options?: TxOptions;
}

/** Build a whole tx from a spec: the finished TxReq, or the first failure. */
export function buildTx(spec: TxSpec): TxReq | TxFailure {
  const tx = txInit(spec.flags ?? 0, spec.tlen, spec.ahg, spec.options);
  if (isTxFailure(tx)) return tx;
  let addr = 0x10_0000;
  for (const f of spec.fragments) {
    const err = txAdd(tx, f.kind, f.addr ?? addr, f.len);
    if (err) return err;
    addr += f.len;
  }
  if (!tx.closed)
    return fail('EINVAL', `${tx.tlen} bytes of the packet are not described (tlen ≠ 0: sdma_send_txreq refuses it)`);
  return tx;
}
