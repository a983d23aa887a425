// The race explorer: exhaustive counts, where the lost wake-ups of each order come from, replaying a
// lost wake-up on the emulator, determinism of the random sampler. (The kernel order's lost wake-ups, taken apart,
// are in race-reduce.test.ts, beside the reduced searches of the same plain search.)
import { describe, expect, it } from 'vitest';
import { DEFAULT_BOUND, explore } from '../../src/emu/race/explorer.js';
import { isEnabled, lostWaiter, runStep } from '../../src/emu/race/steps.js';
import { replaySchedule } from '../../src/emu/race/trace.js';
import type { Variant } from '../../src/emu/race/variants.js';
import { buildWorld, IrqPc, Pc } from '../../src/emu/race/world.js';
import { anatomy } from './race-helpers.js';

/** The plain search (no reduction): its schedule counts are those of every interleaving. */
const exhaustive = (variant: Variant, submitters: number, keepAll = false) =>
  explore({ variant, submitters, bound: DEFAULT_BOUND, seed: 1, keepAll, reduce: 'none' });

describe('exhaustive exploration', () => {
  it('kernel-sample-first: every schedule of 1 and 2 submitters ends with every sender woken', () => {
    const one = exhaustive('kernel-sample-first', 1);
    expect({ schedules: one.schedules, states: one.states, cut: one.cut, lost: one.lostWakeups }).toEqual({
      schedules: 1909,
      states: 3021,
      cut: 0,
      lost: 0,
    });
    const two = exhaustive('kernel-sample-first', 2);
    expect({ schedules: two.schedules, states: two.states, cut: two.cut, lost: two.lostWakeups }).toEqual({
      schedules: 80138,
      states: 104690,
      cut: 0,
      lost: 0,
    });
    expect(two.wastedWakeups).toBeGreaterThan(0); // two senders compete for the room one packet frees
    expect(two.maxDepth).toBeLessThanOrEqual(DEFAULT_BOUND);
  });

  it('psm-pre-2019: lost wake-ups with the retirement after the sample, inside the window only waitlock closes', () => {
    const r = exhaustive('psm-pre-2019', 2, true);
    expect(r.schedules).toBe(74226);
    expect(r.lostWakeups).toBe(280);
    const late = r.lostSchedules.filter((s) => {
      const a = anatomy(replaySchedule('psm-pre-2019', 2, s));
      return a.avail > a.sample;
    });
    expect(late.length).toBeGreaterThan(0);
  });

  it('no-progress-check: lost wake-ups', () => {
    const r = exhaustive('no-progress-check', 1);
    expect(r.schedules).toBe(1342);
    expect(r.lostWakeups).toBe(9);
    expect(r.lostSchedule).not.toBeNull();
  });

  it('a bound shorter than the schedules cuts them, and the depth never exceeds it', () => {
    const r = explore({ variant: 'kernel', submitters: 2, bound: 12, seed: 1, reduce: 'none' });
    expect(r.cut).toBeGreaterThan(0);
    expect(r.maxDepth).toBe(12);
    expect(r.schedules).toBeLessThan(66034);
  });
});

describe('replaying a lost wake-up on the emulator', () => {
  for (const variant of ['psm-pre-2019', 'no-progress-check'] as const) {
    it(`${variant}: the sender stays asleep with the ring empty and no interrupt to come`, () => {
      const r = explore({ variant, submitters: 1, bound: DEFAULT_BOUND, seed: 1 }); // reduced, the default
      expect(r.reduce).toBe('all');
      expect(r.lostSchedule).not.toBeNull();
      const { world } = replaySchedule(variant, 1, r.lostSchedule ?? []);
      const { unit, e, chip } = world;
      const s = world.subs[0];
      if (!s) throw new Error('no submitter');
      // Let the emulator run on its own: the chip resumes, virtual time passes.
      unit.resume();
      unit.advance(50);
      expect(s.wait.queuedOn).toBe(e);
      expect(s.woken).toBe(0);
      expect(e.descqHead).toBe(e.descqTail);
      expect(e.freecnt()).toBeGreaterThanOrEqual(s.tx.numDesc);
      expect(chip.quiescent()).toBe(true);
      expect(e.running()).toBe(true);
      // The emulator's own periodic check saw the same lost wake-up.
      expect(unit.totals().lostWakeups).toBe(1);
    });
  }

  /** Run the submitter until `stopAt`, drain the ring, run a whole retirement, then the submitter to its end. */
  function retirementAt(variant: Variant, stopAt: number) {
    const w = buildWorld(variant, 1);
    const s = w.subs[0];
    if (!s) throw new Error('no submitter');
    const drive = (a: number, until: () => boolean) => {
      while (!until() && isEnabled(w, a)) runStep(w, a, null);
    };
    drive(0, () => s.pc === stopAt);
    drive(1, () => false);
    drive(2, () => w.irq.pc === IrqPc.exit);
    runStep(w, 2, null);
    drive(0, () => s.pc === Pc.done || s.pc === Pc.asleep);
    return { s, w };
  }

  it('kernel: a whole retirement between the free-count check and the sample loses the wake-up', () => {
    const { s, w } = retirementAt('kernel', Pc.sample);
    expect(s.pc).toBe(Pc.asleep);
    expect(lostWaiter(w)).toBe(s);
  });

  it('kernel and kernel-sample-first: the same retirement once the sample is taken makes the sender retry and place its request', () => {
    for (const variant of ['kernel', 'kernel-sample-first'] as const) {
      const { s, w } = retirementAt(variant, Pc.lock);
      expect(s.pc).toBe(Pc.done);
      expect(lostWaiter(w)).toBeNull();
      expect(w.e.descqTail - w.e.descqHead).toBe(s.tx.numDesc);
    }
  });
});

describe('random sampling', () => {
  it('the same seed gives the same schedules and trace; another seed other schedules', () => {
    const a = explore({ variant: 'psm-pre-2019', submitters: 2, bound: DEFAULT_BOUND, seed: 7, schedules: 400 });
    const b = explore({ variant: 'psm-pre-2019', submitters: 2, bound: DEFAULT_BOUND, seed: 7, schedules: 400 });
    expect(b).toEqual(a);
    expect(a.mode).toBe('random');
    expect(a.schedules).toBe(400);
    expect(a.lostWakeups).toBeGreaterThan(0);
    const ta = replaySchedule('psm-pre-2019', 2, a.lostSchedule ?? []).rows;
    const tb = replaySchedule('psm-pre-2019', 2, b.lostSchedule ?? []).rows;
    expect(tb).toEqual(ta);
    const c = explore({ variant: 'psm-pre-2019', submitters: 2, bound: DEFAULT_BOUND, seed: 8, schedules: 400 });
    expect([c.states, c.lostSchedule]).not.toEqual([a.states, a.lostSchedule]);
  });
});
