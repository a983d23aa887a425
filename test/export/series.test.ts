// How many series a unit costs Prometheus: a 16-engine unit with every kind of waiter visible stays under 400,
// every shipped alert still expressible (promtool checks them over these series elsewhere).
import { describe, expect, it } from 'vitest';
import type { PortCounters } from '../../src/backend.js';
import { Sampler } from '../../src/export/sampler.js';
import { PORT_COUNTER_NAMES } from '../../src/hw/parse/port-counters.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { psmWaiter, qpWaiter } from '../support/waiters.js';

// Every engine busy, one with an error bit, one stranded QP and a PSM writer: the most series a round can have.
const busy: Script = (e, t) => ({ dh: t + e, dt: t + e + 100, dqf: e, err: e === 3 ? 1n << 20n : 0n });

/** The exporter's text after `rounds` refreshes 100 ms apart. */
async function served(b: FakeBackend, rounds: number): Promise<string> {
  let now = 0;
  const sampler = new Sampler({
    backend: b,
    buildInfo: { version: '0', backend: 'hw' },
    minIntervalMs: 0,
    stallMs: 1000,
    nowMs: () => now,
    log: () => {},
  });
  for (let i = 0; i < rounds; i++) {
    await sampler.refresh();
    now += 100;
    b.advanceMs(100);
  }
  return sampler.metrics.text.metrics();
}

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
    const lines = (await served(b, 4)).split('\n').filter((l) => l.startsWith('hfi1_sdma_'));
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

  it('two ports with their counters, a stall by cause and the bulk service still stay under 400', async () => {
    // Engine 5 stalls (hardware head frozen behind its tail); port 2 counts XmitWait while it sends nothing.
    const stalls: Script = (e, t) => (e === 5 ? { dh: 10, dt: 20, hh: 10, ht: 20 } : busy(e, t));
    const counters = (port: number, t: number): PortCounters => {
      const c: PortCounters = { port, values: {} as PortCounters['values'], sources: {}, saturated: [] };
      for (const n of PORT_COUNTER_NAMES) {
        c.values[n] = n === 'xmitWait' ? BigInt(t * 1000) : BigInt(port);
        c.sources[n] = 'debugfs';
      }
      return c;
    };
    const b = new FakeBackend(stalls, 16, 2048, {
      kind: 'hw',
      flavour: { driver: 'cornelis', chip: 'jkr', ports: 2 },
      link: { state: 'ACTIVE', physState: 'LinkUp', rate: '200 Gb/sec (4X HDR)' },
      portCounters: (t) => [counters(1, t), counters(2, t)],
      settings: {
        useBulksvc: true,
        bulksvc: { bulksvc_num_sdma: '4' },
        bulkServiceEngines: [12, 13, 14, 15],
        numSdma: 0,
        numVls: 8,
        capMask: '0x4c09a08cb9a',
        sdmaEnabled: true,
        evidence: [],
      },
      waiters: {
        at: () => [qpWaiter({ qpn: 0x1a, engine: 3 }), psmWaiter()],
        visibility: [
          { kind: 'qp', visible: true, source: 'qp_stats' },
          { kind: 'psm', visible: true, source: 'proc' },
          { kind: 'ipoib', visible: true, source: 'kmsg', partial: 'only timed-out queues' },
        ],
      },
    });
    const text = await served(b, 30);
    const lines = text.split('\n').filter((l) => l.startsWith('hfi1_sdma_'));
    expect(lines.length).toBeLessThan(400);
    expect(text).toMatch(/^hfi1_sdma_port_xmit_wait_total\{device="hfi1_0",port="2"\} [1-9]/m);
    expect(text).toContain('hfi1_sdma_bulk_service_engines{unit="hfi1_0"} 4');
    // One stalled engine, counted once, by one cause, on the port it sends on.
    const stalled = [...text.matchAll(/^hfi1_sdma_port_stalled_engines\{[^}]*\} (\d+)$/gm)].map((m) => Number(m[1]));
    expect(stalled.reduce((a, n) => a + n, 0)).toBe(1);
  });
});
