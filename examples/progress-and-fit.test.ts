// sdma_progress and the ring arithmetic with no backend at all: the free count as the command's fit reports it
// for explicit counters, and sdma_progress deciding to sleep or go on.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freeCount, sdmaProgress } from 'hfi1-sdma/progress';
import { describe, expect, it } from 'vitest';

/** The installed command (the package's bin), wherever the package is. */
const bin = join(dirname(createRequire(import.meta.url).resolve('hfi1-sdma/package.json')), 'bin', 'hfi1-sdma.js');

/** `hfi1-sdma fit` on explicit counters, as JSON. */
function runFit(descqCnt: number, head: number, tail: number, numDesc: number) {
  const r = spawnSync(
    process.execPath,
    [
      bin,
      '--json',
      'fit',
      '--descq-cnt',
      String(descqCnt),
      '--head',
      String(head),
      '--tail',
      String(tail),
      '--num-desc',
      String(numDesc),
    ],
    { encoding: 'utf8' },
  );
  return { code: r.status, json: JSON.parse(r.stdout) as { free: number; fits: boolean } };
}

describe('the pure core agrees with the command', () => {
  it.each([
    [2048, 10_000, 12_040, 9],
    [2048, 10_000, 10_000, 9],
    [64, 0, 60, 4],
    [2048, 0xffff_fff0, 0x0000_0010, 40], // the counters wrapped
  ])('descq_cnt %i, head %i, tail %i, %i descriptors', (descqCnt, head, tail, numDesc) => {
    const free = freeCount(descqCnt, head, tail);
    const f = runFit(descqCnt, head, tail, numDesc);
    expect(f.json.free).toBe(free);
    expect(f.json.fits).toBe(free >= numDesc);
    expect(f.code).toBe(free >= numDesc ? 0 : 1);
  });

  it('sdma_progress: 1 once the head moved since the sample and the request fits, 0 otherwise', () => {
    const state = { descqCnt: 2048, descqHead: 10_000, descqTail: 12_040, seq: 40 };
    expect(sdmaProgress(state, 40, 9)).toBe(0); // nothing retired since the sender sampled the sequence
    expect(sdmaProgress({ ...state, descqHead: 10_100, seq: 42 }, 40, 9)).toBe(1);
    expect(sdmaProgress({ ...state, descqHead: 10_001, seq: 42 }, 40, 9)).toBe(0); // moved, but no room
  });
});
