// Realistic tar bombs at the real limits (npm run soak): a 1.5 GiB expansion of a few MB, and
// 200,000 entries. Both are refused with exit 65 naming the limit, in bounded time and memory,
// with nothing written to TMPDIR. (npm test covers the same paths with small limits.)
import { once } from 'node:events';
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hfi1SdmaError } from '../../src/errors.js';
import { openSnapshot } from '../../src/snapshot/open.js';
import { tarBytes } from '../snapshot/craft.js';

const SOAK = process.env.SOAK === '1';
let base: string;
let tmp: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'snap-bomb-'));
  tmp = join(base, 'tmp');
  mkdirSync(tmp);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A .tar.gz of one file of `bytes` zeros, streamed so the test itself stays small. */
async function zeroBomb(file: string, bytes: number): Promise<void> {
  const gz = createGzip({ level: 9 });
  const done = once(gz.pipe(createWriteStream(file)), 'close');
  const header = tarBytes([{ path: 'instants/0/zeros', data: '' }], false);
  header.write(bytes.toString(8).padStart(11, '0'), 124, 'ascii'); // the size field, then fix the checksum
  header.fill(' ', 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += header[i] as number;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  gz.write(header.subarray(0, 512));
  const chunk = Buffer.alloc(1024 * 1024);
  for (let left = bytes; left > 0; left -= chunk.length) {
    if (!gz.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await once(gz, 'drain');
  }
  gz.end(Buffer.alloc(1024));
  await done;
}

async function refused(file: string): Promise<{ message: string; ms: number; rssGrowthMiB: number }> {
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const err = await openSnapshot(file, { tmpDir: tmp }).catch((e: unknown) => e);
  const ms = performance.now() - t0;
  expect(err).toBeInstanceOf(Hfi1SdmaError);
  expect((err as Hfi1SdmaError).exitCode).toBe(65);
  expect(readdirSync(tmp)).toEqual([]);
  return { message: (err as Error).message, ms, rssGrowthMiB: (process.memoryUsage().rss - rss0) / 2 ** 20 };
}

describe('tar bombs at the real limits', () => {
  it.runIf(SOAK)(
    'a few MB expanding to 1.5 GiB is refused at 1 GiB (runs under npm run soak: SOAK=1)',
    async () => {
      const bomb = join(base, 'size.tar.gz');
      await zeroBomb(bomb, 1.5 * 2 ** 30);
      expect(statSync(bomb).size).toBeLessThan(4 * 2 ** 20);
      const r = await refused(bomb);
      expect(r.message).toBe(
        `${bomb}: unpacks to more than 1024 MiB, the limit for a snapshot; it is not one written by 'hfi1-sdma snapshot'`,
      );
      expect(r.ms).toBeLessThan(60_000);
      expect(r.rssGrowthMiB).toBeLessThan(200);
    },
    300_000,
  );

  it.runIf(SOAK)(
    '200,000 entries are refused at 50,000 (runs under npm run soak: SOAK=1)',
    async () => {
      const bomb = join(base, 'count.tar.gz');
      const gz = createGzip();
      const done = once(gz.pipe(createWriteStream(bomb)), 'close');
      for (let i = 0; i < 200_000; i += 1000) {
        const batch = Array.from({ length: 1000 }, (_, j) => ({ path: `instants/0/d${i}/f${j}`, data: '' }));
        gz.write(tarBytes(batch, false));
      }
      gz.end(Buffer.alloc(1024));
      await done;
      const r = await refused(bomb);
      expect(r.message).toMatch(/holds more than 50000 entries, the limit for a snapshot/);
      expect(r.ms).toBeLessThan(60_000);
    },
    300_000,
  );
});
