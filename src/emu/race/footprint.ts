// Which shared state each actor's next step reads and writes (steps.ts), for the partial-order
// reduction: two enabled steps of different actors commute, and neither disables the other, when
// neither writes what the other reads or writes. What a step reads to be enabled (a lock holder,
// the pending interrupt sources, the chip's HEAD/TAIL) counts as read. A submitter's own locals and
// the interrupt handler's are private to them and not listed.
import { IrqPc, Pc, type Submitter, type World } from './world.js';

/** tail_lock's holder. */
const TAIL_LOCK = 1 << 0;
/** waitlock's holder. */
const WAIT_LOCK = 1 << 1;
/** desc_avail, the submitters' cached free count. */
const DESC_AVAIL = 1 << 2;
/** The ring: descq_head/tail, tx_ring, tx_head/tail, the txreqs' phase and their owners' sdma_busy. */
const RING = 1 << 3;
/** The chip's HEAD, TAIL and generation count. */
const CHIP = 1 << 4;
/** Interrupt sources raised and not yet taken. */
const PENDING = 1 << 5;
/** head_lock's sequence. */
const HEAD_SEQ = 1 << 6;
/** waitlock's sequence. */
const WAIT_SEQ = 1 << 7;
/** dmawait, the harvest, and each iowait's queue fields and wake-up flag. */
const DMAWAIT = 1 << 8;
/** descq_full_count. */
const DQF = 1 << 9;

/** A step's footprint: bit sets of what it reads and what it writes. */
export interface Footprint {
  reads: number;
  writes: number;
}

const NONE: Footprint = { reads: 0, writes: 0 };

function fp(reads: number, writes: number): Footprint {
  return { reads: reads | writes, writes };
}

const SUBMITTER: Readonly<Record<number, Footprint>> = {
  // sdma_send_txreq: a request that fits is placed (tail_lock taken and released within the step).
  [Pc.check]: fp(RING, DESC_AVAIL),
  [Pc.sample]: fp(HEAD_SEQ, 0),
  [Pc.lock]: fp(0, WAIT_LOCK | WAIT_SEQ),
  [Pc.progress]: fp(HEAD_SEQ | RING, DESC_AVAIL | WAIT_LOCK | WAIT_SEQ),
  [Pc.progressUnlocked]: fp(HEAD_SEQ | RING, DESC_AVAIL),
  [Pc.enqueue]: fp(0, DMAWAIT),
  [Pc.unlock]: fp(0, WAIT_SEQ | WAIT_LOCK | DQF | TAIL_LOCK),
};

const QP_PARK: Readonly<Record<number, Footprint>> = {
  [Pc.lock]: fp(0, WAIT_LOCK | WAIT_SEQ | DMAWAIT),
  [Pc.progress]: fp(HEAD_SEQ | RING, DESC_AVAIL | WAIT_LOCK | WAIT_SEQ | DMAWAIT),
};

const SEND_FITS = fp(TAIL_LOCK, DESC_AVAIL | RING | CHIP);
const SEND_NO_ROOM = fp(DESC_AVAIL, TAIL_LOCK);

const IRQ: Readonly<Record<number, Footprint>> = {
  [IrqPc.idle]: fp(0, PENDING | HEAD_SEQ),
  [IrqPc.advance]: fp(CHIP, RING),
  [IrqPc.avail]: fp(WAIT_LOCK, DMAWAIT | WAIT_SEQ),
  [IrqPc.wake]: fp(0, DMAWAIT),
  [IrqPc.exit]: fp(0, HEAD_SEQ),
};

const CHIP_STEP = fp(RING, CHIP | PENDING);

function submitterFootprint(w: World, s: Submitter): Footprint {
  switch (s.pc) {
    case Pc.start:
    case Pc.retry:
      return s.tx.numDesc <= w.e.descAvail ? SEND_FITS : SEND_NO_ROOM;
    case Pc.asleep: {
      const f = s.tx.numDesc <= w.e.descAvail ? SEND_FITS : SEND_NO_ROOM;
      return fp(f.reads | DMAWAIT, f.writes | DMAWAIT);
    }
    case Pc.lock:
    case Pc.progress:
      // A QP parks its txreq on (or takes it back off) its work list, which the harvest reads.
      return s.kind === 'qp' ? (QP_PARK[s.pc] ?? NONE) : (SUBMITTER[s.pc] ?? NONE);
    default:
      return SUBMITTER[s.pc] ?? NONE;
  }
}

/** The footprint of actor `a`'s next step in the world's current state. */
export function footprint(w: World, a: number): Footprint {
  const n = w.subs.length;
  if (a < n) return submitterFootprint(w, w.subs[a] as Submitter);
  if (a === n) return CHIP_STEP;
  return IRQ[w.irq.pc] ?? NONE;
}

/** Two steps commute and neither disables the other: neither writes what the other touches. */
export function independent(x: Footprint, y: Footprint): boolean {
  return (x.writes & y.reads) === 0 && (y.writes & x.reads) === 0;
}
