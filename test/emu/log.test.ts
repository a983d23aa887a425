// The event log's digest is the sha256 of every record's bytes in the order written, whether the chunk holding a
// record is still kept, was dropped from the retained tail, or is the one being filled.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/emu/log.js';

/** sha256 of records (time, kind, engine, a, b, c) as float64s, the plain way. */
function plainDigest(records: number[][]): string {
  const h = createHash('sha256');
  for (const r of records) h.update(new Uint8Array(Float64Array.from(r).buffer));
  return h.digest('hex');
}

describe('event log digest', () => {
  it.each([
    ['fewer records than a chunk', 1_000, 1_000_000],
    ['several full chunks, all kept', 50_000, 1_000_000],
    ['more than it retains: the oldest chunks dropped', 90_000, 20_000],
  ])('%s', (_what, n, retain) => {
    const log = new EventLog(retain);
    const written: number[][] = [];
    for (let i = 0; i < n; i++) {
      const r = [i * 7.5, 1 + (i % 17), i % 16, i, -i, i * 3];
      log.write(r[0] as number, r[1] as number, r[2] as number, r[3] as number, r[4] as number, r[5] as number);
      written.push(r);
      if (i === 20_000) expect(log.digest()).toBe(plainDigest(written)); // asked mid-run, then writing goes on
    }
    expect(log.digest()).toBe(plainDigest(written));
    expect(log.count).toBe(n);
    const kept = log.records();
    expect(kept.length).toBeLessThanOrEqual(Math.max(retain, n % 16384) + 16384);
    expect(kept.at(-1)?.a).toBe(n - 1);
  });
});
