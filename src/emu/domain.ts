// One engine's domain as the fast model sees it: the engine, its chip, its senders with their iowaits, and its
// pending events. Nothing outside the domain reads or writes it between the unit's own events, so when its state at
// two instants is the same seen from the engine's own frame (ring positions from its head, times from the instant,
// counters aside), everything between the two repeats from then on, shifted by the period, and can be skipped.
//
// capture() writes that state as two lists: `key`, everything relative (equal at two instants the engine repeats
// between), and `counters`, the free-running counts (their change over one period is what each period adds).
// translate() moves the domain on by k periods: counters by k times their change, times by k periods, the requests
// in flight to their new ring slots, their descriptor words written again from their txreq records (as submit_tx
// writes them), and the pending events later by k periods; the port counters and the event log get what the
// skipped periods added (the log's digest in closed form).
import { STATE_NAMES } from '../progress/state.js';
import { doubleFields } from './double-fields.js';
import {
  type Engine,
  SKEW_FIRST,
  SKEW_LAST_BY_AVAIL,
  SKEW_LOG,
  SKEW_NEXT_SHIFT,
  SKEW_PADDED,
  SKEW_REFRESHED,
  SKEW_WORDS,
} from './engine.js';
import { Ev } from './host.js';
import { carryStream, copyStream, copyStreamInto, type StreamCopy } from './log.js';
import { lostWakeupArmed } from './lost-wakeup.js';
import { STREAMING_NS, type TrafficMeter } from './port-counters.js';
import { writeTxAt } from './ring-layout.js';
import { EventList } from './scheduler.js';
import type { Sender } from './sender.js';
import { type DomainSnapshot, takeSnapshot } from './snapshot.js';
import { HALT_WAIT_LIMIT_NS } from './statemachine.js';
import type { EmuTx } from './tx.js';
import type { EmuUnit } from './unit.js';

/** One engine's domain at an instant (capture()). */
export interface DomainCapture {
  atNs: number;
  /** The state seen from the engine's frame: equal at two instants between which the domain repeats. */
  key: number[];
  /** The free-running counters, in the order translate() applies them. */
  counters: number[];
  /** The engine's event-log stream at the instant. */
  stream: StreamCopy;
  /**
   * desc_avail, kept out of the key: the cache is refreshed whenever it runs short, and while every refresh finds
   * room (no sdma_check_progress call went further: `deepChecks` the same at both ends), its value decides when the
   * next refresh comes and, in a padded sdma_send_txlist, which requests take the batch's pads. Two instants that
   * differ only in it repeat all the same for as many periods as every such decision comes out as it did
   * (availRun() replays them placement by placement from the engine's skew log), and translate() carries it over.
   */
  descAvail: number;
  deepChecks: number;
  /** Placements recorded in the engine's skew log up to the instant. */
  skewCount: number;
  /** Times a later state with the same cheap hash did not match it (fast-forward.ts replaces it now and then). */
  misses: number;
  /** Virtual ns the fast model had skipped of the engine when the state was taken (what its caller says). */
  skippedBefore: number;
  /** The domain's objects as they were when the state was taken, to put back (snapshot.ts), or null. */
  snap: DomainSnapshot | null;
  /**
   * The engine has been put to a point within a period since the state was taken (fast-forward.ts landInPart): the
   * placements logged since are not those of whole periods, so a repeat from it is taken only with desc_avail alike
   * (availRun() replays a period from the log).
   */
  jumpedOver: boolean;
}

/** An instant of the domain and its counters (capture()'s order): what shift() moves it by the difference of. */
export interface Moment {
  readonly atNs: number;
  readonly counters: readonly number[];
}

/** Counters that must not move over a period for it to be skipped (they touch what the unit shares). */
const GUARDED = ['errCnt', 'genMismatches', 'violations', 'kernelLog', 'printTag', 'unitViolations', 'unitLost'] as const;

/**
 * `v` as V8's small integer when it is one. The counters a capture holds come back from double arrays as heap numbers,
 * even when whole and small: added to a field that holds small integers, they would make the engine's, chip's or
 * sender's field a double field, a new map for every such object, and every function optimised for the old one would
 * be thrown away mid-run (a command's first skips recompiled the model's hot paths: a fifth of its CPU).
 */
function smallInt(v: number): number {
  const i = v | 0;
  return i === v ? i : v;
}

/** A time relative to `now`, no earlier than `floor` before it (older values all behave alike). */
function clampRel(t: number, now: number, floor: number): number {
  return Math.max(t - now, -floor);
}

/** Identities of the objects a key names (a txreq's template, a waiter, a sender, a port) as small numbers. */
export class Ids {
  private readonly map = new Map<object, number>();
  of(o: object | null | undefined): number {
    if (o === null || o === undefined) return -1;
    let i = this.map.get(o);
    if (i === undefined) {
      i = this.map.size;
      this.map.set(o, i);
    }
    return i;
  }
}

/** A growable list of numbers, reused from one scan to the next. */
class Buf {
  a = new Float64Array(512);
  n = 0;
  /** A key the values pushed are compared with as they come (scan() stops at the first that differs), or null. */
  against: readonly number[] | null = null;
  differs = false;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    const x = this.against;
    if (x !== null && x[this.n] !== v) this.differs = true;
    this.a[this.n++] = v;
  }
  bool(v: boolean): void {
    this.push(v ? 1 : 0);
  }
  /** The values as a plain array (kept by the fast model: V8 makes one on its heap far sooner than a typed array). */
  copy(): number[] {
    const n = this.n;
    const a = this.a;
    const x = new Array<number>(n);
    for (let i = 0; i < n; i++) x[i] = a[i] as number;
    return x;
  }
  /** The values in `x` when it has their number (its storage reused), else a copy. */
  copyInto(x: number[]): number[] {
    const n = this.n;
    if (x.length !== n) return this.copy();
    const a = this.a;
    for (let i = 0; i < n; i++) x[i] = a[i] as number;
    return x;
  }
  equals(x: readonly number[]): boolean {
    const n = this.n;
    if (x.length !== n) return false;
    const a = this.a;
    for (let i = 0; i < n; i++) if (a[i] !== x[i]) return false;
    return true;
  }
}

/** The domain of one engine: what capture() and translate() walk. */
export class Domain {
  /** The last scan: the key and the counters (see DomainCapture). */
  private readonly key = new Buf();
  private readonly ctr = new Buf();
  private readonly events = new EventList();
  private scannedAt = 0;
  /**
   * Whether the cheap hash holds desc_avail: set once a repeat was refused because the engine's placements depend
   * on it (availRun found no period to skip), so that states are then matched with their desc_avail alike.
   */
  availKeyed = false;
  // The run of equal requests being written (scan()).
  private run = 0;
  private r0 = 0;
  private r1 = 0;
  private r2 = 0;
  private r3 = 0;
  private r4 = 0;
  private r5 = 0;

  constructor(
    readonly u: EmuUnit,
    readonly e: Engine,
    readonly senders: readonly Sender[],
    private readonly ids: Ids,
  ) {
    doubleFields(this, 'scannedAt');
  }

  /** A sender's next send time seen from `now`: every time earlier than its largest slip behaves alike. */
  static nextRel(s: Sender, now: number): number {
    return clampRel(s.nextSendNs, now, s.maxSlipNs());
  }

  /** A cheap hash of the parts of the state that move most: two instants with different hashes cannot repeat. */
  cheapHash(): number {
    const e = this.e;
    const c = e.chip;
    const now = this.u.host.sched.nowNs;
    const mask = e.mask;
    const base = e.descqHead & mask;
    let h = 0x811c9dc5;
    h = Math.imul(h ^ ((e.descqTail - e.descqHead) >>> 0), 0x01000193);
    h = Math.imul(h ^ ((e.txTail - e.txHead) & 0xffff), 0x01000193);
    h = Math.imul(h ^ ((c.hwHead - base) & mask), 0x01000193);
    h = Math.imul(h ^ ((c.hwTail - base) & mask), 0x01000193);
    h = Math.imul(h ^ (c.progressCount + (c.pending << 8) + (c.active ? 1 << 12 : 0) + (c.idleArmed ? 1 << 13 : 0)), 0x01000193);
    if (c.active) h = Math.imul(h ^ ((c.step.endNs - now) | 0), 0x01000193);
    h = Math.imul(h ^ e.dmawait.length, 0x01000193);
    if (e.txHead !== e.txTail) {
      h = Math.imul(h ^ (e.txRing[e.txHead & mask] as EmuTx).template, 0x01000193);
      h = Math.imul(h ^ (e.txRing[(e.txTail - 1) & mask] as EmuTx).template, 0x01000193);
    }
    const senders = this.senders;
    for (let i = 0; i < senders.length; i++) {
      const s = senders[i] as Sender;
      h = Math.imul(h ^ s.outstanding, 0x01000193);
      h = Math.imul(
        h ^ (s.patternPhase() + (s.asleep ? 256 : 0) + (s.wokenPending ? 512 : 0) + (s.runScheduled ? 1024 : 0)),
        0x01000193,
      );
      h = Math.imul(h ^ (Domain.nextRel(s, now) | 0), 0x01000193);
    }
    // 30 bits: a small integer to V8, which a Map hashes and stores without allocating (a uint32 above 2^30 is boxed).
    return this.availKeyed ? Domain.withAvail(h & 0x3fff_ffff, e.descAvail) : h & 0x3fff_ffff;
  }

  /**
   * The cheap hash of a state with desc_avail in it (availKeyed), from the hash without it: a function of the two
   * alone, so that the states kept before desc_avail was keyed can be filed under their new hash (their captures
   * hold their desc_avail).
   */
  static withAvail(h: number, descAvail: number): number {
    // The high bits of a product mix every bit of its factors (the low ones only the low ones: desc_avail moves in
    // steps of the pad, and the watch picks states by their low bits).
    return Math.imul(h ^ Math.imul(descAvail, 0x9e37_79b1), 0x85eb_ca6b) >>> 2;
  }

  /** Whether the last scan() found the domain as `c` was (the same key). */
  scanMatches(c: DomainCapture): boolean {
    return !this.key.differs && this.key.equals(c.key);
  }

  /** The last scan() as a capture to keep, `skippedBefore` ns of the engine skipped by then. */
  captureScanned(skippedBefore = 0): DomainCapture {
    const stream = copyStream(this.u.host.log.stream(this.e.idx));
    return this.recapture(
      {
        atNs: 0,
        key: [],
        counters: [],
        stream,
        descAvail: 0,
        deepChecks: 0,
        skewCount: 0,
        misses: 0,
        skippedBefore: 0,
        snap: null,
        jumpedOver: false,
      },
      skippedBefore,
    );
  }

  /**
   * The last scan() written over `c` (a capture no longer needed, or a new one), its arrays reused where they fit;
   * `skippedBefore` ns of the engine skipped by then.
   */
  recapture(c: DomainCapture, skippedBefore = 0): DomainCapture {
    const e = this.e;
    c.atNs = this.scannedAt;
    c.key = this.key.copyInto(c.key);
    c.counters = this.ctr.copyInto(c.counters);
    copyStreamInto(this.u.host.log.stream(e.idx), c.stream);
    c.descAvail = e.descAvail;
    c.deepChecks = e.deepChecks;
    c.skewCount = e.skewCount;
    c.misses = 0;
    c.skippedBefore = skippedBefore;
    c.snap = null;
    c.jumpedOver = false;
    return c;
  }

  /** The domain's objects at the last scan, to put back later (snapshot.ts). */
  snapshot(): DomainSnapshot {
    return takeSnapshot(this, this.scannedAt, this.ctr.copy());
  }

  /** The domain at `now` (the clock's time, or the instant a skip just moved the domain to); see captureScanned(). */
  capture(now = this.u.host.sched.nowNs, skippedBefore = 0): DomainCapture {
    this.scan(now);
    return this.captureScanned(skippedBefore);
  }

  /** A request as the key writes it: its template (or its words' identity), pads, phase, status, waiter and owner; runs of equal ones once with their count. */
  private tx(t: EmuTx): void {
    const ids = this.ids;
    const v0 = t.template >= 0 ? t.template : -2 - ids.of(t.words);
    const v2 = t.phase * 8 + t.status;
    const v3 = t.wait === null ? -1 : t.wait.client === (t.owner as unknown) ? t.wait.id : -2 - ids.of(t.wait);
    const owner = t.owner as { id?: number } | null;
    const v4 = owner === null ? -1 : (owner.id ?? -2 - ids.of(owner));
    if (
      this.run > 0 &&
      v0 === this.r0 &&
      t.padWritten === this.r1 &&
      v2 === this.r2 &&
      v3 === this.r3 &&
      v4 === this.r4 &&
      t.tlen === this.r5
    ) {
      this.run++;
      return;
    }
    this.endRun();
    this.run = 1;
    this.r0 = v0;
    this.r1 = t.padWritten;
    this.r2 = v2;
    this.r3 = v3;
    this.r4 = v4;
    this.r5 = t.tlen;
  }

  private endRun(): void {
    if (this.run > 0) {
      const k = this.key;
      k.push(this.run);
      k.push(this.r0);
      k.push(this.r1);
      k.push(this.r2);
      k.push(this.r3);
      k.push(this.r4);
      k.push(this.r5);
    }
    this.run = 0;
  }

  private list(l: readonly EmuTx[]): void {
    this.key.push(l.length);
    for (let i = 0; i < l.length; i++) this.tx(l[i] as EmuTx);
    this.endRun();
  }

  private meter(m: TrafficMeter, now: number): void {
    this.key.push(clampRel(m.streamingSinceNs, now, STREAMING_NS));
    this.ctr.push(m.bytes);
    this.ctr.push(m.packets);
    this.ctr.push(m.waits);
  }

  /**
   * Write the domain at `now` into the scan buffers: `key` (relative) and `ctr` (free-running counters). With
   * `against`, stop as soon as the key departs from it: false then (the buffers hold a part only).
   */
  scan(now = this.u.host.sched.nowNs, against: readonly number[] | null = null): boolean {
    const { u, e, ids } = this;
    const c = e.chip;
    const host = u.host;
    const mask = e.mask;
    const H = e.descqHead;
    const base = H & mask;
    const key = this.key;
    const n = this.ctr;
    key.n = 0;
    key.against = against;
    key.differs = false;
    n.n = 0;
    this.run = 0;
    this.scannedAt = now;
    const events = this.events;
    const nEvents = host.sched.eventsInto(e.pos, events);
    // The engine.
    key.push((e.descqTail - H) >>> 0);
    key.push((e.txTail - e.txHead) & 0xffff);
    key.push(e.lastStatus);
    key.push(STATE_NAMES.indexOf(e.state));
    key.push(STATE_NAMES.indexOf(e.previousState));
    key.bool(e.go);
    key.push(e.pSendDmaCtrl);
    key.bool(e.flushQueued);
    key.push(e.cleanPolls);
    // When the halt-wait began is read only by its pending work (statemachine.ts haltWait).
    let haltWaiting = false;
    for (let i = 0; i < nEvents; i++) if (events.kind[i] === Ev.haltWait) haltWaiting = true;
    key.push(haltWaiting ? clampRel(e.haltWaitStartNs, now, HALT_WAIT_LIMIT_NS) : 0);
    key.push(e.harvest.length);
    const rs = e.rng.state();
    for (let i = 0; i < rs.length; i++) key.push(rs[i] as number);
    key.bool(lostWakeupArmed(host, e.idx));
    key.push(e.dmawait.length);
    const dmawait = e.dmawait;
    for (let i = 0; i < dmawait.length; i++) key.push(ids.of(dmawait[i]));
    this.list(e.flushlist);
    if (key.differs) return false;
    // The requests in flight (their slots follow from their sizes and pads, back from descq_tail: translate() checks).
    for (let i = e.txHead; i !== e.txTail; i = (i + 1) & 0xffff) {
      this.tx(e.txRing[i & mask] as EmuTx);
      if (key.differs) return false;
    }
    this.endRun();
    n.push(e.descqHead);
    n.push(e.descqTail);
    n.push(e.txHead);
    n.push(e.txTail);
    n.push(e.descqFullCount);
    n.push(e.headSeq);
    n.push(e.waitSeq);
    n.push(e.sdmaIntCnt);
    n.push(e.progressIntCnt);
    n.push(e.idleIntCnt);
    n.push(e.serial);
    n.push(e.dmaWaitCount);
    n.push(u.vectorCounts[e.pos] ?? 0);
    const st = e.stats;
    n.push(st.txSubmitted);
    n.push(st.txCompleted);
    n.push(st.txAborted);
    n.push(st.descriptors);
    n.push(st.failedPlacements);
    n.push(st.dropped);
    n.push(st.ipoibDropped);
    // The chip.
    key.push(c.ctrl);
    key.bool(c.halted);
    key.bool(c.cleanedUp);
    key.push(c.errStatus);
    key.push((c.hwTail - base) & mask);
    key.push((c.hwHead - base) & mask);
    key.push((c.headDma - base) & mask);
    key.push(c.lenGen);
    key.push(c.reloadCnt);
    key.push(c.descCnt);
    key.push(c.checkSlid);
    key.push(c.memory);
    key.push(c.priorityThld);
    key.push((c.genCount - H) >>> 0);
    key.bool(c.genCheck);
    key.push(c.editRemaining);
    key.push(c.progressCount);
    key.bool(c.active);
    key.bool(c.idleArmed);
    key.push(c.pending);
    key.bool(c.irqScheduled);
    key.bool(c.errIrqScheduled);
    key.bool(c.stopFetch);
    key.bool(c.lostInterrupt);
    key.bool(c.headWritebackStall);
    key.push(c.slow);
    key.bool(c.frozen);
    key.bool(c.paused);
    key.bool(c.haltStuck);
    key.push(ids.of(c.txPort));
    key.bool(c.txPort?.counters.credits ?? false);
    if (c.active) {
      const s = c.step;
      key.push((s.end - base) & mask);
      key.push(s.count);
      key.push((s.gen - H) >>> 0);
      key.push(s.progress);
      key.push(s.edit);
      key.push(s.headDma < 0 ? -1 : (s.headDma - base) & mask);
      key.push(s.bits);
      key.push(s.endNs - now);
      key.push(s.bytes);
      key.push(s.packets);
    }
    this.meter(c.traffic, now);
    if (key.differs) return false;
    n.push(c.descFetched);
    n.push(c.genCount);
    n.push(c.epoch);
    n.push(c.idleEpoch);
    n.push(c.interruptsLost);
    // The senders.
    const senders = this.senders;
    for (let si = 0; si < senders.length; si++) {
      const s = senders[si] as Sender;
      const w = s.wait;
      key.push(s.outstanding);
      key.bool(s.asleep);
      key.bool(s.sendable);
      key.bool(s.stopped);
      key.bool(s.burst);
      key.bool(s.wokenPending);
      key.bool(s.runScheduled);
      key.push(Domain.nextRel(s, now));
      key.push(s.patternPhase());
      key.bool(s.patternDrawn());
      const ss = s.rngState();
      for (let i = 0; i < ss.length; i++) key.push(ss[i] as number);
      this.list(s.batch);
      key.push(Math.max(s.bulkFreeNs - now, 0));
      key.push(s.bulkHeld === null ? -1 : ids.of(s.bulkHeld.words));
      this.meter(s.bulkTraffic, now);
      key.push(w.priority);
      key.push(w.starvedCnt);
      key.bool(w.queuedOn !== null);
      key.push(w.sdmaBusy);
      key.push(w.ackPending);
      key.bool(w.deferred);
      key.bool(w.lostReported);
      key.bool(w.stuck);
      // When it went to sleep is read only while it is on a list (waiters.ts).
      key.push(w.queuedOn !== null ? w.sleptAtNs - now : 0);
      key.push(w.needDesc);
      this.list(w.txHead);
      n.push(s.aborted);
      n.push(s.token);
      n.push(w.txCount);
      n.push(w.count);
      n.push(w.nDmawait);
      const q = s.ipoib;
      if (q !== null) {
        this.list(q.list);
        key.bool(q.subqueueStopped);
        key.push(q.txq);
        key.bool(q.pktsSent);
        key.bool(q.inHand);
        key.push(q.timeouts);
        key.push(q.lastTimeoutNs);
        // The netdev watchdog reads the last transmit and the stop only while the subqueue is stopped (netdev.ts).
        if (q.subqueueStopped) {
          key.push(q.lastXmitNs - now);
          key.push(q.stoppedAtNs - now);
        }
        n.push(q.stops);
        n.push(q.restarts);
        n.push(q.taken);
        n.push(q.placed);
        n.push(q.dropped);
      }
      if (key.differs) return false;
    }
    // The pending events, in the order they will run; epochs and tokens from their owners'.
    for (let i = 0; i < nEvents; i++) {
      const kind = events.kind[i] as number;
      const a = events.a[i] as number;
      const arg = events.b[i] as number;
      let rb = arg;
      if (kind === Ev.chipDone) rb = arg - c.epoch;
      else if (kind === Ev.idleTimer) rb = arg - c.idleEpoch;
      else if (kind === Ev.senderTimeout) rb = arg - (u.senders[a] as Sender).token;
      key.push(kind);
      key.push(a);
      key.push((events.time[i] as number) - now);
      key.push(rb);
    }
    // The guards, last.
    n.push(e.errCnt);
    n.push(st.genMismatches);
    n.push(st.violations.length);
    n.push(host.kernelLogSeq);
    n.push(host.sdmaPrintTag);
    n.push(host.stats.violations.length);
    n.push(host.stats.lostWakeups);
    key.against = null;
    return !key.differs;
  }

  /**
   * Whether the stretch from `a` to `b` may repeat with desc_avail as it is at `b`: the same value at both ends, or
   * one that went no further than refreshes that found room, with every placement of the stretch still logged (then
   * availRun() says for how many periods).
   */
  static availRepeats(a: DomainCapture, b: DomainCapture): boolean {
    if (a.descAvail === b.descAvail) return true;
    return a.deepChecks === b.deepChecks && b.skewCount - a.skewCount <= SKEW_LOG;
  }

  /**
   * How many of `k` more periods like the one from `a` to `b` repeat it with desc_avail carried from its value now,
   * and desc_avail after them: each period is replayed placement by placement from the engine's skew log, as
   * sdma_send_txreq and sdma_send_txlist (engine.ts) decide from desc_avail, and a period repeats only if each
   * decision that can change what is placed (a padded walk's refresh and its test of the next request) comes out as
   * logged. A refresh elsewhere changes nothing but desc_avail.
   */
  availRun(a: DomainCapture, b: DomainCapture, k: number): { periods: number; descAvail: number } {
    if (a.descAvail === b.descAvail) return { periods: k, descAvail: b.descAvail };
    const log = this.e.skewLog as Int32Array;
    const padTo = this.e.padSdmaDesc;
    const from = a.skewCount;
    const n = b.skewCount - from;
    /** desc_avail after one period from `d0`, or −1 when a decision comes out otherwise than logged. */
    const period = (d0: number): number => {
      let d = d0;
      let avail = 0;
      let walking = false;
      for (let j = 0; j < n; j++) {
        const i = ((from + j) & (SKEW_LOG - 1)) * SKEW_WORDS;
        const need = log[i] as number;
        const charge = log[i + 1] as number;
        const flags = log[i + 3] as number;
        if ((flags & SKEW_PADDED) === 0) {
          // sdma_send_txreq, or a walk without pads: a refresh decides nothing placed.
          walking = false;
          if (need > d) d = log[i + 2] as number;
          d = (d - charge) & 0xffff;
          continue;
        }
        if ((flags & SKEW_FIRST) !== 0) {
          avail = d - (d % padTo);
          walking = true;
        } else if (!walking) return -1;
        const refresh = need > avail;
        if (refresh !== ((flags & SKEW_REFRESHED) !== 0)) return -1;
        if (refresh) {
          d = log[i + 2] as number;
          avail = d - (d % padTo);
          if (need > avail) return -1;
        }
        avail -= need;
        const next = flags >>> SKEW_NEXT_SHIFT;
        if (next !== 0 && next - 1 > avail !== ((flags & SKEW_LAST_BY_AVAIL) !== 0)) return -1;
        avail -= charge - need;
        d = (d - charge) & 0xffff;
      }
      return d;
    };
    // The value at the start of each period determines the rest: once one repeats, the values cycle, and every
    // period of the cycle has been found to repeat.
    const seen = new Map<number, number>();
    let d = b.descAvail;
    for (let j = 0; j < k; j++) {
      const first = seen.get(d);
      if (first !== undefined) {
        const cycle = j - first;
        for (let r = (k - j) % cycle; r > 0; r--) d = period(d);
        return { periods: k, descAvail: d };
      }
      seen.set(d, j);
      const next = period(d);
      if (next < 0) return { periods: j, descAvail: d };
      d = next;
    }
    return { periods: k, descAvail: d };
  }

  /**
   * A state `c` kept at an instant φ of the period from `a` to `b` (b now), moved on as translate(a, b, k) moved the
   * domain to `landing`: the state the domain will be in at φ + k periods, one period before it comes back to it (the
   * domain repeats from `a` on, and desc_avail with it: the caller checks that). Its key is the same; its counters are
   * the landing's less what the domain adds from φ to `b`; its event-log stream goes on k periods (log.ts
   * carryStream); its placements and deep checks stay where they were, as the skipped periods log none. A repeat found
   * against it a period later is then skipped at once, wherever the engine is in its period when a sample ends.
   */
  static carry(c: DomainCapture, a: DomainCapture, b: DomainCapture, landing: DomainCapture, k: number, skippedNs: number): void {
    // carryFrom() with the landing at b's own point; a skip of whole periods lands where it left, so the placements
    // logged from `c` on stay whole periods' (or not, as they were).
    const jumped = c.jumpedOver;
    Domain.carryFrom(c, b, landing, 0, [], a, b, k, skippedNs);
    c.jumpedOver = jumped;
  }

  /**
   * A state `c` kept within the period from `a` to `b` (b now) moved on `k` whole periods of it, after a skip that
   * landed within a period (fast-forward.ts landInPart) at `landing`, the state `best` (kept within the same period) j
   * periods on, with j − k = `behind` (0 or −1) more: its counters from the landing's (the landing's as the engine
   * holds them, wrapped at their widths, plus what lies between `best` and `c`, less a period's `delta` when `c` comes
   * after the landing's point), its stream on k periods. A repeat from it is then taken only with desc_avail alike
   * (`jumpedOver`).
   */
  static carryFrom(
    c: DomainCapture,
    best: DomainCapture,
    landing: DomainCapture,
    behind: number,
    delta: readonly number[],
    a: { stream: StreamCopy; atNs: number },
    b: DomainCapture,
    k: number,
    skippedNs: number,
  ): void {
    const n = c.counters;
    for (let i = 0; i < n.length; i++) {
      const back = behind === 0 ? 0 : behind * (delta[i] as number);
      n[i] = (landing.counters[i] as number) + ((n[i] as number) - (best.counters[i] as number)) + back;
    }
    carryStream(a.stream, b.stream, c.stream, k, b.atNs - a.atNs);
    c.atNs += k * (b.atNs - a.atNs);
    c.skippedBefore = skippedNs;
    c.misses = 0;
    c.jumpedOver = true;
  }

  /** Whether the guards (errors, kernel log lines, violations) stayed where they were from `a` to `b`. */
  static quiet(a: DomainCapture, b: DomainCapture): boolean {
    const g = GUARDED.length;
    for (let i = a.counters.length - g; i < a.counters.length; i++) if (a.counters[i] !== b.counters[i]) return false;
    return true;
  }

  /**
   * Move the domain on by `k` periods of what went from `a` to `b` (b now, the same key as a): `b` becomes the domain
   * k periods later. The caller has checked the keys and the guards.
   */
  translate(a: DomainCapture, b: DomainCapture, k: number, descAvail: number): void {
    this.shift(a, b, k, descAvail);
    // The log: the skipped periods' records digested, one `repeat` record kept.
    this.u.host.log.repeat(this.e.idx, a.stream, k, b.atNs - a.atNs, this.u.host.sched.nowNs);
  }

  /**
   * translate() but for the event log: the domain moved on by `k` times what went from `a` to `b` (its counters by k
   * times their change, its times and pending events by k times b − a), desc_avail set to `descAvail`. A restored
   * snapshot (snapshot.ts) is moved on so, from the instant it was taken to where it lands, as one "period".
   */
  shift(a: Moment, b: Moment, k: number, descAvail: number): void {
    const { u, e } = this;
    const c = e.chip;
    const host = u.host;
    const sched = host.sched;
    const mask = e.mask;
    const periodNs = b.atNs - a.atNs;
    const shiftNs = k * periodNs;
    const dn = b.counters.map((v, i) => smallInt(k * (v - (a.counters[i] as number))));
    let i = 0;
    const next = (): number => dn[i++] as number;
    const u32 = (v: number, d: number): number => (v + (d % 4_294_967_296)) >>> 0;
    const meter = (m: TrafficMeter): [number, number, number] => {
      m.streamingSinceNs += shiftNs;
      const add: [number, number, number] = [next(), next(), next()];
      m.bytes += add[0];
      m.packets += add[1];
      m.waits += add[2];
      return add;
    };
    // The engine: its counters, then the requests in flight moved to their slots k periods on.
    const dHead = next();
    const dTail = next();
    const dTxHead = next();
    const dTxTail = next();
    const shiftSlots = dHead % 4_294_967_296;
    const inFlight: EmuTx[] = [];
    for (let j = e.txHead; j !== e.txTail; j = (j + 1) & 0xffff) {
      inFlight.push(e.txRing[j & mask] as EmuTx);
      e.txRing[j & mask] = null;
    }
    e.descqHead = u32(e.descqHead, dHead);
    e.descqTail = u32(e.descqTail, dTail);
    e.txHead = (e.txHead + (dTxHead % 65_536)) & 0xffff;
    e.txTail = (e.txTail + (dTxTail % 65_536)) & 0xffff;
    e.descqFullCount = u32(e.descqFullCount, next());
    e.headSeq = u32(e.headSeq, next());
    e.waitSeq = u32(e.waitSeq, next());
    e.sdmaIntCnt += next();
    e.progressIntCnt += next();
    e.idleIntCnt += next();
    const dSerial = next();
    e.serial += dSerial;
    const dDmaWait = next();
    e.dmaWaitCount += dDmaWait;
    u.vectorCounts[e.pos] = (u.vectorCounts[e.pos] ?? 0) + next();
    const st = e.stats;
    st.txSubmitted += next();
    st.txCompleted += next();
    st.txAborted += next();
    st.descriptors += next();
    st.failedPlacements += next();
    st.dropped += next();
    st.ipoibDropped += next();
    e.haltWaitStartNs += shiftNs;
    for (const t of e.flushlist) t.serial += dSerial;
    inFlight.forEach((t, j) => {
      t.nextDescqIdx = (t.nextDescqIdx + shiftSlots) & mask;
      t.serial += dSerial;
      e.txRing[(e.txHead + j) & mask] = t;
    });
    // Their descriptor words, written again from the tail back as submit_tx wrote them.
    let end = e.descqTail;
    for (let j = inFlight.length - 1; j >= 0; j--) {
      const t = inFlight[j] as EmuTx;
      const start = (end - t.numDesc - (t.numDesc > 1 ? t.padWritten : 0)) >>> 0;
      if (writeTxAt(e, t, t.padWritten, start) !== end || (end & mask) !== t.nextDescqIdx) {
        throw new Error(`fast model: engine ${e.idx}'s ring does not match its txreq records after a skip`);
      }
      end = start;
    }
    // The chip.
    c.hwTail = (c.hwTail + shiftSlots) & mask;
    c.hwHead = (c.hwHead + shiftSlots) & mask;
    c.headDma = (c.headDma + shiftSlots) & mask;
    const [bytes, packets, waits] = meter(c.traffic);
    c.descFetched = u32(c.descFetched, next());
    const dGen = next();
    c.genCount = u32(c.genCount, dGen);
    const dEpoch = next();
    c.epoch += dEpoch;
    const dIdleEpoch = next();
    c.idleEpoch += dIdleEpoch;
    c.interruptsLost += next();
    if (c.active) {
      const s = c.step;
      s.end = (s.end + shiftSlots) & mask;
      s.gen = u32(s.gen, dGen);
      if (s.headDma >= 0) s.headDma = (s.headDma + shiftSlots) & mask;
      s.endNs += shiftNs;
    }
    // The senders.
    let bulkBytes = 0;
    let bulkPackets = 0;
    let bulkWaits = 0;
    const dToken = new Map<number, number>();
    for (const s of this.senders) {
      s.nextSendNs += shiftNs;
      s.bulkFreeNs += shiftNs;
      const [bb, bp, bw] = meter(s.bulkTraffic);
      bulkBytes += bb;
      bulkPackets += bp;
      bulkWaits += bw;
      const w = s.wait;
      if (w.queuedOn !== null) w.sleptAtNs += shiftNs;
      s.aborted += next();
      const dt = next();
      s.token += dt;
      dToken.set(s.id, dt);
      w.txCount += next();
      w.count += next();
      w.nDmawait += next();
      const q = s.ipoib;
      if (q !== null) {
        q.lastXmitNs += shiftNs;
        q.stoppedAtNs += shiftNs;
        q.stops += next();
        q.restarts += next();
        q.taken += next();
        q.placed += next();
        q.dropped += next();
      }
    }
    // What the skipped periods sent on the port, and the sleeps its DmaWait counted.
    const port = c.txPort;
    if (port !== null) {
      const p = port.counters;
      p.xmitBytes += bytes + bulkBytes;
      p.rcvBytes += bytes + bulkBytes;
      p.xmitPackets += packets + bulkPackets;
      p.rcvPackets += packets + bulkPackets;
      p.xmitWait += waits + bulkWaits;
    }
    const dmaPort = c.txPort ?? host.ports[0];
    if (dmaPort) dmaPort.counters.dmaWait += dDmaWait;
    // The pending events, k periods later.
    for (const [handle, t, kind, a, arg] of sched.eventsOf(e.pos)) {
      let nb = arg;
      if (kind === Ev.chipDone) nb = arg + dEpoch;
      else if (kind === Ev.idleTimer) nb = arg + dIdleEpoch;
      else if (kind === Ev.senderTimeout) nb = arg + (dToken.get(a) ?? 0);
      sched.reschedule(handle, t + shiftNs, nb);
    }
    e.descAvail = descAvail;
  }
}
