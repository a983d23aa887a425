// A healthy engine at line rate, read through the rendered sysroot as on a host: the classifier must never
// call it stalled, halted or gone. npm test runs 12 virtual seconds (over 4 million descriptors, 2 million an
// engine: a 21-bit counter wraps on each, the ring's slots a thousand times); npm run soak the full minute.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { openHwBackend } from '../../src/hw/index.js';
import { classify, newTrack, type Verdict } from '../../src/progress/classify.js';
import { SOAK } from '../support/runs.js';

const dir = mkdtempSync(join(tmpdir(), 'no-false-stall-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECONDS = SOAK ? 60 : 12;
const ROUNDS = (SECONDS * 1000) / 250;

describe('no false stall', () => {
  it(`${SECONDS} virtual seconds of healthy line-rate (2 engines at the per-engine rate of 16 at 100 Gb/s)`, async () => {
    const u = new EmuUnit({ seed: 3, engines: 2, workload: 'line-rate:gbps=12.5' });
    u.runUntilMs(100);
    await writeSysroot(u, dir);
    const hw = await openHwBackend({ sysroot: dir });
    const tracks = [newTrack(), newTrack()];
    const seen = new Map<Verdict, number>();
    let rounds = 0;
    try {
      const unit = await hw.unit(0);
      for (let t = 100; t <= 100 + SECONDS * 1000; t += 250) {
        u.runUntilMs(t);
        await writeSysroot(u, dir);
        for (const s of await unit.sample()) {
          const c = classify(
            tracks[s.engine] ?? newTrack(),
            { ...s, timeMs: t },
            { stallMs: 1000, recoveryMs: 2000, descqCnt: 2048 },
          );
          seen.set(c.verdict, (seen.get(c.verdict) ?? 0) + 1);
        }
        rounds += 1;
      }
    } finally {
      await hw.close();
    }
    expect(rounds).toBe(ROUNDS + 1);
    expect(seen.get('stalled') ?? 0).toBe(0);
    expect(seen.get('halted') ?? 0).toBe(0);
    expect(seen.get('gone') ?? 0).toBe(0);
    // The engines did work the whole time.
    expect((seen.get('progressing') ?? 0) + (seen.get('backpressure') ?? 0)).toBeGreaterThan(2 * ROUNDS * 0.9);
    expect(u.totals().descriptors).toBeGreaterThan(SECONDS * 340_000);
  });
});
