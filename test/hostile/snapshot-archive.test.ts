// Hostile and broken archives: escaping names and links, odd entry types, duplicates, bombs of
// size and entry count, truncated and non-gzip files. Each is exit 65 naming the archive (and the
// entry), nothing outside the temporary directory changes, and the temporary directory is removed.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hfi1SdmaError } from '../../src/errors.js';
import { openSnapshot } from '../../src/snapshot/open.js';
import { entriesOf, hashTree, type RawEntry, tarBytes, writeArchive } from '../snapshot/craft.js';
import { expectRefused, type HostileEnv, hostileEnv } from '../snapshot/hostile-env.js';

let env: HostileEnv;
let base: RawEntry[];
beforeAll(async () => {
  env = await hostileEnv();
  base = entriesOf(env.good);
});
afterAll(() => env.restore());

/** A tar of `count` empty files f0, f1, …: one header as the tar library writes it, its name and checksum changed. */
function emptyFiles(count: number): Buffer {
  const template = tarBytes([{ path: 'f0', data: '' }], false);
  const out = Buffer.alloc(count * 512 + 1024); // the end: two zero blocks
  for (let i = 0; i < count; i++) {
    const h = out.subarray(i * 512, (i + 1) * 512);
    template.copy(h);
    h.fill(0, 0, 100).write(`f${i}`, 0, 'ascii');
    h.fill(0x20, 148, 156); // the checksum is taken with its own field as spaces
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  }
  return out;
}

let n = 0;
function crafted(entries: readonly RawEntry[]): string {
  return writeArchive(join(env.base, `evil${++n}.tar.gz`), entries);
}

describe('entries that would land outside, or are not plain files', () => {
  const cases: [string, RawEntry, RegExp][] = [
    ['a .. name', { path: 'instants/0/../../../canary/victim', data: 'x' }, /climbs out with \.\./],
    ['an absolute name', { path: '/tmp/evil', data: 'x' }, /is an absolute path/],
    [
      'a symbolic link out',
      { path: 'instants/0/sys/x', type: 'SymbolicLink', linkpath: '../../../../canary' },
      /:instants\/0\/sys\/x: is a symbolic link to \.\.\/\.\.\/\.\.\/\.\.\/canary, outside the snapshot/,
    ],
    [
      'an absolute symbolic link',
      { path: 'instants/0/sys/x', type: 'SymbolicLink', linkpath: '/etc/passwd' },
      /outside the snapshot/,
    ],
    [
      'a symbolic link inside',
      { path: 'instants/0/sys/x', type: 'SymbolicLink', linkpath: 'y' },
      /:instants\/0\/sys\/x: is a link to y; a snapshot holds only files and directories/,
    ],
    ['a hard link', { path: 'instants/0/sys/x', type: 'Link', linkpath: 'snapshot.json' }, /is a hard link/],
    ['a FIFO', { path: 'instants/0/sys/kernel/debug/hfi1/hfi1_0/fifo', type: 'FIFO' }, /is a FIFO entry/],
    ['a device node', { path: 'instants/0/dev-zero', type: 'CharacterDevice' }, /is a CharacterDevice entry/],
  ];
  for (const [what, entry, message] of cases) {
    it(what, async () => {
      await expectRefused(env, crafted([entry, ...base]), message);
    });
  }

  it('a name twice, and a file where a directory must be', async () => {
    const sdes = base.find((e) => e.path.endsWith('/sdes')) as RawEntry;
    await expectRefused(env, crafted([...base.slice(0, -1), sdes, ...base.slice(-1)]), /sdes: appears twice or clashes/);
    await expectRefused(env, crafted([{ path: 'instants/0/sys', data: 'x' }, ...base]), /appears twice or clashes/);
  });
});

describe('bombs: the limits are checked before anything is written', () => {
  it('more uncompressed bytes than the limit', async () => {
    const bomb = crafted([{ path: 'instants/0/big', data: Buffer.alloc(1024 * 1024) }, ...base]);
    const err = await openSnapshot(bomb, { limits: { maxBytes: 256 * 1024, maxEntries: 1000 }, tmpDir: env.tmp }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Hfi1SdmaError);
    expect((err as Hfi1SdmaError).exitCode).toBe(65);
    expect((err as Error).message).toBe(
      `${bomb}: unpacks to more than 262144 bytes, the limit for a snapshot; it is not one written by 'hfi1-sdma snapshot'`,
    );
    expect(readdirSync(env.tmp)).toEqual([]);
  });

  it('more entries than the limit', async () => {
    const many = Array.from({ length: 200 }, (_, i) => ({ path: `instants/0/f${i}`, data: '' }));
    const bomb = crafted([...many, ...base]);
    const err = await openSnapshot(bomb, { limits: { maxBytes: 1 << 30, maxEntries: 100 }, tmpDir: env.tmp }).catch(
      (e: unknown) => e,
    );
    expect((err as Hfi1SdmaError).exitCode).toBe(65);
    expect((err as Error).message).toMatch(new RegExp(`^${bomb}: holds more than 100 entries, the limit for a snapshot`));
    expect(readdirSync(env.tmp)).toEqual([]);
  });

  it('through the command line, one past the real limit of 50,000 entries (50,001 empty files)', async () => {
    // Compressed fast: 25 MB of headers, which the reader unpacks whatever the level.
    const bomb = join(env.base, `evil${++n}.tar.gz`);
    writeFileSync(bomb, gzipSync(emptyFiles(50_001), { level: 1 }));
    await expectRefused(env, bomb, /holds more than 50000 entries, the limit for a snapshot/);
  });

  it('the limits still read a real snapshot', async () => {
    const snap = await openSnapshot(env.good, { limits: { maxBytes: 64 * 1024, maxEntries: 100 }, tmpDir: env.tmp });
    expect(snap.instants).toHaveLength(1);
    await snap.close();
    expect(readdirSync(env.tmp)).toEqual([]);
  });
});

describe('truncated, corrupt and foreign files', () => {
  it('a snapshot cut at several sizes is exit 65 naming it, and leaves nothing', async () => {
    const whole = readFileSync(env.good);
    const cuts = [0, 10, 100, Math.floor(whole.length / 3), Math.floor(whole.length / 2), whole.length - 20, whole.length - 1];
    for (const cut of cuts) {
      const f = join(env.base, `cut-${cut}.tar.gz`);
      writeFileSync(f, whole.subarray(0, cut));
      await expectRefused(
        env,
        f,
        /cannot unpack \(it is not gzip-compressed, or it is truncated or corrupt\)|holds no snapshot\.json/,
      );
    }
  });

  it('a corrupted byte in the middle', async () => {
    const whole = Buffer.from(readFileSync(env.good));
    const mid = Math.floor(whole.length / 2);
    whole[mid] = (whole[mid] as number) ^ 0xff;
    const f = join(env.base, 'flipped.tar.gz');
    writeFileSync(f, whole);
    await expectRefused(env, f, /cannot unpack|not valid JSON|listed in snapshot\.json but not in the archive/);
  });

  it('a plain (not gzip) tar, a gzip of text, and a tar without its end blocks', async () => {
    const plain = join(env.base, 'plain.tar.gz');
    writeFileSync(plain, tarBytes(base));
    await expectRefused(env, plain, /it is not gzip-compressed/);
    const text = join(env.base, 'text.tar.gz');
    writeFileSync(text, gzipSync('hello\n'));
    await expectRefused(env, text, /cannot unpack/);
    const whole = tarBytes(base);
    // Each cut falls inside a 512-byte block (a cut on a block boundary reads as a tar without its end blocks).
    const middle = Math.floor(whole.length / 1024) * 512 + 100;
    for (const cut of [1000, middle, whole.length - 1100]) {
      const cutTar = join(env.base, `cut-tar-${cut}.tar.gz`);
      writeFileSync(cutTar, gzipSync(whole.subarray(0, cut)));
      await expectRefused(env, cutTar, /cannot unpack \(the tar inside is cut short or damaged: Truncated input/);
    }
    const noEnd = join(env.base, 'noend.tar.gz');
    writeFileSync(noEnd, gzipSync(tarBytes(base.slice(0, 3), false)));
    await expectRefused(env, noEnd, /holds no snapshot\.json/);
  });

  it('the canary is where it was', () => {
    expect(hashTree(env.canary)).toBe(env.canaryHash);
  });
});
