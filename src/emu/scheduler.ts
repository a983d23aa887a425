// The deterministic event scheduler of the emulator: a binary heap of (time, insertion order) held in typed
// arrays, so scheduling and dispatching an event allocates nothing. The heap holds each event's time, order and
// slot; the slot holds its kind and arguments, which stay where they were written while the heap reorders.

/** Virtual time in nanoseconds and a queue of pending events. */
export class Scheduler {
  /** The current virtual time (ns). */
  nowNs = 0;
  private time = new Float64Array(1024);
  private order = new Float64Array(1024);
  private slot = new Int32Array(1024);
  private kinds = new Int32Array(1024);
  private argA = new Int32Array(1024);
  private argB = new Float64Array(1024);
  /** Free slots, a stack: `freeSlots[0 .. freeTop)`. */
  private freeSlots = new Int32Array(1024);
  private freeTop = 0;
  private size = 0;
  private counter = 0;
  /** The event being dispatched (valid inside the dispatch callback). */
  kind = 0;
  a = 0;
  b = 0;

  constructor() {
    this.freeSlotRange(0, this.time.length);
  }

  /** Put the slots `from` … `to` − 1 on the free stack, `from` on top. */
  private freeSlotRange(from: number, to: number): void {
    for (let s = to - 1; s >= from; s--) this.freeSlots[this.freeTop++] = s;
  }

  /** Events waiting. */
  get pending(): number {
    return this.size;
  }

  /** Schedule event `kind` with arguments at absolute time `atNs` (never before now). */
  at(atNs: number, kind: number, a: number, b = 0): void {
    if (this.freeTop === 0) this.grow();
    const s = this.freeSlots[--this.freeTop] as number;
    this.kinds[s] = kind;
    this.argA[s] = a;
    this.argB[s] = b;
    const time = this.time;
    const order = this.order;
    const slot = this.slot;
    let i = this.size++;
    const t = Math.max(atNs, this.nowNs);
    const o = this.counter++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pt = time[p] as number;
      if (pt < t || (pt === t && (order[p] as number) < o)) break;
      time[i] = pt;
      order[i] = order[p] as number;
      slot[i] = slot[p] as number;
      i = p;
    }
    time[i] = t;
    order[i] = o;
    slot[i] = s;
  }

  /** Schedule event `kind` `delayNs` from now. */
  after(delayNs: number, kind: number, a: number, b = 0): void {
    this.at(this.nowNs + delayNs, kind, a, b);
  }

  /**
   * Dispatch every event due at or before `untilNs` in (time, insertion) order, then set the
   * clock to `untilNs`. `dispatch` reads the event from `kind`, `a`, `b`.
   */
  runUntil(untilNs: number, dispatch: () => void): void {
    while (this.size > 0 && (this.time[0] as number) <= untilNs) {
      this.nowNs = this.time[0] as number;
      const s = this.slot[0] as number;
      this.kind = this.kinds[s] as number;
      this.a = this.argA[s] as number;
      this.b = this.argB[s] as number;
      this.freeSlots[this.freeTop++] = s;
      this.removeTop();
      dispatch();
    }
    if (untilNs > this.nowNs) this.nowNs = untilNs;
  }

  private removeTop(): void {
    const last = --this.size;
    if (last === 0) return;
    const time = this.time;
    const order = this.order;
    const slot = this.slot;
    const t = time[last] as number;
    const o = order[last] as number;
    const s = slot[last] as number;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= last) break;
      const r = l + 1;
      let c = l;
      let ct = time[l] as number;
      if (r < last) {
        const rt = time[r] as number;
        if (rt < ct || (rt === ct && (order[r] as number) < (order[l] as number))) {
          c = r;
          ct = rt;
        }
      }
      if (t < ct || (t === ct && o < (order[c] as number))) break;
      time[i] = ct;
      order[i] = order[c] as number;
      slot[i] = slot[c] as number;
      i = c;
    }
    time[i] = t;
    order[i] = o;
    slot[i] = s;
  }

  private grow(): void {
    const old = this.time.length;
    const n = old * 2;
    const f = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    const g = (a: Int32Array) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    this.time = f(this.time);
    this.order = f(this.order);
    this.argB = f(this.argB);
    this.slot = g(this.slot);
    this.kinds = g(this.kinds);
    this.argA = g(this.argA);
    // Every slot is taken (the stack is empty): the new ones, old … n − 1, go on it.
    this.freeSlots = new Int32Array(n);
    this.freeSlotRange(old, n);
  }
}
