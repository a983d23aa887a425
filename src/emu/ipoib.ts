// Accelerated IPoIB (v5.9+): the transmit queue's sleep callback hfi1_ipoib_sdma_sleep (ipoib_tx.c) and the
// netdev the queues send on. A queue that finds the ring short parks the txreq on its own list (not the iowait's
// work list, so sdma_desc_avail sees a need of 0 for it, as for a PSM queue), stops its netdev subqueue once and
// sleeps on dmawait with no timeout, like a QP; its wake-up restarts the subqueue. Once the netdev is
// unregistered the callback answers -EINVAL and the caller drops the txreq.
import type { Engine } from './engine.js';
import { type IoWait, progress, sleepOnDmawait, takeWaitlock } from './iowait.js';
import { EAGAIN, EBUSY, EINVAL, type EmuTx } from './tx.js';

/**
 * The IPoIB netdev of port `port` of unit `unit`: ipoib registers one per port, `ib%d` in the order the ports come
 * (ipoib_add_one), so `ib<unit × ports + port − 1>` on a host of like adapters. The emulated queues all send on port 1.
 */
export function emuNetdev(unit: number, port = 1, ports = 1): string {
  return `ib${unit * ports + port - 1}`;
}

/**
 * hfi1_ipoib_sdma_sleep (ipoib_tx.c), inside sdma_check_progress with tail_lock held: under the wait lock, if the
 * netdev is registered, -EAGAIN when sdma_progress finds room; else park `tx` on the queue's list, and if the
 * queue's iowait is on no list stop the subqueue (once), count n_dmawait and queue it: -EBUSY. If the netdev is not
 * registered: -EINVAL.
 */
export function ipoibSdmaSleep(e: Engine, w: IoWait, tx: EmuTx, seq: number, pktsSent: boolean): number {
  takeWaitlock(e);
  if (!e.host.netdevRegistered) {
    takeWaitlock(e);
    return EINVAL;
  }
  if (progress(e, seq, tx)) {
    takeWaitlock(e);
    return EAGAIN;
  }
  w.client?.park?.(tx);
  if (w.queuedOn === null) {
    w.client?.stopSubqueue?.();
    sleepOnDmawait(e, w, tx, pktsSent);
  }
  takeWaitlock(e);
  return EBUSY;
}
