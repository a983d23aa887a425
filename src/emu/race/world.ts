// The world the explorer steps through: one emulated engine (an EmuUnit of one engine with a small
// ring, brought to s99_Running and its chip paused so that only explicit steps move it), the
// txreqs in flight, and the actors — submitters, the chip, the interrupt handler — with their
// program counters and locals. Starts from a ring short of room, scaled to descq_cnt 64.
import { buildTx, isTxFailure, type TxReq } from '../../progress/txreq.js';
import type { Chip } from '../chip.js';
import type { Engine } from '../engine.js';
import { IoWait, SleepKind } from '../iowait.js';
import { EmuTx, type TxOwner } from '../tx.js';
import { EmuUnit } from '../unit.js';
import type { Variant } from './variants.js';

/** Ring size of the race scenario: small, so that states are cheap (the driver's smallest valid size). */
export const RACE_DESCQ_CNT = 64;
/** Packets in flight at the start: 56 descriptors of 63 usable, free count 7. */
export const RACE_IN_FLIGHT = [8, 16, 32] as const;
/** Descriptors per submitter request: 9 > 7. */
export const RACE_NUM_DESC = 9;

/** Program counter of a submitter. */
export const Pc = {
  /** About to call sdma_send_txreq: take tail_lock, compare desc_avail. */
  start: 0,
  /** -EAGAIN came back: retry under tail_lock (sdma_send_txreq's `goto retry`). */
  retry: 1,
  /** sdma_check_progress step 1: recompute the free count. */
  check: 2,
  /** Sample the head_lock sequence (raw_seqcount_begin). */
  sample: 3,
  /** Take waitlock. */
  lock: 4,
  /** sdma_progress under waitlock. */
  progress: 5,
  /** Enqueue on dmawait (iowait_queue). */
  enqueue: 6,
  /** Release waitlock and tail_lock, -EBUSY, sleep. */
  unlock: 7,
  /** Asleep until sdma_desc_avail wakes it; then sdma_send_txreq again. */
  asleep: 8,
  /** sdma_progress before taking waitlock: the pre-2019 PSM order (defer_packet_queue). */
  progressUnlocked: 9,
  /** The request is in the ring. */
  done: 10,
} as const;

/** Program counter of the interrupt handler (sdma_engine_interrupt, sdma_desc_avail). */
export const IrqPc = {
  /** Not running; runs when an interrupt is pending. */
  idle: 0,
  /** head_lock held: advance descq_head to the hardware head (sdma_make_progress). */
  advance: 1,
  /** sdma_desc_avail: probe/take waitlock, harvest. */
  avail: 2,
  /** Wake the harvested waiters. */
  wake: 3,
  /** Release head_lock. */
  exit: 4,
} as const;

/**
 * The kinds of sender: a verbs QP (sleep callback iowait_sleep, qp.c), a PSM packet queue (defer_packet_queue,
 * user_sdma.c) or an accelerated-IPoIB transmit queue (hfi1_ipoib_sdma_sleep, ipoib_tx.c).
 */
export const SENDER_KINDS = ['qp', 'psm', 'ipoib'] as const;
export type SenderKind = (typeof SENDER_KINDS)[number];

/**
 * One submitter: one request of RACE_NUM_DESC descriptors. A QP parks that txreq on its iowait's
 * work list before it sleeps, so sdma_desc_avail harvests it only when its descriptors fit; a PSM
 * queue parks nothing and an IPoIB queue parks it on the queue's own list, so their harvest need is 0.
 */
export interface Submitter {
  readonly id: number;
  readonly name: string;
  readonly kind: SenderKind;
  readonly tx: EmuTx;
  readonly wait: IoWait;
  pc: number;
  /** The head_lock sample taken at Pc.sample. */
  seq: number;
  /** busycount of the pre-2019 callback. */
  busy: number;
  /** Woken by sdma_desc_avail and not yet run. */
  woken: number;
  /** Running again after a wake-up, before its first free-count check. */
  afterWake: number;
}

/** The interrupt handler's locals. */
export interface Irq {
  pc: number;
  /** Status bits taken at entry (chip.ts INT_*). */
  bits: number;
  /** The free count passed to sdma_desc_avail. */
  avail: number;
  /** Index into e.harvest of the waiter woken first. */
  top: number;
}

/** Everything the explorer steps. Fields outside the Engine/Chip are the actors' own. */
export interface World {
  readonly variant: Variant;
  readonly unit: EmuUnit;
  readonly e: Engine;
  readonly chip: Chip;
  /** Every txreq: the initial ones, then one per submitter (index = tx id). */
  readonly txs: EmuTx[];
  readonly subs: Submitter[];
  readonly irq: Irq;
  /** Interrupt sources raised by the chip and not yet taken by the handler (chip.ts INT_*). */
  pending: number;
  /** Holder of tail_lock / waitlock across steps: a submitter index, or −1 when free. The
   * interrupt handler takes waitlock only inside one step (sdma_desc_avail) and head_lock is its alone. */
  tailHolder: number;
  waitHolder: number;
  /** txRing slot of the first txreq (tx_tail when the scenario began). */
  readonly txBase: number;
}

const SLEEP_KIND: Readonly<Record<SenderKind, number>> = { qp: SleepKind.qp, psm: SleepKind.psm, ipoib: SleepKind.ipoib };

/** A txreq of `numDesc` descriptors: a header and numDesc − 1 payload pieces of 64 bytes. */
export function raceTx(numDesc: number): TxReq {
  const fragments = Array.from({ length: numDesc }, (_, i) => ({
    kind: i === 0 ? ('single' as const) : ('page' as const),
    len: 64,
  }));
  const tx = buildTx({ tlen: 64 * numDesc, fragments });
  if (isTxFailure(tx)) throw new Error(`race txreq of ${numDesc} descriptors: ${tx.message}`);
  return tx;
}

/** Build the scenario: submitters (a count of PSM ones, or their kinds in actor order) facing a ring with free count 7 and three packets in flight. */
export function buildWorld(variant: Variant, submitters: number | readonly SenderKind[]): World {
  const kinds: readonly SenderKind[] =
    typeof submitters === 'number' ? Array.from({ length: submitters }, () => 'psm' as const) : submitters;
  const unit = new EmuUnit({ workload: 'idle', engines: 1, descqCnt: RACE_DESCQ_CNT, seed: 1 });
  unit.runUntilMs(2);
  unit.pause();
  const e = unit.engineAt(0);
  if (!e.running()) throw new Error(`race scenario: engine 0 is ${e.state}, not s99_Running`);
  const owner: TxOwner = { complete: () => {} };
  const txs: EmuTx[] = [];
  const txBase = e.txTail;
  for (const n of RACE_IN_FLIGHT) {
    const tx = new EmuTx(owner, n).load(raceTx(n));
    if (unit.submit(0, tx) !== 0) throw new Error('race scenario: the initial packets did not fit');
    txs.push(tx);
  }
  const irq: Irq = { pc: IrqPc.idle, bits: 0, avail: 0, top: -1 };
  const world: World = {
    variant,
    unit,
    e,
    chip: e.chip,
    txs,
    subs: [],
    irq,
    pending: 0,
    tailHolder: -1,
    waitHolder: -1,
    txBase,
  };
  const req = raceTx(RACE_NUM_DESC);
  kinds.forEach((kind, i) => {
    const tx = new EmuTx(owner, RACE_NUM_DESC).load(req);
    txs.push(tx);
    const s: Submitter = {
      id: i,
      name: `S${i + 1}`,
      kind,
      tx,
      wait: new IoWait(i + 1, SLEEP_KIND[kind], {
        wakeup: () => {
          s.woken = 1;
        },
        canSend: () => true,
      }),
      pc: Pc.start,
      seq: 0,
      busy: 0,
      woken: 0,
      afterWake: 0,
    };
    world.subs.push(s);
  });
  return world;
}
