// The engine-verdicts script, run as a user runs it, on a snapshot of an emulated host with a stalled engine.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'example-verdicts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('examples/engine-verdicts.mjs', () => {
  it('prints each engine of a snapshot with its verdict, and the finding', () => {
    const snap = join(dir, 'node.tar.gz');
    const capture = spawnSync(
      process.execPath,
      [
        'bin/hfi1-sdma.js',
        '--backend',
        'emu',
        '--engines',
        '4',
        '--workload',
        'mixed:gbps=10',
        '--fault',
        'stop-fetch@50:3',
        'snapshot',
        '-o',
        snap,
        '--samples',
        '4',
        '--interval-ms',
        '500',
      ],
      { encoding: 'utf8' },
    );
    expect(capture.status, capture.stderr).toBe(0);
    const r = spawnSync(process.execPath, ['examples/engine-verdicts.mjs', snap], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^hfi1_0\/0 \w+ \(/m);
    expect(r.stdout).toMatch(/^hfi1_0\/3 stalled \(chip-not-fetching\)$/m);
    expect(r.stdout).toMatch(/^SD101 hfi1_0 sdma3 stalled/m);
  });
});
