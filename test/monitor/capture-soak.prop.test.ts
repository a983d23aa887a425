// The capture directory under a fault every second: emulated hosts whose engines stall one after another (a
// new host each time every engine has stalled), every first stall captured (no per-finding interval), real
// snapshots of the emulator. After every round the directory holds at most `keep` captures and `maxBytes` in
// all, the capture being written included, and nothing but captures and their temporary. A short run in npm
// test; minutes of virtual time under soak.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emuTake } from '../../src/cli/capture.js';
import { createEmuBackend, type EmuBackend } from '../../src/emu/index.js';
import { Captures } from '../../src/monitor/capture.js';
import { Monitor } from '../../src/monitor/monitor.js';
import { SOAK } from '../support/runs.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('capture-soak-');

const ENGINES = 4;
const ROUND_MS = 500;

/** A host whose engine k stops fetching at k + 1 s: a new stall every second. */
function host(seed: number): EmuBackend {
  const fault = Array.from({ length: ENGINES }, (_, k) => `stop-fetch@${(k + 1) * 1000}:${k}`);
  return createEmuBackend({
    seed,
    engines: ENGINES,
    descqCnt: undefined,
    workload: 'qp:gbps=0.1,size=4096-8192',
    atMs: 0,
    fault,
  });
}

describe('the capture directory with a fault every second', () => {
  it(`never holds more than its limits (${SOAK ? 'soak: 40 hosts' : '2 hosts'}, a stall per second)`, async () => {
    const dir = tmp();
    const keep = 3;
    // Room for three captures of a stalled 4-engine host (40-95 KiB each) and one being written.
    const maxBytes = 500_000;
    let backend = host(1);
    const lines: string[] = [];
    const c = new Captures({
      dir,
      limits: { keep, maxBytes, everyMs: 0, samples: 3, intervalMs: ROUND_MS },
      take: (file, trigger, how) => emuTake(backend)(file, trigger, how),
      pace: { kind: 'rounds', advance: (ms) => backend.advanceMs(ms) },
      wallNowMs: Date.now,
      log: (l) => lines.push(l),
    });
    let worst = { count: 0, bytes: 0 };
    for (let h = 0; h < (SOAK ? 40 : 2); h++) {
      // The next host once the capture of the last one is written: the same directory and limits carry on.
      if (h > 0) backend = host(h + 1);
      const monitor = new Monitor(backend, { stallMs: 400, strandMs: 200 });
      for (let t = 0; t <= (ENGINES + 1) * 1000 || c.busy; t += ROUND_MS) {
        c.observe(await monitor.round());
        await c.quiet();
        const names = readdirSync(dir);
        const done = names.filter((n) => !n.startsWith('.'));
        expect(names.filter((n) => n.startsWith('.')).length).toBeLessThanOrEqual(1);
        const bytes = names.reduce((s, n) => s + statSync(join(dir, n)).size, 0);
        expect(done.length).toBeLessThanOrEqual(keep);
        expect(bytes).toBeLessThanOrEqual(maxBytes);
        worst = { count: Math.max(worst.count, done.length), bytes: Math.max(worst.bytes, bytes) };
        backend.advanceMs(ROUND_MS);
      }
    }
    await c.finish();
    expect(c.counts.written).toBeGreaterThanOrEqual(SOAK ? 40 : 3);
    expect(c.counts.failed, lines.join('\n')).toBe(0);
    expect(c.counts.removed).toBeGreaterThan(0);
    expect(worst.count).toBe(keep);
  });
});
