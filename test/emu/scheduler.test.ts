// The scheduler dispatches in (time, insertion) order, an event scheduled in the past runs now, and events
// scheduled while dispatching (more than its first thousand slots) keep that order; whatever a dispatched event does
// to the others (schedule, cancel, move, read them) it sees what a plain sorted list would hold.
import { describe, expect, it } from 'vitest';
import { Sfc32 } from '../../src/emu/prng.js';
import { EventList, Scheduler } from '../../src/emu/scheduler.js';

describe('scheduler', () => {
  it.each([1, 2, 3])('dispatches 20,000 events of random times in (time, insertion) order (seed %i)', (seed) => {
    const rng = new Sfc32(seed);
    const s = new Scheduler();
    const want: [number, number, number, number][] = []; // time, order, kind, a
    let order = 0;
    const add = (t: number) => {
      const at = Math.max(t, s.nowNs);
      const kind = rng.int(0, 30);
      const a = rng.int(-5, 1_000_000);
      s.at(t, kind, a, at / 2);
      want.push([at, order++, kind, a]);
    };
    for (let i = 0; i < 5_000; i++) add(rng.int(0, 50) * 1000); // many ties: order decides
    const got: [number, number, number][] = [];
    let wrongB = 0;
    s.runUntil(Number.POSITIVE_INFINITY, () => {
      got.push([s.nowNs, s.kind, s.a]);
      if (s.b !== s.nowNs / 2) wrongB++;
      // While dispatching: some in the past (run now), some later; the heap outgrows its first arrays.
      if (got.length < 15_000) add(s.nowNs + rng.int(-2, 3) * 1000);
    });
    want.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    expect(wrongB).toBe(0);
    // The first event out of order, if any (20,000 of them: one comparison, not one matcher each).
    const wanted = want.map(([t, , k, a]) => [t, k, a]);
    const first = wanted.findIndex((w, i) => JSON.stringify(w) !== JSON.stringify(got[i]));
    expect(first === -1 ? null : { at: first, got: got[first], want: wanted[first] }).toBeNull();
    expect(got).toHaveLength(wanted.length);
    expect(s.pending).toBe(0);
  });

  it('runUntil stops at its time and moves the clock there', () => {
    const s = new Scheduler();
    s.at(10, 1, 0);
    s.at(30, 2, 0);
    const seen: number[] = [];
    s.runUntil(20, () => seen.push(s.kind));
    expect(seen).toEqual([1]);
    expect(s.nowNs).toBe(20);
    expect(s.pending).toBe(1);
    s.after(5, 3, 0); // at 25, before the one at 30
    s.runUntil(40, () => seen.push(s.kind));
    expect(seen).toEqual([1, 3, 2]);
  });
  /** A pending event as a plain list holds it: unit events (domain −1) before an engine's at one instant. */
  interface Ref {
    handle: number;
    t: number;
    cls: number;
    n: number;
    kind: number;
    a: number;
    b: number;
    dom: number;
  }
  const before = (x: Ref, y: Ref) => x.t - y.t || x.cls - y.cls || x.n - y.n;

  it.each([4, 5, 6])('what a dispatched event schedules, cancels, moves and reads matches a sorted list (seed %i)', (seed) => {
    const rng = new Sfc32(seed);
    const s = new Scheduler();
    let ref: Ref[] = [];
    let n = 0;
    const add = (t: number) => {
      const dom = rng.int(-1, 3);
      const kind = rng.int(0, 9);
      const a = rng.int(0, 99);
      const b = rng.int(0, 99);
      const handle = s.at(t, kind, a, b, dom);
      ref.push({ handle, t: Math.max(t, s.nowNs), cls: dom < 0 ? 0 : 1, n: n++, kind, a, b, dom });
    };
    for (let i = 0; i < 600; i++) add(rng.int(0, 20) * 100);
    const list = new EventList();
    let dispatched = 0;
    // Every disagreement with the list, said at the end (thousands of checks: a matcher each would cost more than
    // the scheduler).
    const wrong: string[] = [];
    const same = (what: string, got: unknown, want: unknown) => {
      const g = JSON.stringify(got);
      const w = JSON.stringify(want);
      if (g !== w) wrong.push(`event ${dispatched}: ${what} ${g}, expected ${w}`);
    };
    s.runUntil(Number.POSITIVE_INFINITY, () => {
      ref.sort(before);
      const next = ref.shift() as Ref;
      same('dispatched', [s.nowNs, s.kind, s.a, s.b, s.domain], [next.t, next.kind, next.a, next.b, next.dom]);
      // Reads first, sometimes (the dispatched event is no longer pending), then changes in a random order.
      const ops = rng.int(0, 6);
      for (let k = 0; k < ops; k++) {
        const op = rng.int(0, 7);
        const pick = ref.length > 0 ? (ref[rng.int(0, ref.length - 1)] as Ref) : undefined;
        if (op <= 2 && dispatched < 3_000) add(s.nowNs + rng.int(-1, 5) * 100);
        else if (op === 3) {
          same('cancel', s.cancel(pick?.handle ?? next.handle), pick !== undefined);
          if (pick) ref = ref.filter((r) => r !== pick);
        } else if (op === 4 && pick) {
          const t = s.nowNs + rng.int(0, 5) * 100;
          s.reschedule(pick.handle, t, 7);
          pick.t = t;
          pick.b = 7;
        } else if (op === 5) {
          same('pending', s.pending, ref.length);
          same('timeOf the dispatched', s.timeOf(next.handle), -1);
          if (pick) same('timeOf', s.timeOf(pick.handle), pick.t);
        } else {
          const dom = rng.int(-1, 3);
          const want = ref.filter((r) => r.dom === dom).sort(before);
          const got = s.eventsInto(dom, list);
          same(
            `eventsInto(${dom})`,
            Array.from({ length: got }, (_, i) => [list.time[i], list.kind[i], list.a[i]]),
            want.map((r) => [r.t, r.kind, r.a]),
          );
          // (JSON says null for Infinity: compared as a string.)
          same(`nextInDomain(${dom})`, String(s.nextInDomain(dom)), String(want[0]?.t ?? Number.POSITIVE_INFINITY));
        }
      }
      dispatched++;
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(ref).toEqual([]);
    expect(s.pending).toBe(0);
    expect(dispatched).toBeGreaterThan(1_000);
  });
});
