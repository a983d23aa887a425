// Read-only checks against the real host, enabled with HFI1_SDMA_LIVE=1 (and root for debugfs/BAR).
import { describe, expect, it } from 'vitest';
import { findUnits, openHwBackend } from '../../src/hw/index.js';
import { isStateName } from '../../src/progress/state.js';

const LIVE = process.env.HFI1_SDMA_LIVE === '1';

describe.skipIf(!LIVE)('live host (HFI1_SDMA_LIVE=1)', () => {
  it('HFI1_SDMA_LIVE=1: finds at least one hfi1 unit with engines and a valid ring size', async () => {
    const units = await findUnits('/');
    expect(units.length).toBeGreaterThan(0);
    for (const u of units) {
      expect(u.engines).toBeGreaterThan(0);
      expect(u.engines).toBeLessThanOrEqual(16);
      expect([64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]).toContain(u.descqCnt);
    }
  });

  it('HFI1_SDMA_LIVE=1: samples every engine of unit 0 from whatever is readable', async () => {
    const b = await openHwBackend({ sysroot: '/' });
    try {
      const [info] = await b.units();
      if (!info) throw new Error('no unit');
      const samples = await (await b.unit(info.unit)).sample();
      expect(samples).toHaveLength(info.engines);
      for (const s of samples) {
        expect(s.sources.length).toBeGreaterThan(0);
        if (s.state !== null) expect(isStateName(s.state)).toBe(true);
        if (s.seq !== null) expect(s.seq % 2).toBe(0);
      }
    } finally {
      await b.close();
    }
  });

  it('HFI1_SDMA_LIVE=1: with sdes readable, the ring of engine 0 has (T(SW) − H(SW)) mod descq_cnt entries', async () => {
    const b = await openHwBackend({ sysroot: '/' });
    try {
      const [info] = await b.units();
      if (!info) throw new Error('no unit');
      if (!info.sources.some((s) => s.source === 'sdes' && s.readable)) return;
      const ring = await (await b.unit(info.unit)).ring(0);
      expect(ring.descriptors.length).toBe((ring.tail - ring.head) & (ring.descqCnt - 1));
    } finally {
      await b.close();
    }
  });
});
