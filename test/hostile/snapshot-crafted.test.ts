// Crafted snapshots that got past the checks before: entry names carrying terminal escapes or a
// fake line, a manifest nested a hundred thousand deep, a file listed in `once` for a hundred
// instants (a small archive that filled the disk), and a manifest whose units are not the
// archive's. Each is refused with 65 and a plain message, or read without amplification.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSnapshot } from '../../src/snapshot/open.js';
import { type Loose, type RawEntry, withManifest } from '../snapshot/craft.js';
import { expectRefused, hostileSuite } from '../snapshot/hostile-env.js';

const suite = hostileSuite();
const crafted = suite.crafted;

describe('entry names with control characters never reach the terminal as they are', () => {
  it.each([
    [
      'an OSC title and a clear-screen',
      { path: '\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31mRED', type: 'SymbolicLink', linkpath: 'x' },
    ],
    ['a newline and a fake message', { path: 'a\nhfi1-sdma: all engines healthy', type: 'FIFO' }],
    ['an escape in a file name', { path: 'instants/0/sys/\x1b[2Jx', data: 'x' }],
  ] as [string, RawEntry][])('%s: 65, escaped', async (_what, entry) => {
    const stderr = await expectRefused(suite.env(), crafted([entry, ...suite.base()]), /./);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: raw control characters are what must not appear
    expect(stderr.trimEnd()).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/\\x1b|\\x0a/);
  });
});

describe('a manifest path with control characters', () => {
  it('is refused (65) and shown escaped', async () => {
    const evil = withManifest(suite.base(), (m: Loose) => {
      m.once.push('sys/\x1b]0;TITLE\x07x');
    });
    const stderr = await expectRefused(suite.env(), crafted(evil), /once\[\d+\] holds a control character/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: raw control characters are what must not appear
    expect(stderr.trimEnd()).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  });
});

describe('a manifest nested a hundred thousand deep', () => {
  it('is refused as malformed (65), not a crash (70)', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    await expectRefused(
      suite.env(),
      crafted(withManifest(suite.base(), () => deep)),
      /snapshot\.json: the manifest must be an object, got \[\[\[\[/,
    );
    const inField = withManifest(suite.base(), (m: Loose) => JSON.stringify(m).replace(/"units":\[[^\]]*\]/, `"units":${deep}`));
    await expectRefused(suite.env(), crafted(inField), /units/);
  });
});

describe('a file listed in once, for many instants', () => {
  it('is linked into each instant, not copied: one file on disk, whatever its size', async () => {
    const big = Buffer.alloc(1 << 20, 0x41);
    const param = 'sys/module/hfi1/parameters/zz';
    const entries = withManifest(suite.base(), (m: Loose) => {
      m.once.push(param);
      m.instants[0].sources.push({ path: param, captured: true });
      for (let i = 1; i < 40; i++) m.instants.push({ ...m.instants[0], timeMs: i, sources: [], barBlocks: [] });
    });
    const s = await openSnapshot(crafted([{ path: `instants/0/${param}`, data: big }, ...entries]), { tmpDir: suite.env().tmp });
    try {
      const first = lstatSync(join(s.tree, 'instants/0', param));
      expect(first.nlink).toBe(40);
      expect(lstatSync(join(s.tree, 'instants/39', param)).ino).toBe(first.ino);
    } finally {
      await s.close();
    }
    expect(readdirSync(suite.env().tmp)).toEqual([]);
  });
});

describe('a manifest whose units are not the archive', () => {
  it('a unit the archive holds nothing of (renamed, or added): 65, no phantom unit', async () => {
    const renamed = withManifest(suite.base(), (m: Loose) => {
      m.units[0].name = 'hfi1_1';
    });
    await expectRefused(suite.env(), crafted(renamed), /units\[0\] is hfi1_1, but the archive holds no file of it/);
    const extra = withManifest(suite.base(), (m: Loose) => {
      m.units.push({ name: 'hfi2_0', pci: '' });
    });
    await expectRefused(suite.env(), crafted(extra), /units\[1\] is hfi2_0, but the archive holds no file of it/);
  });

  it('a unit directory in the archive that the manifest does not list: 65', async () => {
    const stray = { path: 'instants/0/sys/class/infiniband/hfi1_7/fw_ver', data: '1.0\n' };
    await expectRefused(
      suite.env(),
      crafted([stray, ...suite.base()]),
      /sys\/class\/infiniband\/hfi1_7: is a unit that snapshot\.json does not list/,
    );
  });
});
