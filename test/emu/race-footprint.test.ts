// The footprints the sleep sets rely on (footprint.ts), checked state by state: two enabled steps called
// independent run in either order to the same state, and neither disables the other. Every reachable state of one
// submitter for every order; for two submitters (the kernel order, and a QP beside a PSM sender before 2019) the
// states of 400 seeded random schedules here, every reachable one under soak (and for every order in
// race.prop.test.ts).
import { describe, expect, it } from 'vitest';
import { VARIANTS } from '../../src/emu/race/variants.js';
import { SOAK } from '../support/runs.js';
import { commutingPairs } from './race-helpers.js';

const SAMPLE = SOAK ? undefined : { walks: 400, seed: 20261203 };

describe('footprints', () => {
  for (const variant of VARIANTS) {
    it(`${variant}, 1 submitter: steps called independent commute and never disable each other, on every state`, () => {
      const r = commutingPairs(variant, 1);
      expect(r.failures).toEqual([]);
      expect(r.pairs).toBeGreaterThan(r.states / 4);
    });
  }

  it(`kernel, 2 submitters: the same${SOAK ? ', on every state' : ' on the states of 400 random schedules'}`, () => {
    const r = commutingPairs('kernel', 2, SAMPLE);
    expect(r.failures).toEqual([]);
    expect(r.states).toBeGreaterThan(SOAK ? 80_000 : 2_000);
    expect(r.pairs).toBeGreaterThan(r.states / 4);
  });

  it(`psm-pre-2019, a QP and a PSM sender: the same${SOAK ? ', on every state' : ' on the states of 400 random schedules'}`, () => {
    const r = commutingPairs('psm-pre-2019', ['qp', 'psm'], SAMPLE);
    expect(r.failures).toEqual([]);
    expect(r.states).toBeGreaterThan(SOAK ? 80_000 : 2_000);
    expect(r.pairs).toBeGreaterThan(r.states / 4);
  });
});
