// One line of debugfs `qp_stats` (qp_iter_print, hfi1 qp.c), in any of its formats: anchored on labels, not on
// positions. The head up to the counters after `f=` and the tail from `SDE` on are read field by field; the
// PSN/ring-pointer middle, which no waiter rule uses, is only checked for its character set.

import type { QpType } from '../../progress/kernel-names.js';
import { QP_STATE_NAMES, type QpStateName } from '../../progress/waiters.js';
import { isHexDigit, LineCursor, LineFail, SP } from './line-cursor.js';
import { NO_FLAGS, type SFlagsDecoded, type SFlagsLayout } from './s-flags.js';
import type { FormatFamily } from './s-flags-layout.js';
import { escapeControls } from './text.js';

export type { QpType };

export { QP_STATE_NAMES, type QpStateName };

/** The fields of one line, before the file's layout is applied. */
export interface QpStatsLine {
  format: FormatFamily;
  /** N: the iterator slot (qp_iter_print): specials first (even QP0, odd QP1), then hash buckets; not unique. */
  slot: number;
  /** qp_idle: I when the send queue holds no un-acked or unsent WQE, B otherwise. */
  idle: boolean;
  qpn: number;
  /** R: the QP's reference count (one more while it sits on a wait list: iowait_sleep takes a reference). */
  refcount: number;
  type: QpType;
  /** qp->state (enum ib_qp_state) and its name; null for a value outside the enum. */
  state: number;
  stateName: QpStateName | null;
  /** f=: qp->s_flags as printed (decode it with the file's layout). */
  sFlags: number;
  /** pf=: priv->s_iowait.flags (IOWAIT_PENDING_IB 0x1, IOWAIT_PENDING_TID 0x2); IFS formats only. */
  iowaitFlags: number | null;
  /** iowait_sdma_pending: this QP's txreqs submitted to an engine and not yet completed. */
  sdmaPending: number;
  /** iowait_pio_pending: PIO sends not yet credit-returned; null in the staging format, which lacks it. */
  pioPending: number | null;
  /** !list_empty(&priv->s_iowait.list): the QP's iowait is on some wait list (s_flags says which). */
  onList: boolean;
  /** IFS only: !list_empty of the IB work's tx_head (iowait_sleep parks the failed txreq there). */
  ibTxQueued: boolean | null;
  /** SDE %p,%u: the engine index qp_to_sdma_engine gives at print time; null when the pointer is NULL. */
  engine: number | null;
  /** The engine pointer as printed (a per-boot hash, a raw address, or null for NULL). */
  enginePtr: string | null;
  /** SC %p,%u: the PIO send context's sw_index; null when NULL or absent (staging format). */
  sendContext: number | null;
  /** PID: qp->pid, the creating thread (0 for kernel QPs); null in the staging format. */
  pid: number | null;
  /** Labelled fields after the last known one (a newer driver), as printed; null when there are none. */
  extra: string | null;
  /** Line number (1-based). */
  line: number;
  /** The file's s_flags layout, and s_flags decoded in it (set once the file's layout is decided). */
  layout: SFlagsLayout;
  flags: SFlagsDecoded;
}

// Characters the middle (PSN, ring pointers, RQP, LID, SL, MTU, …) may hold: digits, letters, parentheses, space.
const MIDDLE_OK: Uint8Array = (() => {
  const t = new Uint8Array(256);
  for (let c = 48; c <= 57; c++) t[c] = 1;
  for (let c = 65; c <= 90; c++) t[c] = 1;
  for (let c = 97; c <= 122; c++) t[c] = 1;
  for (const c of '() -') t[c.charCodeAt(0)] = 1;
  return t;
})();
const EXTRA_FIELDS = /^(?: [A-Za-z][A-Za-z0-9_()]{0,15}(?: [^ ]{1,40}){1,8}){1,16}$/;

/** Reads one line of `qp_stats` between `p` and `end` (the newline); every method throws LineFail. */
export class QpLineScanner extends LineCursor {
  /** The QP type at p (qp_type_str), as a constant, or null. */
  private qpType(): QpType | null {
    const s = this.s;
    const p = this.p;
    if (s.startsWith('RC', p)) return 'RC';
    if (s.startsWith('UD', p)) return 'UD';
    if (s.startsWith('UC', p)) return 'UC';
    if (s.startsWith('SMI', p)) return 'SMI';
    if (s.startsWith('GSI', p)) return 'GSI';
    return null;
  }

  /** Parse the line from `start` to `end` (exclusive of the newline). */
  line(start: number, end: number): QpStatsLine {
    this.p = start;
    this.end = end;
    const s = this.s;
    this.lit('N ', "expected 'N ' (a qp_stats line starts with the iterator slot)");
    const slot = this.dec('N (the iterator slot)', 0x7fff_ffff);
    this.lit(' ');
    const ib = s.charCodeAt(this.p);
    if ((ib !== 73 && ib !== 66) || this.p >= end) throw new LineFail(this.p, 'expected I (idle) or B (busy)');
    this.p++;
    this.lit(' QP');
    const decimalQpn = this.isDigit();
    if (!decimalQpn) this.lit(' ', "expected ' ' and the QPN in hex, or the QPN in decimal (QP%u)");
    const qpn = decimalQpn ? this.dec('the QPN', 0xffffff) : this.hex('the QPN', 6);
    this.lit(' R ');
    const refcount = this.dec('R (the reference count)');
    this.lit(' ');
    const typeAt = this.p;
    let te = typeAt;
    for (let c = s.charCodeAt(te); c >= 65 && c <= 90 && te < end; c = s.charCodeAt(++te));
    const type = this.qpType();
    if (type === null || te - typeAt !== type.length) {
      // The whole token as printed (to the next space, at most 40 characters, controls escaped), so what was wrong shows.
      const space = s.indexOf(' ', typeAt);
      const tokenEnd = Math.min(space < 0 || space > end ? end : space, typeAt + 40);
      const token = escapeControls(s.slice(typeAt, tokenEnd));
      throw new LineFail(typeAt, `unknown QP type '${token}' (qp_type_str prints SMI, GSI, RC, UC or UD)`);
    }
    this.p = te;
    // Decimals before f= (or W): state and opcode, with s_hdrwords in the older formats.
    let pre = 0;
    let state = 0;
    while (s.charCodeAt(this.p) === SP && this.p < end) {
      this.p++;
      if (!this.isDigit()) break;
      const v = this.dec('a field before f=');
      if (pre++ === 0) state = v;
    }
    let ifs = false;
    if (s.startsWith('W ', this.p)) {
      ifs = true;
      this.p += 2;
      this.hex('W opcode');
      this.lit(' ');
      this.dec('W ssn');
      this.lit(' ');
      this.hex('W psn');
      this.lit(' ');
      this.hex('W lpsn');
      this.lit(' ');
    }
    this.lit('f=', "expected 'f=' (s_flags) after the state fields");
    const sFlags = this.hex('f= (s_flags)');
    let iowaitFlags: number | null = null;
    if (s.startsWith(' pf=', this.p)) {
      this.p += 4;
      iowaitFlags = this.hex('pf= (the iowait flags)', 16);
    }
    const countersAt = this.p + 1;
    let counters = 0;
    let c0 = 0;
    let c1 = 0;
    let c2 = 0;
    let c3 = 0;
    while (s.charCodeAt(this.p) === SP && this.p < end) {
      this.p++;
      if (!this.isDigit()) {
        this.p--;
        break;
      }
      const v = this.dec('a counter after f=');
      if (counters === 0) c0 = v;
      else if (counters === 1) c1 = v;
      else if (counters === 2) c2 = v;
      else if (counters === 3) c3 = v;
      counters++;
    }
    const format = this.family(decimalQpn, pre, ifs, iowaitFlags !== null, counters, countersAt);
    const twoCounters = format === 'staging';
    const sdmaPending = c0;
    const pioPending = twoCounters ? null : c1;
    const onListValue = twoCounters ? c1 : c2;
    if (onListValue > 1) throw new LineFail(countersAt, 'the on-list counter after f= must be 0 or 1');
    const ibTx = ifs ? c3 : null;
    if (ibTx !== null && ibTx > 1) throw new LineFail(countersAt, 'the IB tx_head counter after f= must be 0 or 1');
    // The middle (PSN, ring pointers, RQP, LID, SL, MTU) up to ' SDE ': checked for its character set only.
    let i = this.p;
    for (; i < end; i++) {
      const c = s.charCodeAt(i);
      if (c === 83 /* S */ && s.charCodeAt(i - 1) === SP && s.startsWith('SDE ', i)) break;
      if (MIDDLE_OK[c] !== 1) break;
    }
    if (i >= end || !s.startsWith(' SDE ', i - 1)) {
      const sde = s.indexOf(' SDE ', this.p);
      if (sde === -1 || sde > end) throw new LineFail(this.p, "expected ' SDE ' (the engine) later on the line");
      throw new LineFail(i, 'unexpected character between the counters and SDE');
    }
    this.p = i + 4;
    const engine = this.ptrIndex('SDE');
    const enginePtr = this.ptr;
    const rec: QpStatsLine = {
      format,
      slot,
      idle: ib === 73,
      qpn,
      refcount,
      type,
      state,
      stateName: QP_STATE_NAMES[state] ?? null,
      sFlags,
      iowaitFlags,
      sdmaPending,
      pioPending,
      onList: onListValue === 1,
      ibTxQueued: ibTx === null ? null : ibTx === 1,
      engine,
      enginePtr,
      sendContext: null,
      pid: null,
      extra: null,
      line: 0,
      layout: 'C',
      flags: NO_FLAGS,
    };
    if (format !== 'staging') this.tail(rec);
    if (this.p !== end) {
      const rest = s.slice(this.p, end);
      if (!EXTRA_FIELDS.test(rest))
        throw new LineFail(
          this.p,
          "unexpected text after the last known field: a newer driver's fields would read ' LABEL value'",
        );
      rec.extra = rest.slice(1);
    }
    return rec;
  }

  /** SC, SCQ and PID (every format after staging), then the optional OS, E, RNR and RCD groups in order. */
  private tail(rec: QpStatsLine): void {
    this.lit(' SC ', "expected ' SC ' (the send context) after SDE");
    rec.sendContext = this.ptrIndex('SC');
    this.lit(' SCQ ', "expected ' SCQ ' (the send CQ head and tail)");
    this.dec('SCQ head');
    this.lit(' ');
    this.dec('SCQ tail');
    this.lit(' PID ', "expected ' PID '");
    rec.pid = this.signed('PID');
    const s = this.s;
    if (s.startsWith(' OS ', this.p)) {
      this.p += 4;
      this.hex('OS s_state');
      this.lit(' ');
      this.hex('OS s_ack_state');
    }
    if (s.startsWith(' E ', this.p)) {
      this.p += 3;
      this.hex('E opcode');
      this.lit(' ');
      this.hex('E psn');
      this.lit(' ');
      this.hex('E lpsn');
    }
    if (s.startsWith(' RNR ', this.p)) {
      this.p += 5;
      this.signed('RNR timer');
      if (s.startsWith(' SRQ ', this.p)) this.p += 5;
      else this.lit(' RQ ', "expected ' SRQ ' or ' RQ ' after the RNR timer");
      this.signed('the RQ size');
    }
    if (s.startsWith(' RCD ', this.p)) {
      this.p += 5;
      this.dec('RCD (the receive context)');
      if (s.charCodeAt(this.p) === SP && this.p + 1 < this.end && isHexDigit(s.charCodeAt(this.p + 1))) {
        this.p++;
        this.hex('RCD field');
        this.lit(' ');
        this.hex('RCD field');
      }
    }
  }

  /** The format family from the shape of the head (qp_iter_print of each era); throws when no format has it. */
  private family(decimalQpn: boolean, pre: number, ifs: boolean, pf: boolean, counters: number, at: number): FormatFamily {
    if (decimalQpn) {
      if (pre === 3 && !ifs && !pf && counters === 5) return 'staging';
      throw new LineFail(
        at,
        `QP%u (decimal QPN, the staging format) needs 3 fields before f= and 5 after, got ${pre} and ${counters}`,
      );
    }
    if (ifs) {
      if (!pf) throw new LineFail(at, "the IFS format ('W …') has pf= after f=");
      if (counters !== 9) throw new LineFail(at, `the IFS format has 9 counters after pf=, got ${counters}`);
      if (pre === 1) return 'ifs';
      if (pre === 2) return 'ifs-hdrwords';
      throw new LineFail(at, `the IFS format has 1 or 2 fields before W, got ${pre}`);
    }
    if (pf) throw new LineFail(at, "pf= appears only in the IFS format, which has 'W …' before f=");
    if (counters !== 6)
      throw new LineFail(
        at,
        `expected 6 counters after f= (sdma pending, pio pending, on list, timeout, ssn, lsn), got ${counters}`,
      );
    if (pre === 2) return 'current';
    if (pre === 3) return 'hdrwords';
    throw new LineFail(at, `expected 2 or 3 fields between the QP type and f=, got ${pre}`);
  }
}
