// How many series a unit costs Prometheus: a 16-engine unit with every kind of waiter visible stays under 400,
// every shipped alert still expressible (promtool checks them over these series elsewhere).
import { describe, expect, it } from 'vitest';
import { Sampler } from '../../src/export/sampler.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { psmWaiter, qpWaiter } from '../support/waiters.js';

// Every engine busy, one with an error bit, one stranded QP and a PSM writer: the most series a round can have.
const busy: Script = (e, t) => ({ dh: t + e, dt: t + e + 100, dqf: e, err: e === 3 ? 1n << 20n : 0n });

describe('series per unit', () => {
  it('a 16-engine unit with every kind of waiter visible serves under 400 series', async () => {
    const b = new FakeBackend(busy, 16, 2048, {
      kind: 'hw',
      link: { state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' },
      waiters: {
        at: () => [qpWaiter({ qpn: 0x1a, engine: 3 }), psmWaiter()],
        visibility: [
          { kind: 'qp', visible: true, source: 'qp_stats' },
          { kind: 'psm', visible: true, source: 'proc' },
          { kind: 'ipoib', visible: true, source: 'trace' },
        ],
      },
    });
    let now = 0;
    const sampler = new Sampler({
      backend: b,
      buildInfo: { version: '0', backend: 'hw' },
      minIntervalMs: 0,
      stallMs: 1000,
      nowMs: () => now,
      log: () => {},
    });
    for (let i = 0; i < 4; i++) {
      await sampler.refresh();
      now += 100;
      b.advanceMs(100);
    }
    const lines = (await sampler.metrics.text.metrics()).split('\n').filter((l) => l.startsWith('hfi1_sdma_'));
    expect(lines.length).toBeGreaterThan(16 * 10);
    expect(lines.length).toBeLessThan(400);
    // Per engine, no family fans out over every value of a label.
    const perEngine = new Map<string, number>();
    for (const l of lines) {
      const m = /^(\w+)\{[^}]*engine="3"/.exec(l);
      if (m) perEngine.set(m[1] as string, (perEngine.get(m[1] as string) ?? 0) + 1);
    }
    for (const [family, n] of perEngine) expect(n, family).toBeLessThanOrEqual(3);
  });
});
