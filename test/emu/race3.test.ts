// The exhaustive search with three submitters, reduced (symmetric submitters, sleep sets): the
// counts are those the plain search finds (measured once with --reduce none: 2,772,614 schedules
// over 3,192,528 distinct states, 3,444 of them after a wasted wake-up, none with a lost one).
import { describe, expect, it } from 'vitest';
import { DEFAULT_BOUND, explore } from '../../src/emu/race/explorer.js';

describe('exhaustive exploration, 3 submitters', () => {
  it('kernel-sample-first: no schedule loses a wake-up', () => {
    const r = explore({ variant: 'kernel-sample-first', submitters: 3, bound: DEFAULT_BOUND, seed: 1 });
    expect({ states: r.states, lost: r.lostWakeups, wasted: r.wastedWakeups, cut: r.cut, maxDepth: r.maxDepth }).toEqual({
      states: 3_192_528,
      lost: 0,
      wasted: 3444,
      cut: 0,
      maxDepth: 75,
    });
    expect(r.lostSchedule).toBeNull();
    // What the reduction saved: about a sixth of the states stored, a sixth of the state graph's steps taken.
    expect(r.statesExplored).toBe(535_498);
    expect(r.steps).toBe(892_200);
  }, 120_000); // about 2.5 s of CPU; the bound only keeps a starved machine from failing it
});
