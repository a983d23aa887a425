// Writes `qp_stats` lines in the current upstream format (qp_iter_print, hfi1 qp.c), as the driver prints them:
// the inverse of parseQpStats for the fields a waiter monitor reads, the rest filled with plausible values.
import type { QpType } from './qp-stats-line.js';

/** The fields of one line that matter; everything else is printed as an idle QP would show it. */
export interface QpLineFields {
  slot: number;
  idle: boolean;
  qpn: number;
  refcount: number;
  type: QpType;
  state: number;
  sFlags: number;
  sdmaPending: number;
  pioPending: number;
  onList: boolean;
  /** The engine index, or null for a NULL engine pointer (SMI QPs). */
  engine: number | null;
  sendContext: number;
  pid: number;
}

/** A stable 16-hex-digit stand-in for a hashed kernel pointer (%p since pointer hashing), distinct per value. */
function ptr(v: number): string {
  return (0x9e3779b1 * (v + 1)).toString(16).slice(-8).padStart(16, '0');
}

/** One line (with its newline) in the current upstream qp_stats format. */
export function qpStatsLine(q: QpLineFields): string {
  const sde = q.engine === null ? '0000000000000000,0' : `${ptr(q.engine)},${q.engine}`;
  return (
    `N ${q.slot} ${q.idle ? 'I' : 'B'} QP ${q.qpn.toString(16)} R ${q.refcount} ${q.type} ${q.state} 0 ` +
    `f=${(q.sFlags >>> 0).toString(16)} ${q.sdmaPending} ${q.pioPending} ${q.onList ? 1 : 0} 14 0 0 ` +
    `SPSN 0 0 0 0 0 RPSN 0 S(0 0 0 0 0 257 256) R(0 0 16) RQP 0 LID 0 SL 0 MTU 5 7 7 7 7 ` +
    `SDE ${sde} SC ${ptr(1000 + q.sendContext)},${q.sendContext} SCQ 0 0 PID ${q.pid} OS 0 0 E 0 0 0 RNR 0 RQ 257\n`
  );
}
