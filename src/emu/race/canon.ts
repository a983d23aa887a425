// Symmetry of the race: submitters of the same kind (QP, PSM or IPoIB) and the same request size behave
// alike, so two states that differ only by which of them is which are one state up to renaming. A
// state's canonical key describes each submitter by one tuple holding everything that names it
// (its kind and request size first, its locals, its txreq, its place in tx_ring, dmawait and the
// harvest, the locks it holds) and sorts the tuples: equal keys ⇔ one state is a permutation of the
// other that maps every submitter to one of its own kind and size. The orbit size (how many distinct
// states the key stands for) is Π over classes (class size)! / Π (multiplicity of equal tuples)!.
import type { EmuTx } from '../tx.js';
import { capture } from './state.js';
import { KeyBuilder } from './state-table.js';
import type { SenderKind, Submitter, World } from './world.js';

/** Numbers per submitter tuple. */
const TUPLE = 19;

const FACTORIAL = [1, 1, 2, 6, 24, 120, 720];

/** A kind's place in a tuple. */
const KIND_INDEX: Readonly<Record<SenderKind, number>> = { qp: 0, psm: 1, ipoib: 2 };

/** Keys of one world's states: canonical ones (symmetry on) or the plain state vector. */
export class Canonizer {
  private readonly n: number;
  /** Submitter i's tuple at [i × TUPLE, (i + 1) × TUPLE). */
  private readonly tuples: Int32Array;
  private readonly order: number[];
  /** place[i]: the canonical position of submitter i (a permutation of 0…n−1), after `canonical`. */
  readonly place: number[];
  /** How many distinct states the last key stands for: n! / Π (multiplicity of equal tuples)!. */
  orbit = 1;
  /** The key of the last state passed to `canonical`. */
  readonly key = new KeyBuilder();

  constructor(
    w: World,
    private readonly symmetric: boolean,
  ) {
    this.n = w.subs.length;
    this.tuples = new Int32Array(this.n * TUPLE);
    this.order = Array.from({ length: this.n }, (_, i) => i);
    this.place = this.order.slice();
    // Classes of interchangeable submitters: same kind, same request size.
    const classes = new Map<string, number>();
    for (const s of w.subs) classes.set(`${s.kind}:${s.tx.numDesc}`, (classes.get(`${s.kind}:${s.tx.numDesc}`) ?? 0) + 1);
    this.classOrbit = [...classes.values()].reduce((a, k) => a * (FACTORIAL[k] ?? Number.NaN), 1);
  }

  /** Π over classes of interchangeable submitters of (class size)!. */
  private readonly classOrbit: number;

  /** Build the key of the world's current state into `key`; set `orbit` and `place`. */
  canonical(w: World): void {
    const k = this.key;
    k.clear();
    if (!this.symmetric) {
      for (const x of capture(w)) k.push(x);
      return;
    }
    const e = w.e;
    const n = this.n;
    const t = this.tuples;
    const base = w.txs.length - n; // submitter i's txreq is txs[base + i]
    for (let i = 0; i < n; i++) {
      const s = w.subs[i] as Submitter;
      const q = s.wait;
      const o = i * TUPLE;
      t[o] = s.pc;
      t[o + 1] = s.seq;
      t[o + 2] = s.busy;
      t[o + 3] = s.woken;
      t[o + 4] = s.afterWake;
      t[o + 5] = q.starvedCnt;
      t[o + 6] = q.priority;
      t[o + 7] = q.deferred ? 1 : 0;
      t[o + 8] = q.sdmaBusy;
      t[o + 9] = s.tx.phase;
      t[o + 10] = s.tx.nextDescqIdx;
      t[o + 11] = -1;
      t[o + 12] = e.dmawait.indexOf(q);
      t[o + 13] = e.harvest.indexOf(q);
      t[o + 14] = w.tailHolder === i ? 1 : 0;
      t[o + 15] = w.waitHolder === i ? 1 : 0;
      t[o + 16] = q.txHead.length;
      t[o + 17] = KIND_INDEX[s.kind];
      t[o + 18] = s.tx.numDesc;
    }
    k.push(e.descqHead);
    k.push(e.descqTail);
    k.push(e.txHead);
    k.push(e.txTail);
    k.push(e.descAvail);
    k.push(e.descqFullCount);
    k.push(e.headSeq);
    k.push(e.waitSeq);
    k.push(w.chip.hwHead);
    k.push(w.chip.hwTail);
    k.push(w.chip.genCount);
    k.push(w.pending);
    k.push(w.tailHolder === -1 ? 0 : 1);
    k.push(w.waitHolder === -1 ? 0 : 1);
    k.push(w.irq.pc);
    k.push(w.irq.bits);
    k.push(w.irq.avail);
    k.push(w.irq.top);
    for (let j = 0; j < base; j++) {
      const tx = w.txs[j] as EmuTx;
      k.push(tx.phase);
      k.push(tx.nextDescqIdx);
    }
    // tx_ring from tx_head: the initial txreqs by index, a submitter's as a mark (its place is in its tuple).
    const inRing = (e.txTail - e.txHead) & 0xffff;
    k.push(inRing);
    for (let j = 0; j < inRing; j++) {
      const idx = w.txs.indexOf(e.txRing[(e.txHead + j) & e.mask] as EmuTx);
      if (idx >= base) {
        t[(idx - base) * TUPLE + 11] = j;
        k.push(-2);
      } else k.push(idx);
    }
    k.push(e.dmawait.length);
    k.push(e.harvest.length);
    // Insertion sort of at most a few submitters, stable (ties keep index order).
    const order = this.order;
    for (let i = 0; i < n; i++) {
      let p = i;
      while (p > 0 && compareTuples(t, order[p - 1] as number, i) > 0) {
        order[p] = order[p - 1] as number;
        p--;
      }
      order[p] = i;
    }
    let orbit = this.classOrbit;
    let run = 1;
    for (let p = 0; p < n; p++) {
      const i = order[p] as number;
      for (let j = i * TUPLE; j < (i + 1) * TUPLE; j++) k.push(t[j] as number);
      if (p > 0 && compareTuples(t, order[p - 1] as number, i) === 0) {
        run++;
        orbit /= run;
      } else run = 1;
      this.place[i] = p;
    }
    this.orbit = orbit;
  }
}

function compareTuples(t: Int32Array, a: number, b: number): number {
  const oa = a * TUPLE;
  const ob = b * TUPLE;
  for (let k = 0; k < TUPLE; k++) {
    const d = (t[oa + k] as number) - (t[ob + k] as number);
    if (d !== 0) return d;
  }
  return 0;
}
