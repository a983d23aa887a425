// The atomic steps of the race: each actor — a submitter, the chip, the interrupt handler — has
// at most one step enabled at a time, and a step that needs a lock another actor holds is not
// enabled. Steps call the emulator's own pieces (src/emu, src/progress) on the world's Engine.
import { sampleSeq, sdmaProgressOutcome } from '../../progress/seq.js';
import { INT_IDLE, INT_PROGRESS, INT_SDMA } from '../chip.js';
import { computePriority, iowaitQueue, takeWaitlock } from '../iowait.js';
import { LogKind } from '../log.js';
import { harvestWaiters, retireToHwHead, statusMask, wakeHarvested } from '../retire.js';
import { EBUSY } from '../tx.js';
import { MAX_DEFER_RETRY_COUNT, samplesFirst, type Variant } from './variants.js';
import { IrqPc, Pc, type SenderKind, type Submitter, type World } from './world.js';

/** Step result bit: a woken submitter found no room (a wasted wake-up). */
export const STEP_WASTED = 1;

/** Actors: submitters 0…n−1, then the chip, then the interrupt handler. */
export function actorCount(w: World): number {
  return w.subs.length + 2;
}

/** The chip's actor index. */
export function chipActor(w: World): number {
  return w.subs.length;
}

/** The interrupt handler's actor index. */
export function irqActor(w: World): number {
  return w.subs.length + 1;
}

/** Name of an actor as the trace prints it. */
export function actorName(w: World, a: number): string {
  return a < w.subs.length ? (w.subs[a] as Submitter).name : a === w.subs.length ? 'chip' : 'irq';
}

/** Whether actor `a` has a step it can take now. */
export function isEnabled(w: World, a: number): boolean {
  const n = w.subs.length;
  if (a < n) {
    const s = w.subs[a] as Submitter;
    switch (s.pc) {
      case Pc.start:
        return w.tailHolder === -1;
      case Pc.asleep:
        return s.woken === 1 && w.tailHolder === -1;
      case Pc.lock:
        return w.waitHolder === -1;
      case Pc.done:
        return false;
      default:
        return true;
    }
  }
  if (a === n) return w.chip.hwHead !== w.chip.hwTail;
  if (w.irq.pc === IrqPc.idle) return w.pending !== 0;
  // sdma_desc_avail's read_seqbegin spins while a writer holds waitlock.
  if (w.irq.pc === IrqPc.avail) return w.waitHolder === -1;
  return true;
}

/** Take actor `a`'s step (it must be enabled). `notes`, when given, receives what the step did. */
export function runStep(w: World, a: number, notes: string[] | null): number {
  const n = w.subs.length;
  if (a < n) return submitterStep(w, w.subs[a] as Submitter, notes);
  if (a === n) chipStep(w, notes);
  else irqStep(w, notes);
  return 0;
}

function submitterStep(w: World, s: Submitter, notes: string[] | null): number {
  const e = w.e;
  const tx = s.tx;
  const need = tx.numDesc;
  switch (s.pc) {
    case Pc.asleep:
    case Pc.start:
    case Pc.retry: {
      // sdma_send_txreq: running, then num_desc against the cached desc_avail.
      const woke = s.pc === Pc.asleep;
      if (woke) {
        s.woken = 0;
        s.afterWake = 1;
        s.wait.txHead.length = 0; // a woken QP takes its parked txreq back (iowait_get_txhead)
      }
      const lead = s.pc === Pc.retry ? 'retry' : `${woke ? 'woken: ' : ''}sdma_send_txreq: take tail_lock`;
      w.tailHolder = s.id;
      if (need <= e.descAvail) {
        const avail = e.descAvail;
        tx.wait = s.wait;
        e.submitTx(tx, tx.numPad); // submit_tx
        s.wait.sdmaBusy++;
        w.chip.writeTail(e.descqTail & e.mask);
        w.tailHolder = -1;
        s.afterWake = 0;
        s.pc = Pc.done;
        notes?.push(
          `${lead}, desc_avail ${avail} ≥ ${need}: submit_tx, SEND_DMA_TAIL ← ${e.descqTail & e.mask}, release tail_lock`,
        );
      } else {
        s.pc = samplesFirst(w.variant) ? Pc.sample : Pc.check;
        notes?.push(`${lead}, desc_avail ${e.descAvail} < ${need}: no room (nodesc)`);
      }
      return 0;
    }
    case Pc.check: {
      // sdma_check_progress, first: refresh desc_avail from the free count.
      e.descAvail = e.freecnt();
      if (need <= e.descAvail) {
        s.afterWake = 0;
        s.pc = Pc.retry;
        notes?.push(`sdma_check_progress: freecnt ${e.descAvail} ≥ ${need} → -EAGAIN`);
        return 0;
      }
      const wasted = s.afterWake;
      s.afterWake = 0;
      s.pc = samplesFirst(w.variant) ? Pc.lock : Pc.sample;
      notes?.push(`sdma_check_progress: freecnt ${e.descAvail} < ${need}${wasted ? ' (woken for nothing)' : ''}`);
      return wasted ? STEP_WASTED : 0;
    }
    case Pc.sample: {
      // raw_seqcount_begin: bit 0 cleared.
      s.seq = sampleSeq(e.headSeq);
      s.pc = samplesFirst(w.variant) ? Pc.check : lockedProgress(w.variant, s) ? Pc.lock : Pc.progressUnlocked;
      notes?.push(
        e.headSeq === s.seq ? `sample head_lock seq = ${s.seq}` : `sample head_lock seq = ${s.seq} (${e.headSeq}, writer inside)`,
      );
      return 0;
    }
    case Pc.lock: {
      // iowait_sleep parks the QP's txreq on its work list (the harvest's need) before it sleeps.
      const park = s.kind === 'qp' && s.wait.txHead.length === 0;
      if (park) s.wait.txHead.push(tx);
      takeWaitlock(e);
      w.waitHolder = s.id;
      s.pc = lockedProgress(w.variant, s) && w.variant !== 'no-progress-check' ? Pc.progress : Pc.enqueue;
      notes?.push(park ? `park txreq on ${s.name}'s work list, take waitlock (write)` : 'take waitlock (write)');
      return 0;
    }
    case Pc.progress:
    case Pc.progressUnlocked: {
      // sdma_progress and its desc_avail refresh.
      const r = sdmaProgressOutcome(e, s.seq, need);
      if (r.descAvail !== null) e.descAvail = r.descAvail;
      const why = r.moved
        ? `seq ${e.headSeq} ≠ ${s.seq}, freecnt ${r.descAvail} ${r.result ? '≥' : '<'} ${need}`
        : `seq ${s.seq} unchanged`;
      const locked = s.pc === Pc.progress;
      const where = locked ? 'sdma_progress' : 'sdma_progress (waitlock not held)';
      if (r.result === 1 && (locked || s.busy < MAX_DEFER_RETRY_COUNT)) {
        if (locked) {
          takeWaitlock(e);
          w.waitHolder = -1;
          s.wait.txHead.length = 0; // iowait_sleep takes the txreq back off the work list
        } else s.busy++;
        e.descAvail = e.freecnt(); // sdma_check_progress refreshes it again after -EAGAIN
        s.pc = Pc.retry;
        notes?.push(`${where}: ${why} → 1${locked ? ', release waitlock' : `, busycount ${s.busy}`}: -EAGAIN`);
        return 0;
      }
      s.pc = locked ? Pc.enqueue : Pc.lock;
      notes?.push(`${where}: ${why} → ${r.result}${r.result ? ', retry already used' : ''}`);
      return 0;
    }
    case Pc.enqueue: {
      const q = s.wait;
      if (s.kind === 'psm') q.deferred = true; // defer_packet_queue marks the packet queue DEFERRED
      if (q.queuedOn === null) {
        computePriority(q);
        iowaitQueue(false, q, e); // iowait_queue's discipline
        e.host.log.write(e.host.sched.nowNs, LogKind.sleep, e.idx, q.id, need, EBUSY);
      }
      s.pc = Pc.unlock;
      notes?.push(`enqueue ${s.name} on dmawait (${e.dmawait.length} waiting)`);
      return 0;
    }
    case Pc.unlock:
      takeWaitlock(e);
      w.waitHolder = -1;
      e.descqFullCount = (e.descqFullCount + 1) >>> 0;
      e.host.log.write(e.host.sched.nowNs, LogKind.descqFull, e.idx, EBUSY, need, 0);
      w.tailHolder = -1;
      s.pc = Pc.asleep;
      notes?.push('release waitlock; -EBUSY (DQF + 1), release tail_lock; sleep');
      return 0;
  }
  throw new Error(`${s.name}: no step at pc ${s.pc}`);
}

/**
 * The chip completes the packet at HEAD and raises an interrupt source: progress, or idle when
 * that drained the ring. Packet ends are the txreqs' LAST descriptors, found through tx_ring's
 * next_descq_idx (set by submit_tx) rather than the ring's words, which a saved state does not carry.
 */
function chipStep(w: World, notes: string[] | null): void {
  const c = w.chip;
  const e = w.e;
  const mask = e.mask;
  const swhead = e.descqHead & mask;
  const at = (c.hwHead - swhead) & mask;
  let k = 0;
  for (let i = e.txHead; i !== e.txTail; i = (i + 1) & 0xffff) {
    const tx = e.txRing[i & mask];
    if (!tx) break;
    const end = (tx.nextDescqIdx - swhead) & mask;
    if (end > at) {
      k = end - at;
      break;
    }
  }
  if (k === 0) throw new Error(`chip: HEAD ${c.hwHead} is not inside a txreq (TAIL ${c.hwTail})`);
  const slot = (c.hwHead + k) & mask;
  c.hwHead = slot;
  c.genCount = (c.genCount + k) >>> 0;
  c.descFetched = (c.descFetched + k) >>> 0;
  const drained = slot === c.hwTail;
  w.pending |= drained ? INT_IDLE : INT_PROGRESS;
  notes?.push(`chip: packet of ${k} done, HEAD → ${slot}; ${drained ? 'idle (ring drained)' : 'progress'} interrupt pending`);
}

function irqName(bits: number): string {
  return bits & INT_IDLE ? 'idle' : bits & INT_PROGRESS ? 'progress' : bits & INT_SDMA ? 'SDmaInt' : 'none';
}

/** sdma_engine_interrupt and sdma_desc_avail, one step at a time: entry, retirement, harvest, wake-up, exit. */
function irqStep(w: World, notes: string[] | null): void {
  const e = w.e;
  const q = w.irq;
  switch (q.pc) {
    case IrqPc.idle: {
      q.bits = w.pending;
      w.pending = 0; // sdma_interrupt clears the status bits it takes
      e.lockHead();
      if (e.host.cfg.idleCntNs !== 0) e.chip.writeDescCnt(e.host.cfg.desctIntr);
      if (q.bits & INT_IDLE) e.idleIntCnt++;
      else if (q.bits & INT_PROGRESS) e.progressIntCnt++;
      else e.sdmaIntCnt++;
      q.pc = IrqPc.advance;
      notes?.push(`interrupt (${irqName(q.bits)}): take head_lock, seq → ${e.headSeq}`);
      return;
    }
    case IrqPc.advance: {
      const before = e.descqHead;
      const done = retireToHwHead(e, statusMask(e.idx, q.bits), (q.bits & INT_IDLE) !== 0);
      if (e.descqHead === before) {
        q.pc = IrqPc.exit;
        notes?.push('sdma_make_progress: HEAD has not moved, nothing retired');
        return;
      }
      q.avail = e.freecnt();
      q.pc = IrqPc.avail;
      notes?.push(
        `sdma_make_progress: descq_head ${before} → ${e.descqHead}, ${done} txreq${done === 1 ? '' : 's'} completed, freecnt ${q.avail}`,
      );
      return;
    }
    case IrqPc.avail: {
      const waiting = e.dmawait.length;
      q.top = harvestWaiters(e, q.avail);
      if (q.top < 0) {
        q.pc = IrqPc.exit;
        notes?.push(`sdma_desc_avail(${q.avail}): ${waiting === 0 ? 'dmawait empty, no one to wake' : 'no waiter fits'}`);
        return;
      }
      q.pc = IrqPc.wake;
      notes?.push(`sdma_desc_avail(${q.avail}): take waitlock, harvest ${harvestNames(w)}, release`);
      return;
    }
    case IrqPc.wake: {
      const names = harvestNames(w);
      wakeHarvested(e, q.top);
      q.top = -1;
      q.pc = IrqPc.exit;
      notes?.push(`wake ${names}`);
      return;
    }
    case IrqPc.exit: {
      e.host.log.write(e.host.sched.nowNs, LogKind.interrupt, e.idx, q.bits, e.descqHead, 0);
      e.lockHead();
      q.pc = IrqPc.idle;
      q.bits = 0;
      q.avail = 0;
      notes?.push(`release head_lock, seq → ${e.headSeq}`);
      return;
    }
  }
}

/**
 * The sender calls sdma_progress under waitlock: every QP (iowait_sleep always did) and IPoIB queue
 * (hfi1_ipoib_sdma_sleep), and a PSM queue unless the order is the pre-2019 defer_packet_queue.
 * `no-progress-check` skips it for all.
 */
export function lockedProgress(v: Variant, s: Submitter): boolean {
  return s.kind !== 'psm' || v !== 'psm-pre-2019';
}

function harvestNames(w: World): string {
  return w.e.harvest.map((h) => w.subs.find((s) => s.wait === h)?.name ?? `iowait ${h.id}`).join(', ');
}

/**
 * A lost wake-up (the 2019 PSM hang, "Close PSM sdma_progress sleep window"): a submitter asleep on dmawait whose request fits, the engine
 * running, the chip idle and no interrupt pending or running that could still wake it.
 */
export function lostWaiter(w: World): Submitter | null {
  const e = w.e;
  if (!e.running() || w.pending !== 0 || w.irq.pc !== IrqPc.idle || w.chip.hwHead !== w.chip.hwTail) return null;
  const free = e.freecnt();
  for (const s of w.subs) {
    if (s.pc === Pc.asleep && s.woken === 0 && s.wait.queuedOn === e && s.tx.numDesc <= free) return s;
  }
  return null;
}

/** Lost-wake-up bits by kind (LOST_QP, LOST_PSM) of the world's state: which kinds have a sender left asleep. */
export function lostKinds(w: World): number {
  if (lostWaiter(w) === null) return 0;
  const e = w.e;
  const free = e.freecnt();
  let bits = 0;
  for (const s of w.subs) {
    if (s.pc === Pc.asleep && s.woken === 0 && s.wait.queuedOn === e && s.tx.numDesc <= free) bits |= KIND_BIT[s.kind];
  }
  return bits;
}

/** Bit of a kind in lostKinds. */
export const KIND_BIT: Readonly<Record<SenderKind, number>> = { qp: 1, psm: 2, ipoib: 4 };
