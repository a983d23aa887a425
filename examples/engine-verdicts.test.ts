// The engine-verdicts script, run as a user runs it, on a snapshot the library captured of an emulated host with a
// stalled engine; and on a host without an adapter, where it says so and exits 66.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureSnapshot } from 'hfi1-sdma';
import { createEmuBackend } from 'hfi1-sdma/emulator';
import { afterAll, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./engine-verdicts.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'example-verdicts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('engine-verdicts.mjs', () => {
  it('prints each engine of a snapshot with its verdict, and the finding', async () => {
    const emu = await createEmuBackend({ engines: 4, workload: 'mixed:gbps=1', faults: ['stop-fetch@50:3'] });
    const snap = join(dir, 'node.tar.gz');
    try {
      // Four instants half a second of virtual time apart: the stall is confirmed within the capture.
      const s = await captureSnapshot(emu, { output: snap, samples: 4, intervalMs: 500 });
      expect(s.timesMs).toEqual([0, 500, 1000, 1500]);
    } finally {
      await emu.close();
    }
    const r = spawnSync(process.execPath, [script, snap], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^hfi1_0\/0 \w+ \(/m);
    expect(r.stdout).toMatch(/^hfi1_0\/3 stalled \(chip-not-fetching\)$/m);
    expect(r.stdout).toMatch(/^SD101 hfi1_0 sdma3 stalled/m);
  });

  it('on a host with no unit, says so and exits 66 (never the emulator)', () => {
    const r = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^engine-verdicts: openBackend: no hfi1 or hfi2 unit under .*sys\/class\/infiniband/);
    expect(r.status).toBe(66);
  });
});
