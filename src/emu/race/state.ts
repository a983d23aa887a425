// A world's state as a vector of numbers: every field a step reads or writes (engine counters,
// sequences, the tx ring, dmawait, the harvest, chip HEAD/TAIL, pending interrupt sources, lock
// holders, every actor's program counter and locals). Capture, restore, and a key for hashing.
import type { IoWait } from '../iowait.js';
import { TxPhase } from '../tx.js';
import type { World } from './world.js';

/** A captured state. */
export type StateVec = number[];

/** Read the world into a vector. */
export function capture(w: World): StateVec {
  const e = w.e;
  const c = w.chip;
  const q = w.irq;
  const v: StateVec = [
    e.descqHead,
    e.descqTail,
    e.txHead,
    e.txTail,
    e.descAvail,
    e.descqFullCount,
    e.headSeq,
    e.waitSeq,
    c.hwHead,
    c.hwTail,
    c.genCount,
    w.pending,
    w.tailHolder,
    w.waitHolder,
    q.pc,
    q.bits,
    q.avail,
    q.top,
  ];
  for (const tx of w.txs) v.push(tx.phase, tx.nextDescqIdx);
  for (const s of w.subs) {
    const q2 = s.wait;
    v.push(
      s.pc,
      s.seq,
      s.busy,
      s.woken,
      s.afterWake,
      q2.starvedCnt,
      q2.priority,
      q2.deferred ? 1 : 0,
      q2.sdmaBusy,
      q2.txHead.length,
    );
  }
  // tx ring from tx_head to tx_tail, then dmawait and the harvest, each as ids behind a length.
  const inRing = (e.txTail - e.txHead) & 0xffff;
  v.push(inRing);
  for (let i = 0; i < inRing; i++) v.push(w.txs.indexOf(e.txRing[(e.txHead + i) & e.mask] as never));
  v.push(e.dmawait.length);
  for (const x of e.dmawait) v.push(x.id);
  v.push(e.harvest.length);
  for (const x of e.harvest) v.push(x.id);
  return v;
}

/** Write a captured vector back into the world. */
export function restore(w: World, v: StateVec): void {
  const e = w.e;
  const c = w.chip;
  const q = w.irq;
  let i = 0;
  const next = (): number => v[i++] as number;
  e.descqHead = next();
  e.descqTail = next();
  e.txHead = next();
  e.txTail = next();
  e.descAvail = next();
  e.descqFullCount = next();
  e.headSeq = next();
  e.waitSeq = next();
  c.hwHead = next();
  c.hwTail = next();
  c.genCount = next();
  w.pending = next();
  w.tailHolder = next();
  w.waitHolder = next();
  q.pc = next();
  q.bits = next();
  q.avail = next();
  q.top = next();
  for (const tx of w.txs) {
    tx.phase = next();
    tx.nextDescqIdx = next();
    tx.wait = null;
    tx.status = tx.phase === TxPhase.done ? 0 : -1;
  }
  for (const s of w.subs) {
    const q2 = s.wait;
    s.pc = next();
    s.seq = next();
    s.busy = next();
    s.woken = next();
    s.afterWake = next();
    q2.starvedCnt = next();
    q2.priority = next();
    q2.deferred = next() === 1;
    q2.sdmaBusy = next();
    q2.txHead.length = 0;
    if (next() > 0) q2.txHead.push(s.tx); // only a QP parks, and only its own txreq
    q2.queuedOn = null;
    if (s.tx.phase === TxPhase.ring) s.tx.wait = q2;
  }
  const base = w.txBase;
  for (let k = 0; k < w.txs.length; k++) e.txRing[(base + k) & e.mask] = null;
  const inRing = next();
  for (let k = 0; k < inRing; k++) e.txRing[(e.txHead + k) & e.mask] = w.txs[next()] ?? null;
  e.dmawait.length = 0;
  const waiting = next();
  for (let k = 0; k < waiting; k++) {
    const x = waitById(w, next());
    x.queuedOn = e;
    e.dmawait.push(x);
  }
  e.harvest.length = 0;
  const harvested = next();
  for (let k = 0; k < harvested; k++) e.harvest.push(waitById(w, next()));
}

/** Submitter i's iowait has id i + 1 (world.ts). */
function waitById(w: World, id: number): IoWait {
  const s = w.subs[id - 1];
  if (s === undefined || s.wait.id !== id) throw new Error(`race state: no submitter with iowait ${id}`);
  return s.wait;
}

/** The hash key of a state. */
export function stateKey(v: StateVec): string {
  return v.join(',');
}
