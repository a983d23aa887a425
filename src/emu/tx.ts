// The emulator's sdma_txreq (struct sdma_txreq, sdma_txreq.h): the counting fields the engine reads, the descriptor words
// built by src/progress/txreq.ts, and where the request is in its life. Requests are pooled and
// reused by their owners, and share their templates' words, so the submission path allocates nothing.
import type { TxReq } from '../progress/txreq.js';
import type { IoWait } from './iowait.js';

/** Kernel return codes (negative errno values) used by the submission path (sdma_check_progress, sdma.c; iowait_sleep, qp.c; defer_packet_queue, user_sdma.c). */
export const EINVAL = -22;
export const EBUSY = -16;
export const EAGAIN = -11;
export const ECOMM = -70;

/** Where a txreq is. */
export const TxPhase = {
  /** Owned by its sender, not handed to an engine (or handed back after a failed placement). */
  idle: 0,
  /** Its descriptors are in the ring (tx_ring holds it). */
  ring: 1,
  /** On the engine's flush list, to be completed ABORTED (sdma_send_txreq, sdma.c noconn). */
  flush: 2,
  /** Completed; the owner may reuse it. */
  done: 3,
} as const;

/** Called once per completed txreq with SDMA_TXREQ_S_OK (0) or SDMA_TXREQ_S_ABORTED (2) (complete_tx, sdma.c). */
export interface TxOwner {
  complete(tx: EmuTx, status: number): void;
}

const NO_WORDS = new Uint32Array(0);

/** One request. `words` holds 4 u32 per descriptor: qw0 low, qw0 high, qw1 low, qw1 high. */
export class EmuTx {
  /** Submission serial number, unique per engine (0 before the first submission). */
  serial = 0;
  numDesc = 0;
  /** num_pad (sdma_desc_pad_count, sdma.h; 0 upstream): the pads sdma_send_txreq writes with it. */
  numPad = 0;
  /**
   * num_desc + num_pad: what sdma_send_txreq admits against desc_avail, and what sdma_check_progress and
   * sdma_progress compare with the free count on either submission path (sdma_send_txlist admits on num_desc alone).
   */
  slots = 0;
  /** Bytes not yet described; sdma_send_txreq refuses a request with tlen ≠ 0 (sdma_send_txreq, sdma.c). */
  tlen = 0;
  packetLen = 0;
  flags = 0;
  /** The unit-wide number of the template it was loaded from (a sender's packet; −1 for a request built elsewhere). */
  template = -1;
  /** The pads written with it into the ring (0 or, on the padding builds, the batch's or the request's). */
  padWritten = 0;
  /** Ring slot after the request's last descriptor (submit_tx, sdma.c). */
  nextDescqIdx = 0;
  phase: number = TxPhase.idle;
  /** Completion status once done (struct sdma_txreq, sdma_txreq.h), −1 before. */
  status = -1;
  /** The iowait of the submitter, or null (sdma_send_txreq, sdma.c). */
  wait: IoWait | null = null;
  /** The request's descriptor words: shared with the template it was loaded from, never written. */
  words: Uint32Array = NO_WORDS;
  /** The same descriptors already in the JKR layout (made once per template by its sender), or null. */
  chipWords: Uint32Array | null = null;

  /** `_capacity` is accepted for callers that size their requests; the words come with load(). */
  constructor(
    readonly owner: TxOwner | null,
    _capacity = 6,
  ) {}

  /** Take the descriptors and lengths of a request built with src/progress/txreq.ts (and its JKR-layout words). */
  load(req: TxReq, chipWords: Uint32Array | null = null): this {
    this.template = -1;
    this.words = req.words;
    this.chipWords = chipWords;
    this.numDesc = req.numDesc;
    this.numPad = req.numPad;
    this.slots = req.numDesc + req.numPad;
    this.tlen = req.tlen;
    this.packetLen = req.packetLen;
    this.flags = req.flags;
    this.phase = TxPhase.idle;
    this.status = -1;
    this.wait = null;
    return this;
  }
}
