// The race explorer over random seeds: no sampled schedule of the sample-first order loses a
// wake-up with three submitters, and every lost wake-up sampled from the pre-2019 PSM order replays
// on the emulator as a sender left asleep. Under soak: the exhaustive search with three submitters.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BOUND, explore } from '../../src/emu/race/explorer.js';
import { lostWaiter } from '../../src/emu/race/steps.js';
import { replaySchedule } from '../../src/emu/race/trace.js';
import { fcParams, runs, SOAK } from '../support/runs.js';

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

  it(`kernel-sample-first, exhaustive with ${SOAK ? 3 : 1} submitter(s): no lost wake-up`, () => {
    const r = explore({ variant: 'kernel-sample-first', submitters: SOAK ? 3 : 1, bound: DEFAULT_BOUND, seed: 1 });
    expect(r.cut).toBe(0);
    expect(r.schedules).toBe(SOAK ? 2772614 : 1909);
    expect(r.lostWakeups).toBe(0);
  }, 600_000);
});
