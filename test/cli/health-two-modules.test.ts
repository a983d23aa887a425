// A host with both hfi1_0 and hfi2_0: unit numbers repeat across modules, so nothing may be keyed by
// the number. Engine 0 of hfi1_0 moves while engine 0 of hfi2_0 is stuck with work in flight, and a
// QP waits on engine 0 of hfi1_0 only: each unit's engine is judged and counted on its own.
import { describe, expect, it } from 'vitest';
import type { Backend, Unit } from '../../src/backend.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { qpWaiter } from '../support/waiters.js';

const moving: Script = (_e, t) => ({ dh: Math.floor(t / 100) * 64, dt: Math.floor(t / 100) * 64 + 200 });
const stuck: Script = () => ({ dh: 1000, dt: 1300, fetched: 1000 });

/** hfi1_0 (engines 0-1, moving, a QP waiting on engine 0) and hfi2_0 (engines 0-1, stuck) in one backend. */
function bothModules(): Backend & { advanceMs(ms: number): void } {
  const a = new FakeBackend(moving, 2, 2048, { waiters: { at: () => [qpWaiter({ qpn: 0x1a, engine: 0 })] } });
  const b = new FakeBackend(stuck, 2, 2048, {
    flavour: { module: 'hfi2', chip: 'jkr', driver: 'hfi2' },
    waiters: { at: () => [] },
  });
  return {
    kind: 'emu',
    units: async () => [...(await a.units()), ...(await b.units())],
    unit: async (id): Promise<Unit> => (id === 'hfi2_0' ? b.unit(id) : a.unit(id === 'hfi1_0' ? id : 0)),
    advanceMs: (ms) => {
      a.advanceMs(ms);
      b.advanceMs(ms);
    },
    close: async () => {
      await a.close();
      await b.close();
    },
  };
}

describe('hfi1_0 and hfi2_0 on one host', () => {
  it('health confirms the stall on hfi2_0 sdma0 while hfi1_0 sdma0 moves', async () => {
    const r = await runCli(['health', '--stall-ms', '400'], {}, false, '', bothModules());
    expect(r.code, r.stdout).toBe(2);
    expect(r.stdout).toMatch(/^CRITICAL: SD101 hfi2_0 sdma0 stalled \(chip-not-fetching\)/m);
    expect(r.stdout).not.toMatch(/hfi1_0 sdma0 stalled/);
  });

  it('engines counts the QP on hfi1_0 engine 0 only', async () => {
    const r = await runCli(['engines', '--json'], {}, false, '', bothModules());
    expect(r.code, r.stderr).toBe(0);
    const units = JSON.parse(r.stdout).units as { name: string; engines: { engine: number; waiters: number }[] }[];
    const waiters = units.flatMap((u) => u.engines.map((e) => `${u.name}/${e.engine}:${e.waiters}`));
    expect(waiters).toEqual(['hfi1_0/0:1', 'hfi1_0/1:0', 'hfi2_0/0:0', 'hfi2_0/1:0']);
  });
});
