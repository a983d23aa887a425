// The deterministic event scheduler of the emulator: a binary heap of (time, class, insertion order) held in typed
// arrays, so scheduling and dispatching an event allocates nothing. Times are whole nanoseconds.
//
// Every event belongs to a domain: −1 for the unit (faults, the port coming up, the periodic checks) or an engine's
// place in the unit's window (its chip, its interrupts, its senders). At the same instant the unit's events run
// before any engine's, and an engine's events in the order they were scheduled; engines never see each other's
// events, so the order between two engines' events at one instant decides nothing. That is what lets the fast model
// (fast-forward.ts) move one engine's pending events along by whole periods without touching the others.
//
// An event can be cancelled by the handle `at` returned (a slot and the slot's generation): a stopped chip, a
// disarmed idle timer or a woken sender's timeout leaves nothing behind in the heap.
import { doubleFields } from './double-fields.js';

/** The class offset of engine events in the tie-break: at one instant, unit events (class 0) come first. */
const ENGINE_CLASS = 2 ** 52;
/** Handles are `slot + generation × SLOT_SPAN`. */
const SLOT_SPAN = 2 ** 21;

/** Virtual time in nanoseconds and a queue of pending events. */
export class Scheduler {
  /** The current virtual time (ns, an integer). */
  nowNs = 0;
  private time = new Float64Array(1024);
  private order = new Float64Array(1024);
  private slot = new Int32Array(1024);
  /** Per slot: its event's kind, arguments, domain, place in the heap (−1 when free) and generation. */
  private kinds = new Int32Array(1024);
  private argA = new Int32Array(1024);
  private argB = new Float64Array(1024);
  private dom = new Int32Array(1024);
  private heapPos = new Int32Array(1024).fill(-1);
  /**
   * Slot generations, held as doubles: a handle (slot + generation × SLOT_SPAN) passes 2^31 once a slot is reused a
   * thousand times, and code optimised for 32-bit products would be thrown away there, mid-run.
   */
  private gen = new Float64Array(1024);
  /** Free slots, a stack: `freeSlots[0 .. freeTop)`. */
  private freeSlots = new Int32Array(1024);
  private freeTop = 0;
  private size = 0;
  private counter = 0;
  /** The event being dispatched (valid inside the dispatch callback). */
  kind = 0;
  a = 0;
  b = 0;
  domain = -1;
  /** The root is the event being dispatched, already released: settle() removes it, or at() puts the next in its place. */
  private hole = false;

  constructor() {
    doubleFields(this, 'nowNs', 'b');
    this.freeSlotRange(0, this.time.length);
  }

  /** Put the slots `from` … `to` − 1 on the free stack, `from` on top. */
  private freeSlotRange(from: number, to: number): void {
    for (let s = to - 1; s >= from; s--) this.freeSlots[this.freeTop++] = s;
  }

  /** Events waiting. */
  get pending(): number {
    this.settle();
    return this.size;
  }

  /**
   * Schedule event `kind` with arguments at absolute time `atNs` (never before now) in `domain` (−1: the unit; else
   * an engine's place in the window). Returns a handle for cancel().
   */
  at(atNs: number, kind: number, a: number, b = 0, domain = -1): number {
    if (this.freeTop === 0) this.grow();
    const s = this.freeSlots[--this.freeTop] as number;
    this.kinds[s] = kind;
    this.argA[s] = a;
    this.argB[s] = b;
    this.dom[s] = domain;
    const o = (domain < 0 ? 0 : ENGINE_CLASS) + this.counter++;
    const t = Math.max(atNs, this.nowNs);
    if (this.hole) {
      // The first event scheduled by the one being dispatched takes its place at the root, sifted down: one pass
      // through the heap instead of two (its removal, then this insertion). No earlier event is pending.
      this.hole = false;
      this.down(0, this.size, t, o, s);
    } else this.up(this.size++, t, o, s);
    return s + (this.gen[s] as number) * SLOT_SPAN;
  }

  /** Schedule event `kind` `delayNs` from now (see at()). */
  after(delayNs: number, kind: number, a: number, b = 0, domain = -1): number {
    return this.at(this.nowNs + delayNs, kind, a, b, domain);
  }

  /** Remove the event of `handle` if it has not run yet; true when it was removed. */
  cancel(handle: number): boolean {
    this.settle();
    const s = handle % SLOT_SPAN;
    if ((this.gen[s] as number) !== (handle - s) / SLOT_SPAN) return false;
    const i = this.heapPos[s] as number;
    if (i < 0) return false;
    this.removeAt(i);
    this.release(s);
    return true;
  }

  /** The time of the event of `handle`, or −1 once it has run or was cancelled. */
  timeOf(handle: number): number {
    this.settle();
    const s = handle % SLOT_SPAN;
    if ((this.gen[s] as number) !== (handle - s) / SLOT_SPAN) return -1;
    const i = this.heapPos[s] as number;
    return i < 0 ? -1 : (this.time[i] as number);
  }

  /**
   * Dispatch every event due at or before `untilNs` in (time, class, insertion) order, then set the clock to
   * `untilNs` (whole nanoseconds). `dispatch` reads the event from `kind`, `a`, `b`, `domain`. `stop`, when given, is
   * asked after each event and ends the run early (the clock stays at that event's time).
   */
  runUntil(untilNs: number, dispatch: () => void, stop?: () => boolean): void {
    for (;;) {
      this.settle();
      if (this.size === 0 || (this.time[0] as number) > untilNs) break;
      this.nowNs = this.time[0] as number;
      const s = this.slot[0] as number;
      this.kind = this.kinds[s] as number;
      this.a = this.argA[s] as number;
      this.b = this.argB[s] as number;
      this.domain = this.dom[s] as number;
      // The root stays in the heap as a hole until the event schedules one (at()) or anything else reads the heap.
      this.hole = true;
      this.release(s);
      dispatch();
      if (stop?.()) return;
    }
    const end = Math.floor(untilNs);
    if (end > this.nowNs) this.nowNs = end;
  }

  /**
   * The events of `domain` now pending, in the order they will run, written into `out` (reused: nothing is
   * allocated once it is large enough); returns how many.
   */
  eventsInto(domain: number, out: EventList): number {
    this.settle();
    let n = 0;
    for (let i = 0; i < this.size; i++) {
      const s = this.slot[i] as number;
      if (this.dom[s] !== domain) continue;
      if (n === out.time.length) out.grow();
      const t = this.time[i] as number;
      const o = this.order[i] as number;
      // Insertion into place by (time, order): a domain has a handful of events pending.
      let j = n++;
      while (
        j > 0 &&
        ((out.time[j - 1] as number) > t || ((out.time[j - 1] as number) === t && (out.order[j - 1] as number) > o))
      ) {
        out.move(j - 1, j);
        j--;
      }
      out.time[j] = t;
      out.order[j] = o;
      out.handle[j] = s + (this.gen[s] as number) * SLOT_SPAN;
      out.kind[j] = this.kinds[s] as number;
      out.a[j] = this.argA[s] as number;
      out.b[j] = this.argB[s] as number;
    }
    return n;
  }

  /** The events of `domain` now pending, in the order they will run: [handle, time, kind, a, b] each. */
  eventsOf(domain: number): [number, number, number, number, number][] {
    this.settle();
    const out: [number, number, number, number, number][] = [];
    const order: number[] = [];
    for (let i = 0; i < this.size; i++) {
      const s = this.slot[i] as number;
      if (this.dom[s] !== domain) continue;
      out.push([
        s + (this.gen[s] as number) * SLOT_SPAN,
        this.time[i] as number,
        this.kinds[s] as number,
        this.argA[s] as number,
        this.argB[s] as number,
      ]);
      order.push(this.order[i] as number);
    }
    const idx = out
      .map((_, k) => k)
      .sort((x, y) => (out[x]?.[1] as number) - (out[y]?.[1] as number) || (order[x] as number) - (order[y] as number));
    return idx.map((k) => out[k] as [number, number, number, number, number]);
  }

  /** Move the pending event of `handle` to `atNs` with argument `b`, keeping its place among events of one instant. */
  reschedule(handle: number, atNs: number, b: number): void {
    this.settle();
    const s = handle % SLOT_SPAN;
    const i = this.heapPos[s] as number;
    if (i < 0 || (this.gen[s] as number) !== (handle - s) / SLOT_SPAN)
      throw new Error(`reschedule: event ${handle} is not pending`);
    this.argB[s] = b;
    const o = this.order[i] as number;
    this.removeAt(i);
    this.up(this.size++, atNs, o, s);
  }

  /** The earliest pending time among events of `domain` whose kind is not `except`, or +Infinity. */
  nextInDomain(domain: number, except = -1): number {
    this.settle();
    let t = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.size; i++) {
      const s = this.slot[i] as number;
      if (this.dom[s] === domain && this.kinds[s] !== except && (this.time[i] as number) < t) t = this.time[i] as number;
    }
    return t;
  }

  /** Take the hole the last dispatched event left at the root out of the heap (the last entry fills it). */
  private settle(): void {
    if (this.hole) {
      this.hole = false;
      this.removeAt(0);
    }
  }

  private release(s: number): void {
    this.heapPos[s] = -1;
    this.gen[s] = ((this.gen[s] as number) + 1) & 0x7fffff;
    this.freeSlots[this.freeTop++] = s;
  }

  /** Sift the entry (t, o, s) up from the hole at `i`. */
  private up(i: number, t: number, o: number, s: number): void {
    const time = this.time;
    const order = this.order;
    const slot = this.slot;
    const pos = this.heapPos;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pt = time[p] as number;
      if (pt < t || (pt === t && (order[p] as number) < o)) break;
      time[i] = pt;
      order[i] = order[p] as number;
      const ps = slot[p] as number;
      slot[i] = ps;
      pos[ps] = i;
      i = p;
    }
    time[i] = t;
    order[i] = o;
    slot[i] = s;
    pos[s] = i;
  }

  /** Remove heap entry `i`: the last entry fills the hole, sifted down or up. */
  private removeAt(i: number): void {
    const last = --this.size;
    if (i === last) return;
    const time = this.time;
    const order = this.order;
    const slot = this.slot;
    const t = time[last] as number;
    const o = order[last] as number;
    const s = slot[last] as number;
    if (i > 0) {
      const p = (i - 1) >> 1;
      const pt = time[p] as number;
      if (pt > t || (pt === t && (order[p] as number) > o)) {
        this.up(i, t, o, s);
        return;
      }
    }
    this.down(i, last, t, o, s);
  }

  /** Sift the entry (t, o, s) down from the hole at `i` of a heap of `n` entries. */
  private down(i: number, n: number, t: number, o: number, s: number): void {
    const time = this.time;
    const order = this.order;
    const slot = this.slot;
    const pos = this.heapPos;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      let ct = time[l] as number;
      if (r < n) {
        const rt = time[r] as number;
        if (rt < ct || (rt === ct && (order[r] as number) < (order[l] as number))) {
          c = r;
          ct = rt;
        }
      }
      if (t < ct || (t === ct && o < (order[c] as number))) break;
      time[i] = ct;
      order[i] = order[c] as number;
      const cs = slot[c] as number;
      slot[i] = cs;
      pos[cs] = i;
      i = c;
    }
    time[i] = t;
    order[i] = o;
    slot[i] = s;
    pos[s] = i;
  }

  private grow(): void {
    const old = this.time.length;
    const n = old * 2;
    const f = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    const g = (a: Int32Array, fill = 0) => {
      const b = new Int32Array(n).fill(fill);
      b.set(a);
      return b;
    };
    this.time = f(this.time);
    this.order = f(this.order);
    this.argB = f(this.argB);
    this.slot = g(this.slot);
    this.kinds = g(this.kinds);
    this.argA = g(this.argA);
    this.dom = g(this.dom);
    this.heapPos = g(this.heapPos, -1);
    this.gen = f(this.gen);
    // Every slot is taken (the stack is empty): the new ones, old … n − 1, go on it.
    this.freeSlots = new Int32Array(n);
    this.freeSlotRange(old, n);
  }
}

/** A reusable list of one domain's pending events (Scheduler.eventsInto). */
export class EventList {
  time = new Float64Array(16);
  order = new Float64Array(16);
  handle = new Float64Array(16);
  b = new Float64Array(16);
  kind = new Int32Array(16);
  a = new Int32Array(16);

  /** Copy entry `from` to `to`. */
  move(from: number, to: number): void {
    this.time[to] = this.time[from] as number;
    this.order[to] = this.order[from] as number;
    this.handle[to] = this.handle[from] as number;
    this.b[to] = this.b[from] as number;
    this.kind[to] = this.kind[from] as number;
    this.a[to] = this.a[from] as number;
  }

  grow(): void {
    const n = this.time.length * 2;
    const f = (x: Float64Array) => {
      const y = new Float64Array(n);
      y.set(x);
      return y;
    };
    const g = (x: Int32Array) => {
      const y = new Int32Array(n);
      y.set(x);
      return y;
    };
    this.time = f(this.time);
    this.order = f(this.order);
    this.handle = f(this.handle);
    this.b = f(this.b);
    this.kind = g(this.kind);
    this.a = g(this.a);
  }
}
