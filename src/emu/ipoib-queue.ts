// The emulated accelerated-IPoIB transmit queue (ipoib_tx.c, v5.9+): its own list of parked txreqs, its netdev
// subqueue, and what it does once the netdev is unregistered. It submits one txreq at a time with sdma_send_txreq
// (the driver's hfi1_ipoib_send_dma_single; after a wake-up the driver flushes its list with sdma_send_txlist, here
// one request at a time: the list holds at most the one that did not fit).
//
// After `netdev-unregister` the reference says only that the sleep callback answers -EINVAL. Chosen here: the stack
// hands the queue no more packets; a packet already in the queue's hands gets one last attempt (placed if the ring
// has room, else dropped on the callback's -EINVAL), and txreqs parked on the queue's list are dropped on its next
// attempt (when it is next woken) without being submitted. The subqueue is not restarted.
import { LogKind } from './log.js';
import type { Sender } from './sender.js';
import { ECOMM, EINVAL, type EmuTx } from './tx.js';

/** One IPoIB queue's state beside its sender. */
export class IpoibState {
  /** The queue's list: txreqs the sleep callback parked, submitted first when the queue runs again. */
  readonly list: EmuTx[] = [];
  /** Its netdev subqueue is stopped (the sleep callback stops it once; the wake-up restarts it). */
  subqueueStopped = false;
  /** Times the subqueue was stopped and restarted. */
  stops = 0;
  restarts = 0;
  /** Its netdev queue index (the unit's IPoIB queues counted from 0). */
  txq = 0;
  /** txq->pkts_sent: the last submission placed a packet (iowait_queue's starvation rule). */
  pktsSent = false;
  /** Txreqs taken from the stack, placed (ring or flush list) and dropped: taken = placed + dropped + parked. */
  taken = 0;
  placed = 0;
  dropped = 0;
  /** The netdev was unregistered while a packet was in the queue's hands: one last attempt. */
  inHand = false;
  /** When the queue last placed a packet (txq_trans_update: the netdev watchdog's trans_start), and when it stopped (ns). */
  lastXmitNs = 0;
  stoppedAtNs = 0;
  /** Netdev watchdog timeouts of the queue (its `tx_timeout`), and when the last one fired (ns; −1 before any). */
  timeouts = 0;
  lastTimeoutNs = -1;

  /** Put `tx` on the list unless it is on it already (hfi1_ipoib_sdma_sleep, ipoib_tx.c). */
  park(tx: EmuTx): void {
    if (!this.list.includes(tx)) this.list.push(tx);
  }

  /** Stop the netdev subqueue, once (hfi1_ipoib_sdma_sleep, ipoib_tx.c). */
  stopSubqueue(s: Sender): void {
    if (this.subqueueStopped) return;
    this.subqueueStopped = true;
    this.stops++;
    this.stoppedAtNs = s.engine.host.sched.nowNs;
    const host = s.engine.host;
    host.log.write(host.sched.nowNs, LogKind.subqueue, s.engine.idx, s.wait.id, 1, 0);
  }

  private restartSubqueue(s: Sender): void {
    this.subqueueStopped = false;
    this.restarts++;
    const host = s.engine.host;
    host.log.write(host.sched.nowNs, LogKind.subqueue, s.engine.idx, s.wait.id, 0, 0);
  }

  /**
   * One transmit: the parked txreq first, else a new one. Returns sdma_send_txreq's answer: 0 placed, -ECOMM placed
   * on the flush list, -EBUSY parked (asleep when queued on dmawait), -EINVAL dropped (the netdev is unregistered).
   */
  send(s: Sender): number {
    const parked = this.list[0];
    const tx = parked ?? this.take(s);
    const ret = s.engine.sendTxreq(s.wait, tx, this.pktsSent);
    this.pktsSent = ret === 0;
    if (ret === 0 || ret === ECOMM) {
      if (tx === parked) this.list.shift();
      this.placed++;
      this.lastXmitNs = s.engine.host.sched.nowNs;
      s.outstanding++;
      // The wake action: the list is flushed, so the subqueue starts again.
      if (this.list.length === 0 && this.subqueueStopped) this.restartSubqueue(s);
      return ret;
    }
    // descq_full_count counted the -EBUSY and the -EINVAL alike (sdma_send_txreq, sdma.c nodesc).
    s.engine.stats.failedPlacements++;
    if (ret === EINVAL) {
      this.drop(s, tx, 1);
      s.stopped = true;
    }
    return ret;
  }

  /** The netdev is unregistered: drop the parked txreqs, make the last attempt if a packet is in hand, and stop. */
  unregistered(s: Sender): void {
    while (this.list.length > 0) this.drop(s, this.list[0] as EmuTx, 0);
    if (this.inHand) {
      this.inHand = false;
      this.send(s);
    }
    s.stopped = true;
  }

  private take(s: Sender): EmuTx {
    this.taken++;
    return s.newTx();
  }

  private drop(s: Sender, tx: EmuTx, fromCallback: number): void {
    const i = this.list.indexOf(tx);
    if (i >= 0) this.list.splice(i, 1);
    this.dropped++;
    const host = s.engine.host;
    s.engine.stats.ipoibDropped++;
    host.log.write(host.sched.nowNs, LogKind.ipoibDrop, s.engine.idx, s.wait.id, tx.numDesc, fromCallback);
    s.release(tx);
  }
}
