import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readError } from '../../src/hw/fsio.js';
import { probeRegularFile, readRegularFile, SourceFileError } from '../../src/hw/read-file.js';
import { spawnSync } from '../support/spawn.js';

const dir = mkdtempSync(join(tmpdir(), 'hfi1-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function failure(f: () => unknown): SourceFileError {
  try {
    f();
  } catch (e) {
    if (e instanceof SourceFileError) return e;
    throw e;
  }
  throw new Error('expected a SourceFileError');
}

describe('readRegularFile: regular files only, up to a cap', () => {
  it('reads a file of exactly the cap, refuses one byte more (EFBIG, E_PARSE naming the cap)', () => {
    const p = join(dir, 'exact');
    writeFileSync(p, Buffer.alloc(20_000, 0x41));
    expect(readRegularFile(p, 20_000)).toHaveLength(20_000);
    const e = failure(() => readRegularFile(p, 19_999));
    expect(e.code).toBe('EFBIG');
    expect(readError(e, p)).toMatchObject({ code: 'E_PARSE', message: expect.stringContaining('holds more than 19.5 KiB') });
  });

  it('reads an empty file and a file larger than its first buffer', () => {
    writeFileSync(join(dir, 'empty'), '');
    expect(readRegularFile(join(dir, 'empty'), 10)).toHaveLength(0);
    writeFileSync(join(dir, 'big'), Buffer.alloc(100_000, 7));
    expect(readRegularFile(join(dir, 'big'), 1 << 20).equals(Buffer.alloc(100_000, 7))).toBe(true);
  });

  it('refuses a FIFO, a device link and a directory before opening them (ENOTREG, E_UNAVAILABLE)', () => {
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    symlinkSync('/dev/zero', join(dir, 'zero'));
    mkdirSync(join(dir, 'd'));
    expect(failure(() => readRegularFile(fifo, 100)).detail).toBe('a FIFO (named pipe)');
    expect(failure(() => probeRegularFile(fifo)).detail).toBe('a FIFO (named pipe)');
    expect(failure(() => readRegularFile(join(dir, 'zero'), 100)).detail).toBe('a character device');
    const e = failure(() => readRegularFile(join(dir, 'd'), 100));
    expect(e.detail).toBe('a directory');
    expect(readError(e, join(dir, 'd'))).toMatchObject({ code: 'E_UNAVAILABLE', message: expect.stringContaining('replace it') });
  });
});
