// Retirement on the head side: sdma_engine_interrupt and sdma_make_progress (sdma_make_progress, sdma.c), waking
// waiters with sdma_desc_avail (sdma_desc_avail, sdma.c), completion (complete_tx, sdma.c), sdma_flush and the software clean-up
// (the other sdma_make_progress callers, sdma.c). Every function here runs inside a head_lock write section of its caller.
import { SDMA_TXREQ_S_ABORTED, SDMA_TXREQ_S_OK, SDMA_WAIT_BATCH_SIZE } from '../progress/constants.js';
import { INT_IDLE, INT_PROGRESS, INT_SDMA } from './chip.js';
import type { Engine } from './engine.js';
import { kernelLogLine } from './host.js';
import { harvestNeed, type IoWait } from './iowait.js';
import { LogKind } from './log.js';
import { type EmuTx, TxPhase } from './tx.js';

const CAP_USE_SDMA_HEAD = 1 << 6; // the hfi1 module parameters
const CAP_SDMA_HEAD_CHECK = 1 << 17;

/** The status mask (the engine's interrupt masks, sdma.c) of local interrupt bits for engine `i` (a number: up to 2^47). */
export function statusMask(i: number, bits: number): number {
  return (bits & INT_SDMA ? 2 ** i : 0) + (bits & INT_PROGRESS ? 2 ** (16 + i) : 0) + (bits & INT_IDLE ? 2 ** (32 + i) : 0);
}

/** complete_tx (complete_tx, sdma.c): exactly once per txreq; the owner's callback, then sdma_busy − 1. */
export function completeTx(e: Engine, tx: EmuTx, status: number): void {
  const stats = e.stats;
  if (tx.phase !== TxPhase.ring && tx.phase !== TxPhase.flush) {
    e.host.stats.violate(`engine ${e.idx}: txreq ${tx.serial} completed twice (status ${status})`);
    return;
  }
  tx.phase = TxPhase.done;
  tx.status = status;
  if (status === SDMA_TXREQ_S_OK) {
    stats.txCompleted++;
    stats.descriptors += tx.numDesc;
  } else {
    stats.txAborted++;
    e.host.log.write(e.host.sched.nowNs, LogKind.aborted, e.idx, tx.serial >>> 0, tx.nextDescqIdx === 0 ? 1 : 0, 0);
  }
  const w = tx.wait;
  tx.wait = null;
  if (w) w.sdmaBusy--;
  tx.owner?.complete(tx, status);
}

/** The sanity rule of sdma_gethead (sdma.c) under SDMA_HEAD_CHECK: `h` lies between the software head and tail slots (inclusive). */
function inWindow(e: Engine, h: number): boolean {
  const swhead = e.descqHead & e.mask;
  const swtail = e.descqTail & e.mask;
  if (h === swhead) return true;
  if (h >= e.descqCnt) return false;
  return swhead <= swtail ? h >= swhead && h <= swtail : h >= swhead || h <= swtail;
}

/**
 * sdma_gethead (sdma.c): head_dma with USE_SDMA_HEAD while running, else the HEAD CSR, used as read. Only with the
 * SDMA_HEAD_CHECK capability (off by default) is a head outside the window logged, re-read from the CSR when it came
 * from head_dma, and finally treated as "no progress"; without it the driver retires up to whatever it read.
 */
function gethead(e: Engine): number {
  const cfg = e.host.cfg;
  const useDma = (cfg.capMask & CAP_USE_SDMA_HEAD) !== 0 && e.running() && cfg.idleCntNs !== 0;
  let hw = useDma ? e.chip.headDma & 0xffff : readHeadCsr(e);
  if ((cfg.capMask & CAP_SDMA_HEAD_CHECK) === 0) return e.running() ? reachable(e, hw) : settled(e, hw);
  if (!inWindow(e, hw)) {
    badHead(e, useDma, hw);
    if (useDma) {
      hw = readHeadCsr(e); // the retry without head_dma
      if (!inWindow(e, hw)) badHead(e, false, hw);
    }
    if (!inWindow(e, hw)) hw = e.descqHead & e.mask;
  }
  return hw;
}

function badHead(e: Engine, dma: boolean, hw: number): void {
  const where = `hwhd=${hw} swhd=${e.descqHead & e.mask} swtl=${e.descqTail & e.mask} cnt=${e.descqCnt}`;
  kernelLogLine(e.host, `SDMA(${e.idx}) bad head (${dma ? 'dma' : 'kreg'}) ${where}`);
}

/**
 * Outside s99_Running, between the software clean-up (descq_head = descq_tail = 0) and the hardware clean-up or
 * unfreeze that resets HEAD, the emulated chip still shows the old HEAD; a handler that runs then (an interrupt
 * raised before the halt) would retire an empty ring up to it. The emulator takes such a head as "no progress"
 * rather than model a ring the driver never reaches in practice.
 */
function settled(e: Engine, hw: number): number {
  return inWindow(e, hw) ? hw : e.descqHead & e.mask;
}

/**
 * A head the retirement loop can reach: a slot of the ring. The all-ones HEAD of a device that is gone is no slot;
 * the driver's loop would never end on it, the emulator takes it as "no progress".
 */
function reachable(e: Engine, hw: number): number {
  return hw < e.descqCnt ? hw : e.descqHead & e.mask;
}

function readHeadCsr(e: Engine): number {
  return e.host.gone ? 0xffff : e.chip.hwHead & 0xffff;
}

/** sdma_make_progress (sdma_make_progress, sdma.c) with the idle-status HEAD re-read; returns txreqs completed. */
export function makeProgress(e: Engine, status: number, idle: boolean): number {
  const before = e.descqHead;
  const completed = retireToHwHead(e, status, idle);
  if (e.descqHead !== before) descAvail(e, e.freecnt());
  return completed;
}

/**
 * The retirement loop of sdma_make_progress (sdma_make_progress, sdma.c): advance descq_head to the hardware head,
 * completing txreqs, and set last_status; sdma_desc_avail is left to the caller. Returns txreqs completed.
 */
export function retireToHwHead(e: Engine, status: number, idle: boolean): number {
  let hwhead = gethead(e);
  let idleCheckDone = false;
  let completed = 0;
  const mask = e.mask;
  for (;;) {
    let txp = e.txRing[e.txHead & mask] ?? null;
    let swhead = e.descqHead & mask;
    // Descriptor by descriptor in the kernel; here in jumps to the next txreq boundary or the
    // hardware head, whichever comes first (the same completions in the same order).
    while (swhead !== hwhead) {
      const toHead = (hwhead - swhead) & mask;
      const toTx = txp === null ? 0 : (txp.nextDescqIdx - swhead) & mask;
      const step = toTx !== 0 && toTx <= toHead ? toTx : toHead;
      e.descqHead = (e.descqHead + step) >>> 0;
      swhead = e.descqHead & mask;
      if (txp !== null && txp.nextDescqIdx === swhead) {
        e.txRing[e.txHead & mask] = null;
        e.txHead = (e.txHead + 1) & 0xffff;
        completeTx(e, txp, SDMA_TXREQ_S_OK);
        completed++;
        txp = e.txRing[e.txHead & mask] ?? null;
      }
    }
    if (idle && !idleCheckDone && (e.descqTail & mask) !== hwhead) {
      // Re-read as is (sdma_make_progress, sdma.c): no sanity check here.
      hwhead = e.running() ? reachable(e, readHeadCsr(e)) : settled(e, readHeadCsr(e));
      idleCheckDone = true;
      continue;
    }
    break;
  }
  e.lastStatus = status;
  return completed;
}

/** sdma_engine_interrupt (sdma_make_progress, sdma.c) for local status bits. */
export function engineInterrupt(e: Engine, bits: number): void {
  e.lockHead();
  const cfg = e.host.cfg;
  if (cfg.idleCntNs !== 0) e.chip.writeDescCnt(cfg.desctIntr);
  if (bits & INT_IDLE) e.idleIntCnt++;
  else if (bits & INT_PROGRESS) e.progressIntCnt++;
  else if (bits & INT_SDMA) e.sdmaIntCnt++;
  const done = makeProgress(e, e.chip.statusMask(bits), (bits & INT_IDLE) !== 0);
  e.host.log.write(e.host.sched.nowNs, LogKind.interrupt, e.idx, bits, e.descqHead, done);
  e.lockHead();
}

/** sdma_desc_avail (sdma_desc_avail, sdma.c): harvest up to 20 waiters that fit, head-of-line, top priority woken first. */
export function descAvail(e: Engine, avail: number): void {
  const top = harvestWaiters(e, avail);
  if (top >= 0) wakeHarvested(e, top);
}

/**
 * The waitlock section of sdma_desc_avail (sdma_desc_avail, sdma.c): unlink up to 20 waiters that fit into
 * `e.harvest`; returns the index of the one to wake first, or −1 when none was harvested.
 */
export function harvestWaiters(e: Engine, avail: number): number {
  const list = e.dmawait;
  const harvest = e.harvest;
  if (list.length === 0) return -1; // the seqlock probe saw an empty list
  e.waitSeq = (e.waitSeq + 1) >>> 0;
  let n = 0;
  let top = 0;
  let keep = 0;
  let i = 0;
  for (; i < list.length; i++) {
    const w = list[i] as IoWait;
    if (!w.hasWakeup || w.stuck) {
      list[keep++] = w;
      continue;
    }
    if (n === SDMA_WAIT_BATCH_SIZE) break;
    const need = harvestNeed(w);
    if (need > avail) break;
    avail -= need;
    if (n > 0) {
      const t = harvest[top] as IoWait;
      if ((((w.priority << 4) + w.starvedCnt) & 0xff) > (((t.priority << 4) + t.starvedCnt) & 0xff)) top = n;
    }
    w.queuedOn = null;
    harvest[n++] = w;
  }
  for (; i < list.length; i++) list[keep++] = list[i] as IoWait;
  truncate(list, keep);
  e.waitSeq = (e.waitSeq + 1) >>> 0;
  return n === 0 ? -1 : top;
}

/** The wake-up half of sdma_desc_avail (sdma_desc_avail, sdma.c): `e.harvest[top]` first, then the rest in harvest order. */
export function wakeHarvested(e: Engine, top: number): void {
  const harvest = e.harvest;
  wake(e, harvest[top] as IoWait, false);
  for (let k = 0; k < harvest.length; k++) if (k !== top) wake(e, harvest[k] as IoWait, false);
  truncate(harvest, 0);
}

/**
 * Shorten `list` to `n` entries in place, by popping: on Node 20's V8 `list.length = 0` drops the array's storage and
 * the next push allocates it again (measured alone, five times slower than popping). The dmawait list of an
 * over-subscribed engine is emptied and filled again about every packet.
 */
function truncate(list: unknown[], n: number): void {
  while (list.length > n) list.pop();
}

function wake(e: Engine, w: IoWait, flushed: boolean): void {
  e.host.log.write(e.host.sched.nowNs, LogKind.wakeup, e.idx, w.id, flushed ? 1 : 0, 0);
  w.deferred = false;
  w.client?.wakeup(w, flushed);
}

/** sdma_flush (the other sdma_make_progress callers, sdma.c): ring and flush list complete ABORTED, then every waiter is woken. */
export function flush(e: Engine): void {
  const mask = e.mask;
  let progress = 0;
  let txp = e.txRing[e.txHead & mask] ?? null;
  while (e.descqHead !== e.descqTail) {
    e.descqHead = (e.descqHead + 1) >>> 0;
    const swhead = e.descqHead & mask;
    if (txp !== null && txp.nextDescqIdx === swhead) {
      e.txRing[e.txHead & mask] = null;
      e.txHead = (e.txHead + 1) & 0xffff;
      completeTx(e, txp, SDMA_TXREQ_S_ABORTED);
      txp = e.txRing[e.txHead & mask] ?? null;
    }
    progress++;
  }
  if (progress > 0) descAvail(e, e.freecnt());
  const fl = e.flushlist.splice(0);
  for (const tx of fl) completeTx(e, tx, SDMA_TXREQ_S_ABORTED);
  if (e.dmawait.length > 0) {
    e.waitSeq = (e.waitSeq + 1) >>> 0;
    const woken = e.dmawait.filter((w) => w.hasWakeup);
    const left = e.dmawait.filter((w) => !w.hasWakeup);
    e.dmawait.length = 0;
    e.dmawait.push(...left);
    for (const w of woken) w.queuedOn = null;
    e.waitSeq = (e.waitSeq + 1) >>> 0;
    for (const w of woken) wake(e, w, true);
  }
}

/** The flush worker (sdma_send_txreq, sdma.c noconn): flush when the engine is not running. */
export function flushWorker(e: Engine): void {
  e.flushQueued = false;
  e.lockHead();
  if (!e.running()) flush(e);
  e.lockHead();
}

/**
 * Software clean-up (sdma_sw_clean_up_task, sdma.c): progress with status 0, flush, reset the ring counters, then
 * `inside` (the e40_SwCleaned event), all in one head_lock write section: the sequence moves by 2.
 */
export function swCleanUp(e: Engine, inside: () => void = () => {}): void {
  e.lockHead();
  const head = e.descqHead;
  const tail = e.descqTail;
  makeProgress(e, 0, false);
  flush(e);
  e.descqHead = 0;
  e.descqTail = 0;
  e.descAvail = e.descqCnt - 1;
  e.chip.headDma = 0;
  e.host.log.write(e.host.sched.nowNs, LogKind.swCleanUp, e.idx, head, tail, 0);
  inside();
  e.lockHead();
}
