// struct iowait and the sleep callbacks (iowait_sleep, qp.c; defer_packet_queue, user_sdma.c) that call sdma_progress, with the queue
// discipline of iowait_queue and the harvest key of sdma_desc_avail (sdma_desc_avail, sdma.c).
import { SDMA_TXREQ_F_VIP } from '../progress/constants.js';
import { sdmaProgress, seqChanged } from '../progress/seq.js';
import { doubleFields } from './double-fields.js';
import type { Engine } from './engine.js';
import { LogKind } from './log.js';
import { EAGAIN, EBUSY, type EmuTx } from './tx.js';

/** Which sleep callback an iowait uses (the sleep callbacks: iowait_sleep, qp.c; defer_packet_queue, user_sdma.c). */
export const SleepKind = {
  /** verbs QP: iowait_sleep (qp.c). */
  qp: 0,
  /** PSM packet queue: defer_packet_queue (user_sdma.c), the post-2019 order. */
  psm: 1,
  /** No sleep callback: sdma_check_progress returns -EBUSY (sdma_check_progress, sdma.c step 3). */
  none: 2,
  /** Accelerated-IPoIB transmit queue (v5.9+): hfi1_ipoib_sdma_sleep (ipoib_tx.c). */
  ipoib: 3,
} as const;

/** The owner of an iowait: what its wakeup does, and whether a QP may still send. */
export interface WaitClient {
  /** Wake action (sdma_desc_avail, sdma.c): reschedule the sender. `flushed` is true when sdma_flush woke it. */
  wakeup(w: IoWait, flushed: boolean): void;
  /** The QP may still send (iowait_sleep checks this under s_lock). */
  canSend(): boolean;
  /** IPoIB queue: put `tx` on the queue's own list unless it is on it already (hfi1_ipoib_sdma_sleep, ipoib_tx.c). */
  park?(tx: EmuTx): void;
  /** IPoIB queue: stop its netdev subqueue unless it is stopped already (hfi1_ipoib_sdma_sleep, ipoib_tx.c). */
  stopSubqueue?(): void;
}

/** One waiter on an engine's dmawait list. */
export class IoWait {
  priority = 0;
  starvedCnt = 0;
  /** The engine whose dmawait holds this iowait, or null. */
  queuedOn: Engine | null = null;
  /** The IB work list: txreqs parked by iowait_sleep (the sleep callbacks: iowait_sleep, qp.c; defer_packet_queue, user_sdma.c), first one sizes the harvest (sdma_desc_avail, sdma.c). */
  readonly txHead: EmuTx[] = [];
  /** Outstanding txreqs (sdma_send_txreq, sdma.c; complete_tx, sdma.c). */
  sdmaBusy = 0;
  txCount = 0;
  count = 0;
  /** QP ACK-pending flags (0–2): init_priority adds one per flag (sdma_desc_avail, sdma.c). */
  ackPending = 0;
  /** n_dmawait: times this QP went to sleep on dmawait. */
  nDmawait = 0;
  /** PSM packet-queue state: true while DEFERRED. */
  deferred = false;
  /** Already counted as a lost wake-up by the unit's check. */
  lostReported = false;
  /** Fault `ipoib-timeout`: its wake-up is lost from now on (sdma_desc_avail passes it over, as one without a wakeup). */
  stuck = false;
  /** Virtual time (ns) it was last queued on dmawait. */
  sleptAtNs = 0;
  /** Descriptors of the request that did not fit when it last went to sleep (its num_desc, as iowait_get_desc counts). */
  needDesc = 0;

  constructor(
    readonly id: number,
    readonly sleepKind: number,
    readonly client: WaitClient | null,
  ) {
    doubleFields(this, 'sleptAtNs');
  }

  /** The iowait has a wakeup callback (sdma_desc_avail skips those without, sdma_desc_avail, sdma.c). */
  get hasWakeup(): boolean {
    return this.client !== null;
  }
}

/** iowait_queue (sdma_desc_avail, sdma.c): starvation count, then head of the list for priority or no packets sent. */
export function iowaitQueue(pktsSent: boolean, w: IoWait, e: Engine): void {
  w.starvedCnt = pktsSent ? 0 : (w.starvedCnt + 1) & 0xff;
  if (w.priority > 0 || !pktsSent) e.dmawait.unshift(w);
  else e.dmawait.push(w);
  w.queuedOn = e;
  w.sleptAtNs = e.host.sched.nowNs;
}

/** Priority as the sleep callbacks compute it: the QP's init_priority (+1 per ACK-pending flag). */
export function computePriority(w: IoWait): void {
  w.priority = w.sleepKind === SleepKind.qp ? w.ackPending : 0;
}

/**
 * The harvest need of sdma_desc_avail (sdma.c): re-prioritise, then the first txreq's num_desc on the work list
 * (iowait_get_all_desc, iowait.h: num_desc without num_pad on every build; a VIP txreq adds 1 to the priority). The
 * TID work list is not modelled (always empty).
 */
export function harvestNeed(w: IoWait): number {
  w.priority = 0;
  computePriority(w);
  const first = w.txHead[0];
  if (!first) return 0;
  if (first.flags & SDMA_TXREQ_F_VIP) w.priority += 1;
  return first.numDesc;
}

/** Enter or leave a waitlock write section (struct sdma_engine locks, sdma.h): the sequence is odd while it is held. */
export function takeWaitlock(e: Engine): void {
  e.waitSeq = (e.waitSeq + 1) >>> 0;
}

/** sdma_progress with its desc_avail side effect (sdma_progress, sdma.h). */
export function progress(e: Engine, seq: number, tx: EmuTx): boolean {
  if (seqChanged(e.headSeq, seq)) e.descAvail = e.freecnt();
  return sdmaProgress(e, seq, tx.slots) === 1;
}

/** iowait_sleep (the sleep callbacks: iowait_sleep, qp.c; defer_packet_queue, user_sdma.c; qp.c): -EAGAIN, -EBUSY, or 0 when the QP cannot send (tx dropped). */
export function iowaitSleep(e: Engine, w: IoWait, tx: EmuTx, seq: number, pktsSent: boolean): number {
  if (w.client && !w.client.canSend()) return 0;
  w.txHead.push(tx);
  takeWaitlock(e);
  if (progress(e, seq, tx)) {
    takeWaitlock(e);
    w.txHead.pop();
    return EAGAIN;
  }
  if (w.queuedOn === null) sleepOnDmawait(e, w, tx, pktsSent);
  takeWaitlock(e);
  return EBUSY;
}

/**
 * What every sleep callback does when its waiter is on no list yet (iowait_sleep, qp.c; defer_packet_queue,
 * user_sdma.c; hfi1_ipoib_sdma_sleep, ipoib_tx.c): note the descriptors it needs, set its priority and queue it on
 * the engine's dmawait. QPs and IPoIB queues also count the sleep (n_dmawait); a PSM queue does not.
 */
export function sleepOnDmawait(e: Engine, w: IoWait, tx: EmuTx, pktsSent: boolean, countSleep = true): void {
  if (countSleep) {
    w.nDmawait++;
    // ibp->rvp.n_dmawait of the port the engine transmits on: the port counter DmaWait (chip.c SW_IBP_CNTR).
    const port = e.chip.txPort ?? e.host.ports[0];
    if (port) port.counters.dmaWait++;
    e.dmaWaitCount++;
  }
  w.needDesc = tx.numDesc;
  computePriority(w);
  iowaitQueue(pktsSent, w, e);
  e.host.log.write(e.host.sched.nowNs, LogKind.sleep, e.idx, w.id, tx.numDesc, EBUSY);
}

/** defer_packet_queue (the sleep callbacks: iowait_sleep, qp.c; defer_packet_queue, user_sdma.c; user_sdma.c), progress checked inside the wait lock. */
export function deferPacketQueue(e: Engine, w: IoWait, tx: EmuTx, seq: number, pktsSent: boolean): number {
  takeWaitlock(e);
  if (progress(e, seq, tx)) {
    takeWaitlock(e);
    return EAGAIN;
  }
  w.deferred = true;
  if (w.queuedOn === null) sleepOnDmawait(e, w, tx, pktsSent, false);
  takeWaitlock(e);
  return EBUSY;
}

/** Remove an iowait from its dmawait list (the PSM writer's timed-out wait, user_sdma.c). */
export function iowaitUnlink(w: IoWait): void {
  const e = w.queuedOn;
  if (!e) return;
  takeWaitlock(e);
  const i = e.dmawait.indexOf(w);
  if (i >= 0) e.dmawait.splice(i, 1);
  w.queuedOn = null;
  takeWaitlock(e);
}
