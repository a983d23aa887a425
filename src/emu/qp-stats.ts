// The emulator's debugfs `qp_stats` lines, written from qp_iter_print's format string (hfi1 qp.c, the current upstream
// form; the Cornelis hfi2 prints the same line) in its own code, shared with no reader:
//   N %d %s QP %x R %u %s %u %u f=%x %u %u %u %u %u %u SPSN %x %x %x %x %x RPSN %x S(%u %u %u %u %u %u %u)
//   R(%u %u %u) RQP %x LID %x SL %u MTU %u %u %u %u %u SDE %p,%u SC %p,%u SCQ %u %u PID %d OS %x %x E %x %x %x
//   RNR %d %s %d
// Fields a waiter monitor reads come from the model; the others are what an idle RC QP of a healthy host shows.
import type { QpType } from '../progress/kernel-names.js';

/** The fields of one line that come from the model (the others are constants of an idle RC QP). */
export interface QpLineFields {
  qpn: number;
  type: QpType;
  /** qp->state (enum ib_qp_state) and the QP's reference count. */
  state: number;
  refcount: number;
  /** iter->n, the iterator slot (2 × ports for the special QPs, then the hash buckets), and qp_idle() (`I`/`B`). */
  slot: number;
  idle: boolean;
  /** qp->s_flags; iowait_sdma_pending and iowait_pio_pending; !list_empty(&priv->s_iowait.list). */
  sFlags: number;
  sdmaPending: number;
  pioPending: number;
  onList: boolean;
  /** The engine qp_to_sdma_engine returns at print time (null: a NULL `%p`, index 0); send_context->sw_index. */
  engine: number | null;
  sendContext: number;
  pid: number;
}

/** `%p` of a kernel pointer since pointer hashing: 16 hex digits, a stable stand-in per object; NULL all zeros. */
export function hashedPointer(object: number | null): string {
  if (object === null) return '0000000000000000';
  return (0x9e3779b1 * (object + 1)).toString(16).slice(-8).padStart(16, '0');
}

/**
 * qp->pmtu, the MTU in bytes qp_iter_print prints: for an RC QP the path MTU it was given (IB_MTU_4096 here) capped by
 * its VL's MTU (mtu_from_qp, qp.c), 4096; a QP never given a path MTU (the special QPs, UD) keeps 0.
 */
export function qpPmtu(type: QpType): number {
  return type === 'RC' || type === 'UC' ? 4096 : 0;
}

/** One line of qp_stats with its newline, in qp_iter_print's field order. */
export function qpStatsLine(q: QpLineFields): string {
  const hex = (n: number) => (n >>> 0).toString(16);
  const fields = [
    `N ${q.slot} ${q.idle ? 'I' : 'B'} QP ${hex(q.qpn)} R ${q.refcount} ${q.type} ${q.state} 0`, // wqe opcode
    `f=${hex(q.sFlags)} ${q.sdmaPending} ${q.pioPending} ${q.onList ? 1 : 0} 14 0 0`, // timeout, ssn, s_lsn
    'SPSN 0 0 0 0 0 RPSN 0', // s_last_psn, s_psn, s_next_psn, s_sending_psn, s_sending_hpsn; r_psn
    'S(0 0 0 0 0 257 256) R(0 0 16)', // s_last … s_avail; the ack queue and rvt_max_atomic
    `RQP 0 LID 0 SL 0 MTU ${qpPmtu(q.type)} 7 7 7 7`, // remote QP, DLID, SL; qp->pmtu, retries
    `SDE ${hashedPointer(q.engine)},${q.engine ?? 0}`,
    `SC ${hashedPointer(1000 + q.sendContext)},${q.sendContext} SCQ 0 0 PID ${q.pid}`,
    'OS 0 0 E 0 0 0 RNR 0 RQ 257', // s_state, s_ack_state; the ack entry; r_min_rnr_timer, the receive queue
  ];
  return `${fields.join(' ')}\n`;
}
