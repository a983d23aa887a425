// The emulator behind the exporter does bounded work per scrape, in slices that let the event loop
// run, and says once when its virtual time falls behind wall time.
import { describe, expect, it } from 'vitest';
import { type EmuPaceOptions, emuPacer } from '../../src/export/emu-pace.js';

/** An emulator costing `wallPerVirtual` wall ms per virtual ms, on a fake wall clock. */
function rig(wallPerVirtual: number, over: Partial<EmuPaceOptions> = {}) {
  let wallMs = 0;
  let virtualMs = 0;
  let yields = 0;
  const behind: number[] = [];
  const pace = emuPacer({
    advanceMs: (ms) => {
      virtualMs += ms;
      wallMs += ms * wallPerVirtual;
    },
    maxVirtualMsPerRound: 2000,
    wallBudgetMs: 500,
    sliceMs: 5,
    wallNowMs: () => wallMs,
    yieldToLoop: async () => {
      yields += 1;
    },
    stopped: () => false,
    onBehind: (lagMs) => behind.push(lagMs),
    ...over,
  });
  return { pace, virtual: () => virtualMs, wall: () => wallMs, yields: () => yields, behind };
}

describe('emulator pacing in the exporter', () => {
  it('a fast emulator catches up with the wall time since the last scrape, in slices that yield', async () => {
    const r = rig(0.1);
    expect(await r.pace(1000)).toBe(1000);
    expect(r.virtual()).toBe(1000);
    expect(r.yields()).toBe(200);
    expect(r.behind).toEqual([]);
  });

  it('after an hour idle, one scrape simulates at most the cap, and says once that virtual time is behind', async () => {
    const r = rig(0.1);
    expect(await r.pace(3_600_000)).toBe(2000);
    expect(r.wall()).toBeLessThanOrEqual(500);
    await r.pace(3_600_000);
    expect(r.behind).toHaveLength(1);
    expect(r.behind[0]).toBeGreaterThan(3_000_000);
  });

  it('a slow emulator stops at the wall budget each scrape: scrape work stays bounded instead of growing', async () => {
    const r = rig(10); // ten times slower than real time
    const walls: number[] = [];
    let elapsed = 1000;
    for (let i = 0; i < 10; i++) {
      const w0 = r.wall();
      await r.pace(elapsed);
      walls.push(r.wall() - w0);
      elapsed = 1000 + (r.wall() - w0); // the next scrape comes a second after this one ended
    }
    expect(Math.max(...walls)).toBeLessThanOrEqual(500 + 5 * 10);
    expect(r.behind).toHaveLength(1);
  });

  it('stops simulating once the exporter is stopping', async () => {
    let stop = false;
    const r = rig(0.1, {
      advanceMs: () => {
        stop = true;
      },
      stopped: () => stop,
    });
    expect(await r.pace(1000)).toBe(5);
  });
});
