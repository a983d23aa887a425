// Symmetry of the race: every submitter has the same kind (a PSM iowait) and the same need
// (RACE_NUM_DESC), so two states that differ only by which submitter is which behave alike. A
// state's canonical key describes each submitter by one tuple holding everything that names it
// (its locals, its txreq, its place in tx_ring, dmawait and the harvest, the locks it holds) and
// sorts the tuples: equal keys ⇔ one state is a permutation of the other. The orbit size (how many
// distinct states the key stands for) is n! / Π (multiplicity of equal tuples)!.
import { capture } from './state.js';
import { KeyBuilder } from './state-table.js';
import type { World } from './world.js';

/** Numbers per submitter tuple. */
const TUPLE = 16;

const FACTORIAL = [1, 1, 2, 6, 24, 120, 720];

/** How many distinct states a canonical key stands for, and each submitter's canonical place. */
export interface Canonical {
  orbit: number;
  /** place[i]: the canonical position of submitter i (a permutation of 0…n−1). */
  place: number[];
}

/** Keys of one world's states: the canonical one (symmetry on) or the plain state key with orbit 1. */
export class Canonizer {
  private readonly n: number;
  private readonly tuples: number[][];
  private readonly order: number[];
  private readonly identity: number[];
  private readonly buf: number[] = [];
  private readonly place: number[];
  /** The key of the last state passed to `canonical`. */
  readonly key = new KeyBuilder();

  constructor(
    w: World,
    private readonly symmetric: boolean,
  ) {
    this.n = w.subs.length;
    this.tuples = Array.from({ length: this.n }, () => new Array<number>(TUPLE).fill(0));
    this.order = Array.from({ length: this.n }, (_, i) => i);
    this.identity = this.order.slice();
    this.place = this.order.slice();
  }

  /**
   * Build the key of the world's current state into `key`. The `place` returned is reused by the
   * next call.
   */
  canonical(w: World): Canonical {
    if (!this.symmetric) {
      this.key.clear();
      for (const x of capture(w)) this.key.push(x);
      return { orbit: 1, place: this.identity };
    }
    const e = w.e;
    const n = this.n;
    const base = w.txs.length - n; // submitter i's txreq is txs[base + i]
    for (let i = 0; i < n; i++) {
      const s = w.subs[i];
      const t = this.tuples[i];
      if (s === undefined || t === undefined) throw new Error('race canonical key: submitter missing');
      const q = s.wait;
      t[0] = s.pc;
      t[1] = s.seq;
      t[2] = s.busy;
      t[3] = s.woken;
      t[4] = s.afterWake;
      t[5] = q.starvedCnt;
      t[6] = q.priority;
      t[7] = q.deferred ? 1 : 0;
      t[8] = q.sdmaBusy;
      t[9] = s.tx.phase;
      t[10] = s.tx.nextDescqIdx;
      t[11] = -1;
      t[12] = e.dmawait.indexOf(q);
      t[13] = e.harvest.indexOf(q);
      t[14] = w.tailHolder === i ? 1 : 0;
      t[15] = w.waitHolder === i ? 1 : 0;
    }
    const k0 = this.buf;
    k0.length = 0;
    k0.push(
      e.descqHead,
      e.descqTail,
      e.txHead,
      e.txTail,
      e.descAvail,
      e.descqFullCount,
      e.headSeq,
      e.waitSeq,
      w.chip.hwHead,
      w.chip.hwTail,
      w.chip.genCount,
      w.pending,
      w.tailHolder === -1 ? 0 : 1,
      w.waitHolder === -1 ? 0 : 1,
      w.irq.pc,
      w.irq.bits,
      w.irq.avail,
      w.irq.top,
    );
    for (let k = 0; k < base; k++) {
      const tx = w.txs[k];
      if (tx) k0.push(tx.phase, tx.nextDescqIdx);
    }
    // tx_ring from tx_head: the initial txreqs by index, a submitter's as a mark (its place is in its tuple).
    const inRing = (e.txTail - e.txHead) & 0xffff;
    k0.push(inRing);
    for (let k = 0; k < inRing; k++) {
      const idx = w.txs.indexOf(e.txRing[(e.txHead + k) & e.mask] as never);
      if (idx >= base) {
        (this.tuples[idx - base] as number[])[11] = k;
        k0.push(-2);
      } else k0.push(idx);
    }
    k0.push(e.dmawait.length, e.harvest.length);
    const order = this.order;
    const tuples = this.tuples;
    // Insertion sort of at most a few submitters, stable (ties keep index order).
    for (let i = 0; i < n; i++) {
      let p = i;
      while (p > 0 && compareTuples(tuples[order[p - 1] as number] as number[], tuples[i] as number[]) > 0) {
        order[p] = order[p - 1] as number;
        p--;
      }
      order[p] = i;
    }
    let orbit = FACTORIAL[n] ?? Number.NaN;
    let run = 1;
    for (let p = 0; p < n; p++) {
      const i = order[p] as number;
      const t = tuples[i] as number[];
      for (let k = 0; k < TUPLE; k++) k0.push(t[k] as number);
      if (p > 0 && compareTuples(tuples[order[p - 1] as number] as number[], t) === 0) {
        run++;
        orbit /= run;
      } else run = 1;
    }
    const place = this.place;
    for (let p = 0; p < n; p++) place[order[p] as number] = p;
    this.key.clear();
    for (const x of k0) this.key.push(x);
    return { orbit, place };
  }
}

function compareTuples(a: number[], b: number[]): number {
  for (let k = 0; k < TUPLE; k++) {
    const d = (a[k] as number) - (b[k] as number);
    if (d !== 0) return d;
  }
  return 0;
}
