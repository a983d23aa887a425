// The race explorer over random seeds: no sampled schedule of the sample-first order loses a
// wake-up with three submitters, and every lost wake-up sampled from the pre-2019 PSM order replays
// on the emulator as a sender left asleep. Under soak only (minutes, gigabytes): the reduced search
// against the plain one for every reduction and order, the footprints on every state of two
// submitters, three submitters of every order with the plain search's counts, four submitters.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BOUND, defaultBound, explore, type RaceResult } from '../../src/emu/race/explorer.js';
import { REDUCTIONS } from '../../src/emu/race/search.js';
import { lostWaiter } from '../../src/emu/race/steps.js';
import { replaySchedule } from '../../src/emu/race/trace.js';
import { VARIANTS } from '../../src/emu/race/variants.js';
import { fcParams, runs, SOAK } from '../support/runs.js';
import { commutingPairs } from './race-helpers.js';

const SAMPLES = runs(40, 2000);

describe('race explorer, random seeds', () => {
  it('kernel-sample-first, 3 submitters: no sampled schedule loses a wake-up', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff_ffff }), (seed) => {
        const r = explore({ variant: 'kernel-sample-first', submitters: 3, bound: DEFAULT_BOUND, seed, schedules: SAMPLES });
        expect(r.schedules).toBe(SAMPLES);
        expect(r.cut).toBe(0);
        expect(r.lostWakeups).toBe(0);
      }),
      fcParams(10, 200),
    );
  });

  it('psm-pre-2019: a sampled lost wake-up leaves the sender asleep on the emulator', () => {
    let replayed = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff_ffff }), fc.integer({ min: 1, max: 3 }), (seed, n) => {
        const r = explore({ variant: 'psm-pre-2019', submitters: n, bound: DEFAULT_BOUND, seed, schedules: SAMPLES });
        if (r.lostSchedule === null) return;
        replayed++;
        const { world } = replaySchedule('psm-pre-2019', n, r.lostSchedule);
        const s = lostWaiter(world);
        expect(s).not.toBeNull();
        world.unit.resume();
        world.unit.advance(20);
        expect(s?.wait.queuedOn).toBe(world.e);
        expect(world.chip.quiescent()).toBe(true);
        expect(world.unit.totals().lostWakeups).toBeGreaterThanOrEqual(1);
      }),
      fcParams(10, 200),
    );
    expect(replayed).toBeGreaterThan(0);
  });
});

/** What a reduction keeps of the plain search. */
const kept = (r: RaceResult) => [r.states, r.lostWakeups, r.wastedWakeups, r.cut, r.maxDepth, r.lostSchedule?.length ?? null];

describe.skipIf(!SOAK)('race explorer, exhaustive (under npm run soak only: minutes and gigabytes)', () => {
  it("every reduction keeps the plain search's counts, for every order, with 1 and 2 submitters", () => {
    for (const variant of VARIANTS) {
      for (const n of [1, 2]) {
        const plain = kept(explore({ variant, submitters: n, bound: DEFAULT_BOUND, seed: 1, reduce: 'none' }));
        for (const reduce of REDUCTIONS) {
          expect([
            variant,
            n,
            reduce,
            ...kept(explore({ variant, submitters: n, bound: DEFAULT_BOUND, seed: 1, reduce })),
          ]).toEqual([variant, n, reduce, ...plain]);
        }
      }
    }
  }, 600_000);

  it('a QP and a PSM sender in either order, and two QPs, before 2019 too: the reduced search keeps the plain counts, per kind too', () => {
    for (const variant of ['kernel', 'psm-pre-2019'] as const) {
      for (const senders of [
        ['qp', 'psm'],
        ['psm', 'qp'],
        ['qp', 'qp'],
      ] as const) {
        const go = (reduce: 'none' | 'all') =>
          explore({ variant, submitters: 2, senders: [...senders], bound: DEFAULT_BOUND, seed: 1, reduce });
        const plain = go('none');
        const all = go('all');
        expect([variant, senders, ...kept(all), all.lostByKind]).toEqual([variant, senders, ...kept(plain), plain.lostByKind]);
        expect(all.graphSteps).toBe(plain.graphSteps);
        expect(all.statesExplored === all.states).toBe(senders[0] !== senders[1]); // only alike senders are folded
        if (all.lostSchedule) expect(lostWaiter(replaySchedule(variant, [...senders], all.lostSchedule).world)).not.toBeNull();
      }
    }
  }, 600_000);

  it('footprints: steps called independent commute on every state of 2 submitters, every order', () => {
    for (const variant of VARIANTS) {
      const r = commutingPairs(variant, 2);
      expect([variant, r.failures]).toEqual([variant, []]);
    }
  }, 600_000);

  // The plain search's counts with 3 submitters (--reduce none: 30-80 s and about 1 GB each).
  const PLAIN3 = {
    kernel: { schedules: 2_661_817, states: 3_097_722, lost: 3936, wasted: 2004 },
    'psm-pre-2019': { schedules: 3_134_461, states: 3_798_144, lost: 8244, wasted: 2016 },
    'no-progress-check': { schedules: 1_352_789, states: 1_560_045, lost: 5076, wasted: 1236 },
    'kernel-sample-first': { schedules: 2_772_614, states: 3_192_528, lost: 0, wasted: 3444 },
  } as const;

  for (const variant of VARIANTS) {
    it(`${variant}, 3 submitters: the reduced search finds the plain search's counts`, () => {
      const r = explore({ variant, submitters: 3, bound: DEFAULT_BOUND, seed: 1 });
      const { schedules: _, ...want } = PLAIN3[variant];
      expect({ states: r.states, lost: r.lostWakeups, wasted: r.wastedWakeups }).toEqual(want);
      expect(r.cut).toBe(0);
      if (r.lostSchedule) expect(lostWaiter(replaySchedule(variant, 3, r.lostSchedule).world)).not.toBeNull();
      if (variant === 'kernel-sample-first') {
        // No schedule loses a wake-up; what the reduction saved: about a sixth of the states stored, a sixth of
        // the state graph's steps taken (npm test samples schedules of 3 submitters, above).
        expect(r.lostSchedule).toBeNull();
        expect({ maxDepth: r.maxDepth, statesExplored: r.statesExplored, steps: r.steps }).toEqual({
          maxDepth: 75,
          statesExplored: 535_498,
          steps: 892_200,
        });
      }
    }, 600_000);
  }

  it('3 senders of mixed kinds (2 QPs and a PSM queue, a QP and 2 PSM queues): the reduced search finds the plain counts, per kind too', () => {
    for (const variant of ['kernel', 'psm-pre-2019'] as const) {
      for (const senders of [
        ['qp', 'psm', 'qp'],
        ['psm', 'qp', 'psm'],
      ] as const) {
        const go = (reduce: 'none' | 'all') =>
          explore({ variant, submitters: 3, senders: [...senders], bound: DEFAULT_BOUND, seed: 1, reduce });
        const plain = go('none');
        const all = go('all');
        expect([variant, senders, ...kept(all), all.lostByKind]).toEqual([variant, senders, ...kept(plain), plain.lostByKind]);
        expect(all.statesExplored).toBeLessThan(all.states); // the two alike senders are folded
      }
    }
  }, 1_800_000);

  it('no-progress-check, 3 submitters: the plain search itself', () => {
    const r = explore({ variant: 'no-progress-check', submitters: 3, bound: DEFAULT_BOUND, seed: 1, reduce: 'none' });
    const p = PLAIN3['no-progress-check'];
    expect({ schedules: r.schedules, states: r.states, lost: r.lostWakeups, wasted: r.wastedWakeups }).toEqual(p);
  }, 600_000);

  it('kernel, 4 submitters: the lost wake-ups of the sdma_check_progress order, and the shortest replays', () => {
    const r = explore({ variant: 'kernel', submitters: 4, bound: defaultBound(4), seed: 1 });
    expect(r.cut).toBe(0);
    expect({ states: r.states, lost: r.lostWakeups, wasted: r.wastedWakeups }).toEqual({
      states: 298_587_148,
      lost: 164_152,
      wasted: 589_104,
    });
    expect(r.lostSchedule).toHaveLength(14);
    expect(lostWaiter(replaySchedule('kernel', 4, r.lostSchedule ?? []).world)).not.toBeNull();
  }, 3_600_000);

  it('kernel-sample-first, 4 submitters: no schedule loses a wake-up', () => {
    const r = explore({ variant: 'kernel-sample-first', submitters: 4, bound: defaultBound(4), seed: 1 });
    expect(r.cut).toBe(0);
    expect(r.lostWakeups).toBe(0);
    expect(r.states).toBe(307_101_940);
    expect(r.wastedWakeups).toBe(706_680);
  }, 3_600_000);
});
