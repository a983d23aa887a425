// The reduced searches against the plain one: symmetry, sleep sets and both keep the distinct
// states, the lost and wasted wake-ups and the length of the shortest lost wake-up for every
// order with 1 submitter and the kernel order with 2 (each reduction alone on the kernel order; every one of them
// on every order with 1 and 2 submitters under soak), and that schedule still replays to a sender left asleep.
// Senders of two kinds: a QP with a PSM queue and two QPs on the kernel order, one QP and one IPoIB queue before
// 2019; the mirrored orders, a QP with a PSM queue before 2019 and the rest under soak (race.prop.test.ts). The
// plain search of the kernel order also has each of its lost wake-ups taken apart. Each search runs once in this
// file (they are deterministic).
import { describe, expect, it } from 'vitest';
import { Canonizer } from '../../src/emu/race/canon.js';
import { DEFAULT_BOUND, explore as exploreOnce, type RaceOptions, type RaceResult } from '../../src/emu/race/explorer.js';
import { REDUCTIONS, type Reduction } from '../../src/emu/race/search.js';
import { capture, stateKey } from '../../src/emu/race/state.js';
import { isEnabled, lostWaiter, runStep } from '../../src/emu/race/steps.js';
import { replaySchedule } from '../../src/emu/race/trace.js';
import { VARIANTS, type Variant } from '../../src/emu/race/variants.js';
import { buildWorld, Pc, type SenderKind } from '../../src/emu/race/world.js';
import { anatomy } from './race-helpers.js';

const searched = new Map<string, RaceResult>();
/** The search for `opts`, run once per file: several tests compare the same ones. */
function explore(opts: RaceOptions): RaceResult {
  const { variant, submitters, senders, bound, seed, reduce = 'all', keepAll = false } = opts;
  const key = [variant, submitters, senders?.join(',') ?? 'psm', bound, seed, reduce, keepAll].join(' ');
  let r = searched.get(key);
  if (!r) {
    r = exploreOnce(opts);
    searched.set(key, r);
  }
  return r;
}

/** The exhaustive search; the plain one keeps a schedule of every lost wake-up (the counts are the same). */
const run = (variant: Variant, submitters: number, reduce: Reduction): RaceResult =>
  explore({ variant, submitters, bound: DEFAULT_BOUND, seed: 1, reduce, keepAll: reduce === 'none' });

/** What a reduction must keep. */
const kept = (r: RaceResult) => [
  r.states,
  r.lostWakeups,
  r.wastedWakeups,
  r.cut,
  r.maxDepth,
  r.lostSchedule?.length ?? null, // the shortest lost wake-up
  r.lostForGood,
  r.forGoodSchedule?.length ?? null, // the shortest lost for good
];

describe('reduced searches keep the counts of the plain one', () => {
  for (const variant of VARIANTS) {
    for (const n of variant === 'kernel' ? [1, 2] : [1]) {
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

  const MIXED: [Variant, SenderKind[]][] = [
    ['kernel', ['qp']],
    ['kernel', ['qp', 'psm']],
    ['kernel', ['qp', 'qp']],
    ['psm-pre-2019', ['qp']],
    ['psm-pre-2019', ['ipoib']],
  ];
  for (const [variant, senders] of MIXED) {
    it(`${variant}, senders ${senders.join(',')}`, () => {
      const go = (reduce: Reduction) =>
        explore({ variant, submitters: senders.length, senders, bound: DEFAULT_BOUND, seed: 1, reduce });
      const plain = go('none');
      const all = go('all');
      expect([...kept(all), all.lostByKind]).toEqual([...kept(plain), plain.lostByKind]);
      expect(all.graphSteps).toBe(plain.graphSteps);
      expect(all.steps).toBeLessThan(plain.steps);
      // Only senders of one kind are interchangeable: a QP and a PSM queue are never folded together.
      if (senders.length === 2 && senders[0] !== senders[1]) expect(all.statesExplored).toBe(all.states);
      if (senders.length === 2 && senders[0] === senders[1]) expect(all.statesExplored).toBeLessThan(all.states);
      expect(plain.lostByKind.qp + plain.lostByKind.psm + plain.lostByKind.ipoib).toBeGreaterThanOrEqual(plain.lostWakeups);
      if (all.lostSchedule) expect(lostWaiter(replaySchedule(variant, senders, all.lostSchedule).world)).not.toBeNull();
    });
  }

  it('a QP and a PSM sender: the QP is lost in as many states as the PSM one under the kernel order, the PSM one more often before 2019', () => {
    const counts = (variant: Variant) => {
      const r = explore({ variant, submitters: 2, senders: ['qp', 'psm'], bound: DEFAULT_BOUND, seed: 1 });
      return { states: r.states, lost: r.lostWakeups, byKind: r.lostByKind, wasted: r.wastedWakeups };
    };
    expect(counts('kernel')).toEqual({ states: 83752, lost: 136, byKind: { qp: 68, psm: 68, ipoib: 0 }, wasted: 128 });
    // The pre-2019 PSM callback adds lost wake-ups of the PSM sender only: the QP's iowait_sleep
    // always called sdma_progress under waitlock.
    expect(counts('psm-pre-2019')).toEqual({ states: 89714, lost: 208, byKind: { qp: 68, psm: 140, ipoib: 0 }, wasted: 128 });
  });

  it('two QPs: the second one is not harvested when only one request fits, unlike two PSM queues (need 0)', () => {
    const qp = explore({ variant: 'kernel', submitters: 2, senders: ['qp', 'qp'], bound: DEFAULT_BOUND, seed: 1 });
    const psm = explore({ variant: 'kernel', submitters: 2, bound: DEFAULT_BOUND, seed: 1 });
    expect({ states: qp.states, lost: qp.lostWakeups, wasted: qp.wastedWakeups }).toEqual({
      states: 78255,
      lost: 126,
      wasted: 90,
    });
    expect({ states: psm.states, lost: psm.lostWakeups, wasted: psm.wastedWakeups }).toEqual({
      states: 83752,
      lost: 136,
      wasted: 128,
    });
  });

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

describe('the plain search', () => {
  it('kernel: the only lost wake-ups are a whole retirement between the free-count check and the sample (sdma_check_progress order)', () => {
    for (const [n, schedules, lost] of [
      [1, 1741, 5],
      [2, 66034, 136],
    ] as const) {
      const r = run('kernel', n, 'none');
      expect({ schedules: r.schedules, cut: r.cut, lost: r.lostWakeups }).toEqual({ schedules, cut: 0, lost });
      expect(r.lostSchedules).toHaveLength(lost);
      for (const schedule of r.lostSchedules) {
        const a = anatomy(replaySchedule('kernel', n, schedule));
        expect(a.avail).toBeGreaterThan(a.check);
        expect(a.avail).toBeLessThan(a.sample);
      }
    }
  });
});

describe('symmetry', () => {
  it('a QP and a PSM sender at mirrored places are two states, not one', () => {
    const a = buildWorld('kernel', ['qp', 'psm']);
    const b = buildWorld('kernel', ['psm', 'qp']);
    runStep(a, 0, null); // the QP takes tail_lock
    runStep(b, 0, null); // the PSM sender takes tail_lock
    const ca = new Canonizer(a, true);
    const cb = new Canonizer(b, true);
    ca.canonical(a);
    cb.canonical(b);
    expect(cb.key.toString()).not.toBe(ca.key.toString());
    expect([ca.orbit, cb.orbit]).toEqual([1, 1]);
    const c = buildWorld('kernel', ['psm', 'qp']);
    runStep(c, 1, null); // the QP of world c takes tail_lock: the same state as a's, renamed
    const cc = new Canonizer(c, true);
    cc.canonical(c);
    expect(cc.key.toString()).toBe(ca.key.toString());
  });

  it('two QPs and a PSM sender: only the QPs are interchangeable', () => {
    const w = buildWorld('kernel', ['qp', 'psm', 'qp']);
    const c = new Canonizer(w, true);
    c.canonical(w);
    expect(c.orbit).toBe(1);
    runStep(w, 0, null); // one QP moves: which of the two did is one of 2
    c.canonical(w);
    expect(c.orbit).toBe(2);
  });

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
