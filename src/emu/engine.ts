// The software side of one engine (struct sdma_engine, struct sdma_engine, sdma.h) and submission: sdma_send_txreq
// (sdma_send_txreq, sdma.c), sdma_send_txlist (sdma_send_txlist, sdma.c), sdma_check_progress (sdma_check_progress, sdma.c) and submit_tx (submit_tx, sdma.c).
import { SDMA_TAIL_UPDATE_THRESH } from '../progress/constants.js';
import { progressScheduleFiresFor } from '../progress/driver.js';
import { freeCount, sdmaShift } from '../progress/ring.js';
import { sampleSeq } from '../progress/seq.js';
import type { StateName } from '../progress/state.js';
import { type Chip, INT_PROGRESS } from './chip.js';
import { doubleFields } from './double-fields.js';
import { EmuStats, Ev, type Host } from './host.js';
import { deferPacketQueue, type IoWait, iowaitSleep, SleepKind } from './iowait.js';
import { ipoibSdmaSleep } from './ipoib.js';
import { LogKind } from './log.js';
import type { Sfc32 } from './prng.js';
import { writeTxAt } from './ring-layout.js';
import { EAGAIN, EBUSY, ECOMM, EINVAL, type EmuTx, TxPhase } from './tx.js';

/** Entries of Engine.skewLog (a power of two). */
export const SKEW_LOG = 1 << 14;
const SKEW_MASK = SKEW_LOG - 1;
/** Words per skew-log entry: the desc_avail threshold, the charge, the free count, the flags (SKEW_*). */
export const SKEW_WORDS = 4;
/** A placement of sdma_send_txlist with pads: its pads and the walk's next steps depend on desc_avail. */
export const SKEW_PADDED = 1;
/** The first placement of its sdma_send_txlist call (the walk's avail is desc_avail rounded down to the pad). */
export const SKEW_FIRST = 2;
/** sdma_check_progress refreshed desc_avail (and the walk started again) before this placement. */
export const SKEW_REFRESHED = 4;
/** The walk's test of the next request against avail found it short: this placement took the batch's pads. */
export const SKEW_LAST_BY_AVAIL = 8;
/** Bits 4 and up: 1 + the next request's num_desc, when that test decided whether this placement was the last. */
export const SKEW_NEXT_SHIFT = 4;

/** One engine's software state. Counters follow the kernel's C types (struct sdma_engine, sdma.h). */
export class Engine {
  readonly descqCnt: number;
  readonly mask: number;
  readonly shift: number;
  /** dd->pad_sdma_desc: the multiple sdma_send_txlist pads a batch to (0 upstream and when off). */
  readonly padSdmaDesc: number;
  descqHead = 0; // u32 free-running
  descqTail = 0; // u32 free-running
  txHead = 0; // u16 free-running
  txTail = 0; // u16 free-running
  descAvail: number; // u16 cache, stale-low (struct sdma_engine, sdma.h)
  descqFullCount = 0;
  /** head_lock sequence: +1 entering and +1 leaving every write section (the head_lock seqlock, sdma.h). */
  headSeq = 0;
  /** waitlock sequence (struct sdma_engine locks, sdma.h). */
  waitSeq = 0;
  /** last_status as a number (the engine's interrupt masks, sdma.c; fit in 48 bits). */
  lastStatus = 0;
  sdmaIntCnt = 0;
  progressIntCnt = 0;
  idleIntCnt = 0;
  errCnt = 0;
  readonly ahgBits = 0xfffffffe00000000n; // struct sdma_engine, sdma.h initial value
  state: StateName = 's00_HwDown';
  previousState: StateName = 's00_HwDown';
  go = false;
  /** p_senddmactrl shadow (the state names, sdma.c). */
  pSendDmaCtrl = 0;
  /** The ring: 4 u32 per descriptor, as the chip reads it from host memory. */
  readonly descq: Uint32Array;
  readonly txRing: (EmuTx | null)[];
  readonly dmawait: IoWait[] = [];
  /** Scratch list of sdma_desc_avail's harvest (sdma_desc_avail, sdma.c). */
  readonly harvest: IoWait[] = [];
  readonly flushlist: EmuTx[] = [];
  /** Set while a flush-worker run is queued. */
  flushQueued = false;
  haltWaitStartNs = 0;
  /** hw clean-up polls so far (the Cornelis hfi1 and hfi2 give up past 100). */
  cleanPolls = 0;
  /** The engine's running totals (the unit's are their sums, EmuUnit.stats()). */
  readonly stats = new EmuStats();
  /** Times a waiter slept on this engine's dmawait counting on its port's DmaWait (sleepOnDmawait, iowait.ts). */
  dmaWaitCount = 0;
  /**
   * For the fast model (fast-forward.ts), while it watches: each placement's desc_avail threshold, charge, the free
   * count before it and how sdma_send_txlist's walk decided it (SKEW_WORDS words each, the last SKEW_LOG entries),
   * and how many were recorded.
   */
  skewLog: Int32Array | null = null;
  skewCount = 0;
  /** sdma_check_progress calls that found the ring short (the only ones in which desc_avail decides more than when it is refreshed). */
  deepChecks = 0;
  /** Submissions so far: the serial number of the last txreq this engine took (EmuTx.serial). */
  serial = 0;
  /** The engine's own generator (the halt-wait worker's poll times): engines draw nothing from each other's. */
  readonly rng: Sfc32;
  chip!: Chip;

  /**
   * `idx` is the absolute hardware index (sdma<idx>, SDE idx, the CSR block); `pos` the place in the unit's
   * window (0 for its first engine), which the VL map and the SDMA memory split use.
   */
  constructor(
    readonly host: Host,
    readonly idx: number,
    readonly cpu: number,
    readonly pos: number = idx,
    rng?: Sfc32,
  ) {
    this.rng = rng ?? host.rng.fork();
    this.descqCnt = host.cfg.descqCnt;
    this.mask = this.descqCnt - 1;
    this.shift = sdmaShift(this.descqCnt);
    const f = host.cfg.flavour;
    this.padSdmaDesc = f.driver === 'upstream' ? 0 : f.settings.padSdmaDesc;
    this.descAvail = this.descqCnt - 1;
    this.descq = new Uint32Array(this.descqCnt * 4);
    this.txRing = new Array<EmuTx | null>(this.descqCnt).fill(null);
    doubleFields(this, 'lastStatus', 'haltWaitStartNs');
  }

  /** The head-lock sequence, as sdma_progress reads it (ProgressState.seq). */
  get seq(): number {
    return this.headSeq;
  }

  /** __sdma_running (sdma_descq_freecnt, sdma.h). */
  running(): boolean {
    return this.state === 's99_Running';
  }

  /** sdma_descq_freecnt (sdma_descq_freecnt, sdma.h). */
  freecnt(): number {
    return freeCount(this.descqCnt, this.descqHead, this.descqTail);
  }

  /**
   * sdma_engine_progress_schedule (sdma_engine_progress_schedule, sdma.h): when in-process ≥ descq_cnt / 8, write the engine's
   * progress mask to CCE_INT_FORCE #3, raising its own progress interrupt. True when it fired.
   */
  progressSchedule(): boolean {
    if (!progressScheduleFiresFor(this.host.cfg.flavour.driver, this.descqCnt, this.descqHead, this.descqTail)) return false;
    this.chip.raise(INT_PROGRESS, true);
    return true;
  }

  /** Enter / leave a head_lock write section. */
  lockHead(): void {
    this.headSeq = (this.headSeq + 1) >>> 0;
  }

  /**
   * _submit_tx (sdma.c): copy the descriptors with their generation, record the txreq, charge desc_avail
   * num_desc + `pad`. On JKR or with pads (the Cornelis hfi1 and hfi2) the ring gets the chip's layout and the pads
   * before the last descriptor (ring-layout.ts).
   */
  submitTx(tx: EmuTx, pad: number, need: number = tx.slots, skew = 0): void {
    let log = this.skewLog;
    if (log !== null) {
      // What the fast model needs to carry desc_avail over a skipped stretch (fast-forward.ts, Domain.availRun).
      const i = (this.skewCount & SKEW_MASK) * SKEW_WORDS;
      if (i === log.length) {
        // Grown as it fills (a short run never zeroes the whole log); only before its first wrap.
        const grown = new Int32Array(Math.min(SKEW_LOG * SKEW_WORDS, 2 * log.length));
        grown.set(log);
        this.skewLog = log = grown;
      }
      log[i] = need;
      log[i + 1] = tx.numDesc + pad;
      log[i + 2] = this.freecnt();
      log[i + 3] = skew;
      this.skewCount++;
    }
    tx.padWritten = pad;
    this.descqTail = writeTxAt(this, tx, pad, this.descqTail);
    this.recordTx(tx, pad);
  }

  /** The end of _submit_tx: the txreq recorded in tx_ring after its last descriptor, desc_avail less num_desc + pad. */
  private recordTx(tx: EmuTx, pad: number): void {
    tx.nextDescqIdx = this.descqTail & this.mask;
    this.txRing[this.txTail & this.mask] = tx;
    this.txTail = (this.txTail + 1) & 0xffff;
    this.descAvail = (this.descAvail - tx.numDesc - pad) & 0xffff;
    tx.phase = TxPhase.ring;
    tx.serial = ++this.serial;
    this.stats.txSubmitted++;
  }

  /** Hand a txreq to the flush list while the engine is not running (sdma_send_txreq, sdma.c noconn). */
  private toFlushList(tx: EmuTx, wait: IoWait | null): void {
    if (wait) {
      wait.txCount++;
      wait.count += tx.numDesc;
    }
    tx.nextDescqIdx = 0;
    tx.phase = TxPhase.flush;
    tx.serial = ++this.serial;
    this.stats.txSubmitted++;
    this.flushlist.push(tx);
    if (!this.flushQueued) {
      this.flushQueued = true;
      this.host.sched.after(3000, Ev.flushWorker, this.idx, 0, this.pos);
    }
  }

  /** sdma_check_progress (sdma_check_progress, sdma.c), called with tail_lock held. */
  checkProgress(wait: IoWait | null, tx: EmuTx, pktsSent: boolean): number {
    if (this.host.cfg.sampleFirst) return this.checkProgressSampleFirst(wait, tx, pktsSent);
    this.descAvail = this.freecnt();
    if (tx.slots <= this.descAvail) return EAGAIN;
    this.deepChecks++;
    if (wait === null || wait.sleepKind === SleepKind.none) return EBUSY;
    this.host.beforeSeqSample?.(this.idx, wait);
    const seq = sampleSeq(this.headSeq);
    this.host.afterSeqSample?.(this.idx);
    const ret = this.sleep(wait, tx, seq, pktsSent);
    if (ret === EAGAIN) this.descAvail = this.freecnt();
    return ret;
  }

  /**
   * sdma_check_progress with the head_lock sequence sampled before the free count is recomputed (the order `emu
   * race` calls kernel-sample-first): a retirement between the two loads then moves the sequence the sleep callback
   * compares with, so sdma_progress sees it. The stall of a `lost-wakeup` fault falls between the two loads here too.
   */
  private checkProgressSampleFirst(wait: IoWait | null, tx: EmuTx, pktsSent: boolean): number {
    if (wait === null || wait.sleepKind === SleepKind.none) {
      this.descAvail = this.freecnt();
      if (tx.slots <= this.descAvail) return EAGAIN;
      this.deepChecks++;
      return EBUSY;
    }
    const seq = sampleSeq(this.headSeq);
    this.host.beforeSeqSample?.(this.idx, wait);
    this.descAvail = this.freecnt();
    if (tx.slots <= this.descAvail) return EAGAIN;
    this.deepChecks++;
    this.host.afterSeqSample?.(this.idx);
    const ret = this.sleep(wait, tx, seq, pktsSent);
    if (ret === EAGAIN) this.descAvail = this.freecnt();
    return ret;
  }

  /** The waiter's sleep callback (iowait_sleep, defer_packet_queue or hfi1_ipoib_sdma_sleep) with the sample `seq`. */
  private sleep(wait: IoWait, tx: EmuTx, seq: number, pktsSent: boolean): number {
    return wait.sleepKind === SleepKind.qp
      ? iowaitSleep(this, wait, tx, seq, pktsSent)
      : wait.sleepKind === SleepKind.ipoib
        ? ipoibSdmaSleep(this, wait, tx, seq, pktsSent)
        : deferPacketQueue(this, wait, tx, seq, pktsSent);
  }

  /**
   * sdma_send_txreq (sdma_send_txreq, sdma.c): 0, -EINVAL (tlen ≠ 0, or an IPoIB queue whose netdev is unregistered),
   * -ECOMM (tx will complete ABORTED), -EBUSY, or 0 (QP dropped).
   */
  sendTxreq(wait: IoWait | null, tx: EmuTx, pktsSent: boolean): number {
    if (tx.tlen !== 0) return EINVAL;
    tx.wait = wait;
    for (;;) {
      if (!this.running()) {
        if (wait) wait.sdmaBusy++;
        this.toFlushList(tx, wait);
        return ECOMM;
      }
      if (tx.slots <= this.descAvail) {
        this.submitTx(tx, tx.numPad);
        if (wait) wait.sdmaBusy++;
        this.chip.writeTail(this.descqTail & this.mask);
        return 0;
      }
      const ret = this.checkProgress(wait, tx, pktsSent);
      if (ret === EAGAIN) continue;
      this.descqFullCount = (this.descqFullCount + 1) >>> 0;
      this.host.log.write(this.host.sched.nowNs, LogKind.descqFull, this.idx, ret, tx.numDesc, 0);
      return ret;
    }
  }

  /**
   * sdma_send_txlist (sdma_send_txlist, sdma.c): submits from the front of `list`, removing what it placed or flushed;
   * what is left stays at the front. `count.value` gets submitted + flushed. With pad_sdma_desc (the Cornelis hfi1 and
   * hfi2) the batch, not each request, is padded: a request is admitted on its num_desc against desc_avail rounded down
   * to the pad, and the last request before each tail update (the end of the list, a next request that would not fit
   * or is incomplete, every 32nd) gets round_up(batch, pad) − batch pads, so every tail update lands on a multiple.
   */
  sendTxlist(wait: IoWait | null, list: EmuTx[], count: { value: number }): number {
    const padTo = this.padSdmaDesc;
    let submitCount = 0;
    let flushCount = 0;
    let ret = 0;
    let i = 0;
    // How the walk decided each placement, for the fast model (Engine.skewLog): the first of the call, and whether
    // desc_avail was refreshed before it.
    let skew = SKEW_PADDED | SKEW_FIRST;
    walk: for (;;) {
      let curDescs = 0;
      let avail = padTo === 0 ? this.descAvail : this.descAvail - (this.descAvail % padTo);
      while (i < list.length) {
        const tx = list[i] as EmuTx;
        if (!this.running()) {
          for (; i < list.length; i++) {
            const t = list[i] as EmuTx;
            t.wait = wait;
            this.toFlushList(t, wait);
            flushCount++;
          }
          ret = ECOMM;
          break walk;
        }
        if (tx.numDesc > avail) {
          const r = this.checkProgress(wait, tx, submitCount > 0);
          if (r === EAGAIN) {
            skew |= SKEW_REFRESHED;
            continue walk;
          }
          this.descqFullCount = (this.descqFullCount + 1) >>> 0;
          this.host.log.write(this.host.sched.nowNs, LogKind.descqFull, this.idx, r, tx.numDesc, 0);
          ret = r;
          break walk;
        }
        if (tx.tlen !== 0) {
          ret = EINVAL;
          break walk;
        }
        tx.wait = wait;
        i++;
        curDescs += tx.numDesc;
        avail -= tx.numDesc;
        let pad = 0;
        if (padTo !== 0) {
          const next = list[i];
          // Whether this is the batch's last request before a tail update; only the test against avail depends on
          // desc_avail (and is logged with the next request's size).
          const byAvail = next !== undefined && next.tlen === 0 && ((submitCount + 1) & SDMA_TAIL_UPDATE_THRESH) !== 0;
          const last = byAvail ? next.numDesc > avail : true;
          if (byAvail) skew |= ((next.numDesc + 1) << SKEW_NEXT_SHIFT) | (last ? SKEW_LAST_BY_AVAIL : 0);
          if (last) {
            pad = Math.ceil(curDescs / padTo) * padTo - curDescs;
            curDescs += pad;
            avail -= pad;
          }
        }
        this.submitTx(tx, pad, tx.numDesc, padTo === 0 ? 0 : skew);
        skew = SKEW_PADDED;
        submitCount++;
        if ((submitCount & SDMA_TAIL_UPDATE_THRESH) === 0) this.chip.writeTail(this.descqTail & this.mask);
      }
      break;
    }
    if (i > 0) {
      for (let k = i; k < list.length; k++) list[k - i] = list[k] as EmuTx;
      list.length -= i;
    }
    if (wait) {
      wait.sdmaBusy += submitCount + flushCount;
      if (submitCount > 0) wait.starvedCnt = 0;
    }
    if ((submitCount & SDMA_TAIL_UPDATE_THRESH) !== 0) this.chip.writeTail(this.descqTail & this.mask);
    count.value = (submitCount + flushCount) & 0xffff;
    return ret;
  }
}
