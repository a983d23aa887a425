// The reduced searches against the plain one: symmetry, sleep sets and both keep the distinct
// states, the lost and wasted wake-ups and the length of the shortest lost wake-up for every
// order with 1 and 2 submitters (each reduction alone on the kernel order; every one of them on
// every order under soak), and that schedule still replays to a sender left asleep.
import { describe, expect, it } from 'vitest';
import { Canonizer } from '../../src/emu/race/canon.js';
import { DEFAULT_BOUND, explore, type RaceResult } from '../../src/emu/race/explorer.js';
import { REDUCTIONS, type Reduction } from '../../src/emu/race/search.js';
import { capture, stateKey } from '../../src/emu/race/state.js';
import { isEnabled, lostWaiter, runStep } from '../../src/emu/race/steps.js';
import { replaySchedule } from '../../src/emu/race/trace.js';
import { VARIANTS, type Variant } from '../../src/emu/race/variants.js';
import { buildWorld, Pc } from '../../src/emu/race/world.js';

const run = (variant: Variant, submitters: number, reduce: Reduction): RaceResult =>
  explore({ variant, submitters, bound: DEFAULT_BOUND, seed: 1, reduce });

/** What a reduction must keep. */
const kept = (r: RaceResult) => [
  r.states,
  r.lostWakeups,
  r.wastedWakeups,
  r.cut,
  r.maxDepth,
  r.lostSchedule?.length ?? null, // the shortest lost wake-up
];

describe('reduced searches keep the counts of the plain one', () => {
  for (const variant of VARIANTS) {
    for (const n of [1, 2]) {
      it(`${variant}, ${n} submitter${n === 1 ? '' : 's'}`, () => {
        const plain = run(variant, n, 'none');
        expect(plain.statesExplored).toBe(plain.states);
        expect(plain.sleptSteps).toBe(0);
        const reductions = variant === 'kernel' ? REDUCTIONS.filter((x) => x !== 'none') : (['all'] as const);
        for (const reduce of reductions) {
          const r = run(variant, n, reduce);
          expect([reduce, ...kept(r)]).toEqual([reduce, ...kept(plain)]);
          expect(r.graphSteps).toBe(plain.graphSteps);
          if (reduce !== 'symmetry') expect(r.steps).toBeLessThan(plain.steps);
          if (reduce !== 'por' && n > 1) expect(r.statesExplored).toBeLessThan(r.states);
          if (r.lostSchedule) {
            const { world } = replaySchedule(variant, n, r.lostSchedule);
            expect(lostWaiter(world)).not.toBeNull();
          }
        }
      });
    }
  }

  it('with 2 submitters, symmetry halves the states stored and sleep sets cut the steps further', () => {
    const plain = run('kernel', 2, 'none');
    const all = run('kernel', 2, 'all');
    expect({ schedules: plain.schedules, states: plain.states, lost: plain.lostWakeups, wasted: plain.wastedWakeups }).toEqual({
      schedules: 66034,
      states: 83752,
      lost: 136,
      wasted: 128,
    });
    expect(all.statesExplored).toBe(41939);
    expect(all.steps).toBe(61676);
    expect(all.schedules).toBe(16414);
  });

  it('a bound that cuts schedules: the reduced search reaches the same states within it, never deeper', () => {
    for (const bound of [12, 20, 30]) {
      const plain = explore({ variant: 'kernel', submitters: 2, bound, seed: 1, reduce: 'none' });
      const all = explore({ variant: 'kernel', submitters: 2, bound, seed: 1 });
      expect(all.cut).toBeGreaterThan(0);
      expect(all.maxDepth).toBe(bound);
      expect([bound, ...kept(all).slice(0, 3)]).toEqual([bound, ...kept(plain).slice(0, 3)]);
    }
  });
});

describe('symmetry', () => {
  it('the same steps taken by the other submitter give the same canonical key, counted twice', () => {
    const a = buildWorld('kernel', 2);
    const b = buildWorld('kernel', 2);
    runStep(a, 0, null);
    runStep(b, 1, null);
    expect(stateKey(capture(a))).not.toBe(stateKey(capture(b)));
    const ca = new Canonizer(a, true);
    const cb = new Canonizer(b, true);
    ca.canonical(a);
    cb.canonical(b);
    expect(cb.key.toString()).toBe(ca.key.toString());
    expect([ca.orbit, cb.orbit]).toEqual([2, 2]);
    expect(ca.place).toEqual([1, 0]); // the submitter that moved sorts after the one at its start
    expect(cb.place).toEqual([0, 1]);
    const plain = new Canonizer(a, false);
    plain.canonical(a);
    expect(plain.orbit).toBe(1);
    expect(plain.key.toString()).not.toBe(ca.key.toString());
  });

  it('identical submitters stand for one state; three at different places for six', () => {
    const w = buildWorld('kernel', 3);
    const c = new Canonizer(w, true);
    const orbit = (): number => {
      c.canonical(w);
      return c.orbit;
    };
    expect(orbit()).toBe(1);
    runStep(w, 0, null); // S1 takes tail_lock (no room)
    expect(orbit()).toBe(3);
    expect(isEnabled(w, 1)).toBe(false); // S2 waits for tail_lock
    while (w.subs[0]?.pc !== Pc.asleep) runStep(w, 0, null);
    runStep(w, 1, null); // S2 takes tail_lock; S3 still at its start
    expect(orbit()).toBe(6);
  });
});
