// The scheduler dispatches in (time, insertion) order, an event scheduled in the past runs now, and events
// scheduled while dispatching (more than its first thousand slots) keep that order.
import { describe, expect, it } from 'vitest';
import { Sfc32 } from '../../src/emu/prng.js';
import { Scheduler } from '../../src/emu/scheduler.js';

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
    expect(got).toEqual(want.map(([t, , k, a]) => [t, k, a]));
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
});
