// The deterministic event scheduler of the emulator: a binary heap of (time, insertion order)
// held in typed arrays, so scheduling and dispatching an event allocates nothing.

/** Virtual time in nanoseconds and a queue of pending events. */
export class Scheduler {
  /** The current virtual time (ns). */
  nowNs = 0;
  private time = new Float64Array(1024);
  private order = new Float64Array(1024);
  private kinds = new Int32Array(1024);
  private argA = new Int32Array(1024);
  private argB = new Float64Array(1024);
  private size = 0;
  private counter = 0;
  /** The event being dispatched (valid inside the dispatch callback). */
  kind = 0;
  a = 0;
  b = 0;

  /** Events waiting. */
  get pending(): number {
    return this.size;
  }

  /** Schedule event `kind` with arguments at absolute time `atNs` (never before now). */
  at(atNs: number, kind: number, a: number, b = 0): void {
    if (this.size === this.time.length) this.grow();
    let i = this.size++;
    const t = Math.max(atNs, this.nowNs);
    const o = this.counter++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pt = this.time[p] as number;
      if (pt < t || (pt === t && (this.order[p] as number) < o)) break;
      this.move(p, i);
      i = p;
    }
    this.time[i] = t;
    this.order[i] = o;
    this.kinds[i] = kind;
    this.argA[i] = a;
    this.argB[i] = b;
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
      this.kind = this.kinds[0] as number;
      this.a = this.argA[0] as number;
      this.b = this.argB[0] as number;
      this.removeTop();
      dispatch();
    }
    if (untilNs > this.nowNs) this.nowNs = untilNs;
  }

  private removeTop(): void {
    const last = --this.size;
    if (last === 0) return;
    const t = this.time[last] as number;
    const o = this.order[last] as number;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= last) break;
      const r = l + 1;
      let c = l;
      if (r < last && this.less(r, l)) c = r;
      const ct = this.time[c] as number;
      if (t < ct || (t === ct && o < (this.order[c] as number))) break;
      this.move(c, i);
      i = c;
    }
    this.move(last, i);
  }

  private less(x: number, y: number): boolean {
    const tx = this.time[x] as number;
    const ty = this.time[y] as number;
    return tx < ty || (tx === ty && (this.order[x] as number) < (this.order[y] as number));
  }

  private move(from: number, to: number): void {
    this.time[to] = this.time[from] as number;
    this.order[to] = this.order[from] as number;
    this.kinds[to] = this.kinds[from] as number;
    this.argA[to] = this.argA[from] as number;
    this.argB[to] = this.argB[from] as number;
  }

  private grow(): void {
    const n = this.time.length * 2;
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
    this.kinds = g(this.kinds);
    this.argA = g(this.argA);
  }
}
