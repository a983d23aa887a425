// A stall on engine 8 of a window 8-15 (an SR-IOV function of a CN5000 under hfi2), end to end: emulator →
// rendered sysroot → src/hw → classifier. It must be reported as engine 8, never as engine 0, and only there.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { openHwBackend } from '../../src/hw/index.js';
import { type Classification, classify, type EngineTrack, newTrack } from '../../src/progress/classify.js';

const FAULT_AT = 300;
const INTERVAL = 100;
const STALL_MS = 500;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a window of engines 8-15 through the rendered sysroot', () => {
  it('stop-fetch on engine 8 is stalled on engine 8 only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'window-stall-'));
    dirs.push(dir);
    const u = emuUnitFromOptions({
      seed: 3,
      engines: 8,
      firstEngine: 8,
      chip: 'jkr',
      driver: 'hfi2',
      ports: 2,
      descqCnt: undefined,
      workload: 'qp:gbps=10',
      atMs: undefined,
      fault: [`stop-fetch@${FAULT_AT}:8`],
    });
    u.runUntilMs(100);
    await writeSysroot(u, dir);
    const hw = await openHwBackend({ sysroot: dir });
    const tracks = new Map<number, EngineTrack>();
    const seen: { t: number; byEngine: Map<number, Classification> }[] = [];
    try {
      const unit = await hw.unit(0);
      expect(unit.info.engineIds).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
      for (let t = 100; t <= FAULT_AT + STALL_MS + 3 * INTERVAL; t += INTERVAL) {
        if (t > 100) {
          u.runUntilMs(t);
          await writeSysroot(u, dir);
        }
        const byEngine = new Map<number, Classification>();
        for (const s of await unit.sample()) {
          const track = tracks.get(s.engine) ?? newTrack();
          tracks.set(s.engine, track);
          byEngine.set(s.engine, classify(track, { ...s, timeMs: t }, { stallMs: STALL_MS, recoveryMs: 2000, descqCnt: 2048 }));
        }
        seen.push({ t, byEngine });
      }
    } finally {
      await hw.close();
    }
    const deadline = FAULT_AT + STALL_MS + 2 * INTERVAL;
    const hit = seen.find((r) => r.t <= deadline && r.byEngine.get(8)?.verdict === 'stalled');
    expect(hit, seen.map((r) => `${r.t}:${r.byEngine.get(8)?.verdict}`).join(' ')).toBeDefined();
    for (const r of seen) {
      expect([...r.byEngine.keys()]).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
      for (const [e, c] of r.byEngine) if (e !== 8) expect(['stalled', 'halted', 'gone']).not.toContain(c.verdict);
    }
  });
});
