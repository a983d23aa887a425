// The Promela model (spec/sdma-wakeup.pml) under SPIN beside the race explorer: per variant, SPIN's two verdicts
// (a sender left asleep with only other traffic to wake it; one left asleep for good, SPIN's invalid end state)
// are the explorer's, and every SPIN counterexample replays step for step on the explorer's engine into the same
// lost wake-up, as short as the explorer's shortest, told as `emu race` tells it. A small share here (one sender of
// each kind, two PSM queues); every mix up to 3 senders and 4 senders in the soak (spin.prop.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agreement } from '../../spec/agree.js';
import { Pan, parsePan, parseTrail, spinMissing } from '../../spec/spin.js';
import { storyTable } from '../../spec/story.js';
import { defaultBound, explore } from '../../src/emu/race/explorer.js';
import type { Variant } from '../../src/emu/race/variants.js';
import type { SenderKind } from '../../src/emu/race/world.js';

const missing = await spinMissing();
const SKIP = missing === null ? '' : ' (skipped: spin or a C compiler is not installed)';

/** What each variant allows, in both checkers: left asleep in the window, and for good. */
const EXPECTED: Record<Variant, { window: boolean; forGood: boolean }> = {
  kernel: { window: true, forGood: true },
  'psm-pre-2019': { window: true, forGood: true },
  'no-progress-check': { window: true, forGood: true },
  'kernel-sample-first': { window: false, forGood: false },
};

const SHARE: [Variant, SenderKind[]][] = [
  ['kernel', ['qp']],
  ['kernel', ['ipoib']],
  ['psm-pre-2019', ['psm']],
  ['no-progress-check', ['qp']],
  ['kernel-sample-first', ['qp']],
  ['kernel-sample-first', ['psm', 'psm']],
];

describe.skipIf(missing !== null)(`SPIN on the sleep/wake-up model${SKIP}`, () => {
  let pan: Pan;
  beforeAll(async () => {
    pan = await Pan.build();
    // Each check run once in this file (pan is deterministic): the shortest counterexamples of the kernel order
    // with one QP are asked for by three tests below.
    const check = pan.check.bind(pan);
    const checked = new Map<string, ReturnType<Pan['check']>>();
    pan.check = (variant, senders, property, opts = {}) => {
      const key = JSON.stringify([variant, senders, property, opts.trail === true, opts.shortest === true, opts.hashBits]);
      let r = checked.get(key);
      if (!r) {
        r = check(variant, senders, property, opts);
        checked.set(key, r);
      }
      return r;
    };
  }, 60_000);
  afterAll(() => pan?.close());

  it.each(SHARE)('%s, senders %j: the verdicts of SPIN and of the race explorer are the same', async (variant, senders) => {
    const a = await agreement(pan, variant, senders, { shortest: senders.length === 1 });
    const want = EXPECTED[variant];
    expect([variant, a.spin.window.verdict === 'lost', a.explorer.window]).toEqual([variant, want.window, want.window]);
    expect([variant, a.spin.end.verdict === 'lost', a.explorer.forGood]).toEqual([variant, want.forGood, want.forGood]);
    expect(a.replayAgrees).toEqual(want.window ? { window: true, end: true } : { window: null, end: null });
    expect(a.agree).toBe(true);
  });

  it('the shortest counterexamples are as long in both checkers: 14 steps to be left asleep under the kernel order', async () => {
    const spinWindow = await pan.check('kernel', ['qp'], 'window', { trail: true, shortest: true });
    const spinEnd = await pan.check('kernel', ['qp'], 'end', { trail: true, shortest: true });
    const r = explore({ variant: 'kernel', submitters: 1, senders: ['qp'], bound: defaultBound(1), seed: 1 });
    expect([spinWindow.trail?.length, spinEnd.trail?.length]).toEqual([r.lostSchedule?.length, r.forGoodSchedule?.length]);
    expect(spinWindow.trail?.length).toBe(14);
  });

  it('a counterexample is told as emu race tells its own: the table, then why the sender is stuck', async () => {
    const r = await pan.check('kernel', ['qp'], 'end', { trail: true, shortest: true });
    const story = storyTable('kernel', ['qp'], r.trail ?? []);
    expect(story).toMatch(/^step\s+actor\s+action\s+seq\s+head\s+tail\s+free\n/);
    expect(story).toMatch(/\n\s+14\s+S1\s+release waitlock; -EBUSY \(DQF \+ 1\), release tail_lock; sleep\s/);
    expect(story).toContain('S1 sleeps on dmawait for 9 descriptors while 63 are free');
    expect(story).toContain('S1 is a QP: its txreq parked on its work list makes its harvest need 9.');
  });
});

describe('reading pan', () => {
  const COMPLETE = `State-vector 88 byte, depth reached 45, errors: 0
     3515 states, stored
     4300 transitions (= stored+matched)
    1.327	total actual memory usage
`;

  it('takes the counts of a complete search', () => {
    expect(parsePan(COMPLETE)).toEqual({ errors: 0, states: 3515, transitions: 4300, depth: 45, memoryMb: 1.327 });
  });

  it('reads counts printed in e-notation', () => {
    const big = COMPLETE.replace('3515 states', '39400543 states').replace('4300 transitions', '1.2345678e+08 transitions');
    expect(parsePan(big)).toMatchObject({ states: 39400543, transitions: 123456780 });
  });

  it('an incomplete search is an error, never a verdict of none', () => {
    expect(() => parsePan(`pan: out of memory\n${COMPLETE}`)).toThrow(/did not cover every state \(out of memory\)/);
    expect(() => parsePan(`Warning: Search not completed\n${COMPLETE}`)).toThrow(/did not cover every state/);
    expect(() => parsePan('pan: error: max search depth too small\n')).toThrow(/no errors: \(\\d\+\)/);
  });

  it("keeps only the model's step lines of a replay", () => {
    expect(parseTrail('  1:\tproc  2 (:init:) -:336\n@@ 0 2 0 0 56 7\nspin: trail ends\n@@ 2 30 1 0 56 7\n')).toEqual([
      { actor: 0, code: 2, seq: 0, head: 0, tail: 56, free: 7 },
      { actor: 2, code: 30, seq: 1, head: 0, tail: 56, free: 7 },
    ]);
  });
});
