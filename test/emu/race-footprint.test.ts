// The footprints the sleep sets rely on (footprint.ts), checked on every reachable state: two
// enabled steps called independent run in either order to the same state, and neither disables
// the other. Two submitters for the kernel order, one for every order (two for every order in
// race.prop.test.ts under soak).
import { describe, expect, it } from 'vitest';
import { VARIANTS } from '../../src/emu/race/variants.js';
import { commutingPairs } from './race-helpers.js';

describe('footprints', () => {
  const cases = VARIANTS.map((v) => [v, v === 'kernel' ? 2 : 1] as const);
  for (const [variant, n] of cases) {
    it(`${variant}, ${n} submitter(s): steps called independent commute and never disable each other`, () => {
      const r = commutingPairs(variant, n);
      expect(r.failures).toEqual([]);
      expect(r.pairs).toBeGreaterThan(r.states / 4);
    });
  }

  it('psm-pre-2019, a QP and a PSM sender: steps called independent commute and never disable each other', () => {
    const r = commutingPairs('psm-pre-2019', ['qp', 'psm']);
    expect(r.failures).toEqual([]);
    expect(r.pairs).toBeGreaterThan(r.states / 4);
  });
});
