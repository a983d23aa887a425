// SPIN and the race explorer on every variant and every mix of QP, PSM and IPoIB senders up to three (the
// explorer's exhaustive search with three asymmetric senders takes seconds each), SPIN alone on every mix of four
// senders (under the sample-first order it covers the whole space: about 600,000 states and 170 MB each), within
// 2 GB, and one four-sender agreement where the explorer also covers the whole space.
// Under npm run soak only: many minutes of CPU.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agreement, senderMixes } from '../../spec/agree.js';
import { Pan, spinMissing } from '../../spec/spin.js';
import { VARIANTS } from '../../src/emu/race/variants.js';
import { SOAK } from '../support/runs.js';

const missing = await spinMissing();

describe.skipIf(!SOAK || missing !== null)(
  'SPIN beside the race explorer, every mix (under npm run soak only, with spin and a C compiler: many minutes)',
  () => {
    let pan: Pan;
    beforeAll(async () => {
      pan = await Pan.build({ optimize: true });
    }, 120_000);
    afterAll(() => pan?.close());

    for (const variant of VARIANTS) {
      it(`${variant}: both checkers give the same two verdicts for every mix of 1 to 3 senders, and SPIN's trails replay`, async () => {
        for (let n = 1; n <= 3; n++) {
          for (const senders of senderMixes(n)) {
            const a = await agreement(pan, variant, senders, { shortest: n <= 2 });
            expect([variant, senders, a.agree, a.replayAgrees]).toEqual([
              variant,
              senders,
              true,
              a.explorer.window ? { window: true, end: a.explorer.forGood ? true : null } : { window: null, end: null },
            ]);
            // The sample-first order never leaves a sender asleep; the others always can, and with three senders
            // only for as long as the others' traffic has not run.
            expect([variant, senders, a.explorer.window, a.explorer.forGood]).toEqual(
              variant === 'kernel-sample-first' ? [variant, senders, false, false] : [variant, senders, true, n !== 3],
            );
          }
        }
      }, 3_600_000);

      it(`${variant}, every mix of 4 senders: SPIN's verdicts, within 2 GB`, async () => {
        for (const senders of senderMixes(4)) {
          for (const property of ['window', 'end'] as const) {
            const r = await pan.check(variant, senders, property);
            expect([senders, property, r.verdict]).toEqual([
              senders,
              property,
              variant === 'kernel-sample-first' ? 'none' : 'lost',
            ]);
            expect(r.memoryMb).toBeLessThan(2048);
          }
        }
      }, 3_600_000);
    }

    it('kernel-sample-first, 4 QPs: both checkers cover the whole space and find no lost wake-up', async () => {
      const a = await agreement(pan, 'kernel-sample-first', ['qp', 'qp', 'qp', 'qp']);
      expect([a.agree, a.spin.window.verdict, a.spin.end.verdict, a.explorer.window]).toEqual([true, 'none', 'none', false]);
    }, 3_600_000);
  },
);
