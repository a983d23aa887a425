// Workload senders: a verbs QP submitting one txreq at a time with sdma_send_txreq and the
// iowait_sleep callback, a PSM packet queue submitting batches of up to 8 with
// sdma_send_txlist and defer_packet_queue, whose writer waits at most 1000 ms (sdma_send_txreq, sdma.c; iowait_sleep, qp.c; defer_packet_queue, user_sdma.c; user_sdma.c),
// or an accelerated-IPoIB transmit queue submitting one txreq at a time with hfi1_ipoib_sdma_sleep (ipoib_tx.c; ipoib-queue.ts).
import { buildTx, isTxFailure, type TxOptions, type TxReq } from '../progress/txreq.js';
import { doubleFields } from './double-fields.js';
import type { Engine } from './engine.js';
import { Ev, type Host } from './host.js';
import { IoWait, iowaitUnlink, SleepKind, type WaitClient } from './iowait.js';
import { IpoibState } from './ipoib-queue.js';
import { LogKind } from './log.js';
import { BULKSVC_MIN_BYTES } from './params.js';
import { TrafficMeter } from './port-counters.js';
import type { Sfc32 } from './prng.js';
import { jkrLayout } from './ring-layout.js';
import { EBUSY, ECOMM, EmuTx, type TxOwner, TxPhase } from './tx.js';
import type { SenderSpec } from './workload.js';

const PSM_BATCH = 8; // user_sdma.c: up to 8 packets per pass
const PSM_WAIT_NS = 1_000_000_000; // user_sdma.c SDMA_IOWAIT_TIMEOUT
const WAKE_LATENCY_NS = 2_000; // wakeup → the send engine runs again
const COMPLETION_LATENCY_NS = 1_000;
const ECOMM_BACKOFF_NS = 50_000;
const RUN_BUDGET = 64; // packets per run before yielding to other events
const BULK_AHEAD_NS = 100_000; // the bulk service takes a sender's packets this far ahead of their link time
const BULK_RETRY_NS = 1_000_000; // a bulk sender whose port has no credits tries again after this long
/**
 * Packets in a sender's pattern: the sizes and gaps it draws from its seed once and then replays, as a traffic
 * generator replays a capture. A pattern lasts exactly the time its mean packet takes at the sender's offered load,
 * so the senders of one engine (which share a load) repeat together and a steady engine settles into a cycle the
 * fast model can skip (fast-forward.ts).
 */
export const PATTERN_PACKETS = 64;

/**
 * Who a sender is when a seed names it (a capture's QP, PSM writer or IPoIB queue, seed.ts): its QPN and state, its
 * process, command and user, its netdev queue. What is absent is the emulator's own numbering (waiters.ts).
 */
export interface SenderIdentity {
  readonly qpn?: number;
  readonly qpState?: 'RESET' | 'INIT' | 'RTR' | 'RTS' | 'SQD' | 'SQE' | 'ERR';
  /** The process: a PSM writer's, or the one that created the QP. */
  readonly pid?: number;
  readonly command?: string;
  readonly user?: string;
  readonly txq?: number;
}

/** The txreq builder's device settings: the idle timeout, and on cornelis/hfi2 pad_sdma_desc and sdma_align. */
export function txOptions(host: Host): TxOptions {
  const f = host.cfg.flavour;
  const idleTimeout = host.cfg.idleCntNs !== 0;
  if (f.driver === 'upstream') return { idleTimeout };
  return { idleTimeout, driver: f.driver, padSdmaDesc: f.settings.padSdmaDesc, sdmaAlign: f.settings.sdmaAlign };
}

/** One sender bound to one engine. */
export class Sender implements WaitClient, TxOwner {
  readonly wait: IoWait;
  outstanding = 0;
  asleep = false;
  /** The QP may send (iowait_sleep drops the txreq when it may not, the sleep callbacks: iowait_sleep, qp.c; defer_packet_queue, user_sdma.c). */
  sendable = true;
  aborted = 0;
  /** Its job has ended: it submits nothing more (fault `lost-wakeup` ends the other senders of its engine). */
  stopped = false;
  /** Submit without pacing or window until the ring is short (fault `lost-wakeup` fills the ring this way). */
  burst = false;
  /** Woken from dmawait and not yet run: it will take the room it was woken for. */
  wokenPending = false;
  /** Its place among the unit's PSM writers (its command is mpi_rank_<rank>). */
  rank = 0;
  /** Who it is, when a seed names it; null: the emulator's numbering. */
  identity: SenderIdentity | null = null;
  /** A seed made it, asleep (seed.ts): not one of the workload's. */
  seeded = false;
  /** An IPoIB queue's list, subqueue, netdev queue index and counts; null for QPs and PSM writers. */
  readonly ipoib: IpoibState | null;
  runScheduled = false;
  /** The scheduler handle of the pending run (valid while runScheduled). */
  private runEvent = -1;
  nextSendNs = 0;
  readonly gapPerByteNs: number;
  private readonly free: EmuTx[] = [];
  readonly batch: EmuTx[] = [];
  private readonly count = { value: 0 };
  token = 0;
  /** The scheduler handle of the pending PSM wait timeout, or −1. */
  timeoutEvent = -1;
  /** Where the sender is in its pattern (the next packet's index). */
  patternAt = 0;
  /** The largest slip of its pattern (0 until drawn, or for a greedy sender). */
  private maxSlip = 0;
  /** The pattern's own period in packets (it may repeat within PATTERN_PACKETS: every packet alike, say). */
  private patternPeriod = PATTERN_PACKETS;
  /** The pattern: size steps, the gap before the next packet and how far pacing may slip (ns), once drawn. */
  private pattern: { steps: Int32Array; gapNs: Float64Array; slipNs: Float64Array } | null = null;
  /** When the bulk service has sent this sender's packets so far (ns of link time). */
  bulkFreeNs = 0;
  /** A bulk packet held back while its port has no credits. */
  bulkHeld: EmuTx | null = null;
  private readonly nsPerByte: number;
  /** What the bulk service has sent of this sender's packets (port-counters.ts). */
  readonly bulkTraffic: TrafficMeter;
  /** Templates by size step, (bytes − sizeLo) / step, shared with the unit's senders of the same packets. */
  private readonly templates: (TxReq | undefined)[];
  /** The unit-wide number of its template family (EmuTx.template). */
  private readonly family: number;
  /** Their words in the JKR layout, made once (a JKR chip only). */
  private readonly chipWords: (Uint32Array | null)[];

  constructor(
    private readonly host: Host,
    readonly id: number,
    readonly spec: SenderSpec,
    readonly engine: Engine,
    private readonly rng: Sfc32,
  ) {
    const kind = spec.kind === 'qp' ? SleepKind.qp : spec.kind === 'psm' ? SleepKind.psm : SleepKind.ipoib;
    this.wait = new IoWait(id, kind, this);
    this.ipoib = spec.kind === 'ipoib' ? new IpoibState() : null;
    const bytesPerSec = host.cfg.chip.bytesPerSec;
    this.gapPerByteNs = spec.load > 0 && Number.isFinite(spec.load) ? 1e9 / bytesPerSec / spec.load : 0;
    this.nsPerByte = 1e9 / bytesPerSec;
    this.bulkTraffic = new TrafficMeter();
    const key = `${spec.header}/${spec.frag}/${spec.sizeLo}/${spec.step}`;
    let shared = host.templates.get(key);
    if (shared === undefined) {
      shared = { reqs: [], chipWords: [], family: host.templates.size };
      host.templates.set(key, shared);
    }
    this.templates = shared.reqs;
    this.family = shared.family;
    this.chipWords = shared.chipWords;
    doubleFields(this, 'runEvent', 'timeoutEvent', 'nextSendNs', 'bulkFreeNs');
  }

  /** Begin sending at `atNs`. */
  start(atNs: number): void {
    if (this.spec.load <= 0) return;
    this.nextSendNs = atNs;
    this.schedule(atNs - this.host.sched.nowNs);
  }

  private schedule(delayNs: number): void {
    if (this.runScheduled) return;
    this.runScheduled = true;
    this.runEvent = this.host.sched.after(delayNs, Ev.senderRun, this.id, 0, this.engine.pos);
  }

  /** A txreq built with src/progress/txreq.ts for a payload of `bytes` (cached per size). */
  private template(k: number, bytes: number): TxReq {
    let t = this.templates[k];
    if (!t) {
      const fragments: { kind: 'single' | 'page'; len: number }[] = [{ kind: 'single', len: this.spec.header }];
      for (let left = bytes; left > 0; left -= this.spec.frag)
        fragments.push({ kind: 'page', len: Math.min(left, this.spec.frag) });
      const built = buildTx({
        tlen: this.spec.header + bytes,
        fragments,
        options: txOptions(this.host),
      });
      if (isTxFailure(built)) throw new Error(`workload packet of ${bytes} bytes: ${built.message}`);
      t = built;
      this.templates[k] = t;
      this.chipWords[k] = this.host.cfg.jkr ? jkrLayout(t.words, t.numDesc) : null;
    }
    return t;
  }

  /**
   * The sender's pattern, drawn once: PATTERN_PACKETS sizes uniform over the workload's range, in pairs that mirror
   * each other about the middle of the range (so the pattern's mean size is the range's, and its bytes the offered
   * load's exactly), in a random order; and, for a paced sender, gaps of the packet's time at the offered load times
   * a uniform factor in [0.5, 1.5), scaled so the pattern lasts exactly its bytes at that load (whole ns, the
   * rounding carried along).
   */
  private drawPattern(): { steps: Int32Array; gapNs: Float64Array; slipNs: Float64Array } {
    const s = this.spec;
    const steps = Math.floor((s.sizeHi - s.sizeLo) / s.step);
    const n = PATTERN_PACKETS;
    const p = { steps: new Int32Array(n), gapNs: new Float64Array(n), slipNs: new Float64Array(n) };
    if (steps > 0) {
      for (let i = 0; i < n; i += 2) {
        const k = this.rng.int(0, steps);
        p.steps[i] = k;
        p.steps[i + 1] = steps - k;
      }
      for (let i = n - 1; i > 0; i--) {
        const j = this.rng.int(0, i);
        const t = p.steps[i] as number;
        p.steps[i] = p.steps[j] as number;
        p.steps[j] = t;
      }
    }
    const raw = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const k = p.steps[i] as number;
      const len = this.template(k, s.sizeLo + s.step * k).packetLen;
      p.slipNs[i] = Math.round(len * this.gapPerByteNs);
      raw[i] = this.gapPerByteNs > 0 ? len * this.gapPerByteNs * (0.5 + this.rng.unit()) : 0;
      sum += raw[i] as number;
    }
    if (sum > 0) {
      const meanLen = this.template(0, s.sizeLo).packetLen + (s.step * steps) / 2;
      const total = Math.round(n * meanLen * this.gapPerByteNs);
      let cum = 0;
      let before = 0;
      for (let i = 0; i < n; i++) {
        cum += raw[i] as number;
        const upTo = Math.round((total * cum) / sum);
        p.gapNs[i] = upTo - before;
        before = upTo;
      }
    }
    return p;
  }

  /** Where the sender is in its pattern, up to the pattern's own period (two places a period apart send alike). */
  patternPhase(): number {
    return this.patternAt % this.patternPeriod;
  }

  /** Whether the pattern has been drawn (the first packet draws it). */
  patternDrawn(): boolean {
    return this.pattern !== null;
  }

  /** The largest slip of the pattern (ns): a next-send time further behind now than this behaves as this. */
  maxSlipNs(): number {
    return this.maxSlip;
  }

  /** The state of the sender's generator (the fast model compares it). */
  rngState(): [number, number, number, number] {
    return this.rng.state();
  }

  /** A new txreq from the sender's pool, the next of its pattern (and the pacing moved on). */
  newTx(): EmuTx {
    let p = this.pattern;
    if (p === null) {
      p = this.drawPattern();
      this.pattern = p;
      if (this.gapPerByteNs > 0) for (const v of p.slipNs) this.maxSlip = Math.max(this.maxSlip, v);
      this.patternPeriod = patternPeriod(p);
    }
    const i = this.patternAt;
    this.patternAt = i + 1 === PATTERN_PACKETS ? 0 : i + 1;
    const k = p.steps[i] as number;
    const s = this.spec;
    const tx = (this.free.pop() ?? new EmuTx(this)).load(this.template(k, s.sizeLo + s.step * k), this.chipWords[k] ?? null);
    tx.template = this.family * 65_536 + k;
    if (this.gapPerByteNs > 0) {
      this.nextSendNs = Math.max(this.nextSendNs, this.host.sched.nowNs - (p.slipNs[i] as number)) + (p.gapNs[i] as number);
    }
    return tx;
  }

  /** The send engine: submit until the window is full, the ring is short, or the budget is spent. */
  run(): void {
    this.runScheduled = false;
    this.wokenPending = false;
    if (this.asleep || this.stopped) return;
    const q = this.ipoib;
    if (q !== null && !this.host.netdevRegistered) {
      q.unregistered(this);
      return;
    }
    const now = this.host.sched.nowNs;
    const window = this.burst ? Number.POSITIVE_INFINITY : this.spec.window;
    let sent = 0;
    let pktsSent = false;
    while (this.outstanding < window) {
      if (sent >= RUN_BUDGET) {
        this.schedule(0);
        return;
      }
      if (this.nextSendNs > now && !this.burst) {
        this.schedule(this.nextSendNs - now);
        return;
      }
      if (q !== null) {
        // A sender with no load of its own (a waiter a seed named) sends what it holds and nothing more.
        if (this.spec.load <= 0 && q.list.length === 0) return;
        const ret = q.send(this);
        if (ret === 0) {
          sent++;
          continue;
        }
        if (ret === ECOMM) this.schedule(ECOMM_BACKOFF_NS);
        else if (ret === EBUSY) {
          this.asleep = this.wait.queuedOn !== null;
          if (this.asleep) this.burst = false;
          else this.schedule(WAKE_LATENCY_NS);
        }
        return; // -EINVAL: the netdev is unregistered, the txreq dropped and the queue done
      }
      if (this.spec.kind === 'qp') {
        const held = this.bulkHeld;
        this.bulkHeld = null;
        const parked = held === null ? this.wait.txHead.shift() : undefined;
        if (held === null && parked === undefined && this.spec.load <= 0) return;
        const tx = held ?? parked ?? this.newTx();
        if (parked === undefined && this.host.bulkService && tx.packetLen > BULKSVC_MIN_BYTES) {
          if (!this.sendBulk(tx, now)) return;
          sent++;
          continue;
        }
        const ret = this.engine.sendTxreq(this.wait, tx, pktsSent);
        if (ret === 0 && tx.phase === TxPhase.ring) {
          this.outstanding++;
          sent++;
          pktsSent = true;
        } else if (ret === 0) {
          this.engine.stats.dropped++;
          this.engine.stats.failedPlacements++;
          this.free.push(tx);
        } else if (ret === ECOMM) {
          this.outstanding++;
          this.schedule(ECOMM_BACKOFF_NS);
          return;
        } else {
          if (ret === EBUSY) this.engine.stats.failedPlacements++;
          this.asleep = this.wait.queuedOn !== null;
          if (!this.asleep) this.schedule(WAKE_LATENCY_NS);
          return;
        }
      } else {
        // While filling the ring for fault `lost-wakeup`, one packet per request: the one that does not fit is first.
        const perPass = this.burst ? 1 : PSM_BATCH;
        while (this.batch.length < perPass && this.outstanding + this.batch.length < window && this.spec.load > 0) {
          this.batch.push(this.newTx());
        }
        if (this.batch.length === 0) return;
        const ret = this.engine.sendTxlist(this.wait, this.batch, this.count);
        this.outstanding += this.count.value;
        sent += this.count.value;
        if (ret === ECOMM) {
          this.schedule(ECOMM_BACKOFF_NS);
          return;
        }
        if (ret === EBUSY) {
          this.engine.stats.failedPlacements++;
          this.asleep = this.wait.queuedOn !== null;
          if (this.asleep) {
            this.timeoutEvent = this.host.sched.after(PSM_WAIT_NS, Ev.senderTimeout, this.id, ++this.token, this.engine.pos);
          } else this.schedule(WAKE_LATENCY_NS);
          return;
        }
        if (ret !== 0) return;
      }
    }
    // Window full: the RC receive path of a QP sees an ACK for a request whose completion is
    // pending and asks for a progress interrupt (sdma_engine_progress_schedule, sdma.h).
    if (this.spec.kind === 'qp' && this.engine.progressSchedule()) {
      this.host.log.write(this.host.sched.nowNs, LogKind.progressForced, this.engine.idx, this.id, 0, 0);
    }
  }

  /**
   * Fault `netdev-unregister`, for an IPoIB queue: the stack hands it no more packets. An awake queue makes one last
   * attempt now with the packet already in its hands; an asleep one drops its parked txreqs when it is next woken.
   */
  netdevUnregistered(): void {
    if (this.ipoib === null || this.stopped || this.spec.load <= 0) return;
    if (this.asleep) return;
    this.ipoib.inHand = this.host.ports.some((p) => p.used && p.state !== 'INIT');
    // Now, not at a run already scheduled later: a queue whose packets got ahead of its pacing (they sat in a full
    // ring) may not be due to send for tens of ms, and the driver does not wait for the stack's pace to stop it.
    const sched = this.host.sched;
    if (this.runScheduled && sched.timeOf(this.runEvent) > sched.nowNs && sched.cancel(this.runEvent)) this.runScheduled = false;
    this.schedule(0);
  }

  /**
   * A QP packet the bulk service carries off SDMA (`--param use_bulksvc=Y`): it leaves the port at the sender's share
   * of the link, and no engine sees it. False (and the sender scheduled again) while the bulk service is a link time
   * ahead, or the port has no credits.
   */
  private sendBulk(tx: EmuTx, now: number): boolean {
    const port = this.engine.chip.txPort;
    if (port !== null && !port.counters.credits) {
      this.bulkHeld = tx;
      this.schedule(BULK_RETRY_NS);
      return false;
    }
    this.bulkTraffic.start(now, this.bulkFreeNs >= now);
    this.bulkFreeNs = Math.max(this.bulkFreeNs, now) + Math.round(tx.packetLen * this.nsPerByte);
    if (port !== null) this.bulkTraffic.sent(port.counters, tx.packetLen, 1, now);
    this.free.push(tx);
    if (this.bulkFreeNs - now > BULK_AHEAD_NS) {
      this.schedule(this.bulkFreeNs - now - BULK_AHEAD_NS);
      return false;
    }
    return true;
  }

  /**
   * A copy of the sender's own state (its fields, its lists, its generator, its waiter and IPoIB queue), to put back
   * with restore(): the fast model's snapshots (snapshot.ts). Its requests' own fields are copied by the caller.
   */
  save(): SenderCopy {
    const w = this.wait;
    const q = this.ipoib;
    return {
      self: { ...this },
      free: this.free.slice(),
      batch: this.batch.slice(),
      count: this.count.value,
      rng: { ...this.rng },
      bulk: { ...this.bulkTraffic },
      wait: { ...w },
      waitTx: w.txHead.slice(),
      ipoib: q === null ? null : { ...q },
      ipoibList: q === null ? [] : q.list.slice(),
    };
  }

  /** Put back what save() copied. */
  restore(c: SenderCopy): void {
    Object.assign(this, c.self);
    refill(this.free, c.free);
    refill(this.batch, c.batch);
    this.count.value = c.count;
    Object.assign(this.rng, c.rng);
    Object.assign(this.bulkTraffic, c.bulk);
    Object.assign(this.wait, c.wait);
    refill(this.wait.txHead, c.waitTx);
    if (this.ipoib !== null && c.ipoib !== null) {
      Object.assign(this.ipoib, c.ipoib);
      refill(this.ipoib.list, c.ipoibList);
    }
  }

  /** The requests the sender holds outside the ring and its pool: its batch, its waiter's list, its bulk packet, its IPoIB list. */
  heldTxs(out: EmuTx[]): void {
    out.push(...this.batch, ...this.wait.txHead);
    if (this.bulkHeld !== null) out.push(this.bulkHeld);
    if (this.ipoib !== null) out.push(...this.ipoib.list);
  }

  /** Its scheduler handles given new numbers (a restored snapshot's events were scheduled again). */
  renameEvents(rename: (handle: number) => number): void {
    this.runEvent = rename(this.runEvent);
    this.timeoutEvent = rename(this.timeoutEvent);
  }

  /** The PSM writer's timed wait ran out (user_sdma.c): leave dmawait and carry on. */
  timeout(token: number): void {
    if (token !== this.token || !this.asleep) return;
    this.timeoutEvent = -1;
    iowaitUnlink(this.wait);
    this.wait.deferred = false;
    this.asleep = false;
    this.host.log.write(this.host.sched.nowNs, LogKind.waitTimeout, this.engine.idx, this.id, 0, 0);
    this.schedule(0);
  }

  /** Take back a txreq that will not be submitted again (an IPoIB queue's drop). */
  release(tx: EmuTx): void {
    this.free.push(tx);
  }

  complete(tx: EmuTx, status: number): void {
    this.outstanding--;
    if (status !== 0) this.aborted++;
    this.free.push(tx);
    if (!this.asleep) this.schedule(COMPLETION_LATENCY_NS);
  }

  wakeup(_w: IoWait, _flushed: boolean): void {
    this.asleep = false;
    this.wokenPending = true;
    this.token++;
    if (this.timeoutEvent >= 0) {
      this.host.sched.cancel(this.timeoutEvent);
      this.timeoutEvent = -1;
    }
    this.schedule(WAKE_LATENCY_NS);
  }

  canSend(): boolean {
    return this.sendable;
  }

  park(tx: EmuTx): void {
    this.ipoib?.park(tx);
  }

  stopSubqueue(): void {
    this.ipoib?.stopSubqueue(this);
  }
}

/** The smallest number of packets after which a pattern repeats itself (a divisor of PATTERN_PACKETS). */
function patternPeriod(p: { steps: Int32Array; gapNs: Float64Array; slipNs: Float64Array }): number {
  for (let d = 1; d < PATTERN_PACKETS; d *= 2) {
    let same = true;
    for (let i = d; i < PATTERN_PACKETS && same; i++) {
      same = p.steps[i] === p.steps[i - d] && p.gapNs[i] === p.gapNs[i - d] && p.slipNs[i] === p.slipNs[i - d];
    }
    if (same) return d;
  }
  return PATTERN_PACKETS;
}

/** What Sender.save() copies. */
export interface SenderCopy {
  readonly self: object;
  readonly free: EmuTx[];
  readonly batch: EmuTx[];
  readonly count: number;
  readonly rng: object;
  readonly bulk: object;
  readonly wait: object;
  readonly waitTx: EmuTx[];
  readonly ipoib: object | null;
  readonly ipoibList: EmuTx[];
}

/** `to` made to hold what `from` holds. */
export function refill<T>(to: T[], from: readonly T[]): void {
  to.length = 0;
  for (const x of from) to.push(x);
}
