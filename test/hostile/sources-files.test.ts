// A source that is not the kernel's file: a FIFO, a link to /dev/zero or /dev/urandom, a file far
// larger than any real one. Each is refused at once (never a hang, never an unbounded read) and
// named on stderr; the CLI runs as a child so that a hang would show as the child's own timeout.
import { spawnSync } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, rmSync, writeSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHILD_LIMIT_MS, cli, goodTree, IS_ROOT, replaceWith, tempRoots } from './sources-tree.js';

const fresh = tempRoots();

/** The child exited by itself (no timeout kill), in well under the limit. */
function exitedByItself(r: { code: number | null; signal: string | null; ms: number }): void {
  expect(r.signal).toBeNull();
  expect(r.code).not.toBeNull();
  expect(r.ms).toBeLessThan(CHILD_LIMIT_MS);
}

describe('a FIFO in place of a source never blocks', () => {
  it.each([
    ['sdes', 'sdes'],
    ['counters', 'counters'],
    ['counter_names', 'counterNames'],
    ['/proc/interrupts', 'interrupts'],
    ['sdma0/vl', 'vl'],
    ['sdma0/cpu_list', 'cpuList'],
    ['the ring-size parameter', 'param'],
  ] as const)('%s: engines exits 0 and names the FIFO on stderr', (_what, key) => {
    const t = goodTree(fresh());
    replaceWith(t[key], 'fifo');
    const r = cli(t.root, ['engines']);
    exitedByItself(r);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${t[key]}: is a FIFO (named pipe), not a regular file`);
  });

  it('ring 0 with a FIFO as sdes: 69 naming the file and why', () => {
    const t = goodTree(fresh());
    replaceWith(t.sdes, 'fifo');
    const r = cli(t.root, ['ring', '0']);
    exitedByItself(r);
    expect(r.code).toBe(69);
    expect(r.stderr).toContain(`${t.sdes}: is a FIFO (named pipe), not a regular file`);
  });

  it('a FIFO as hw_counters/SDMAInt0, the only counter source besides /proc/interrupts: named, seq from interrupts', () => {
    const hw: Record<string, string> = {};
    for (const k of ['SDEDscFdCn', 'SDMAInt', 'SDMAErrCt', 'SDMAIdInt', 'SDMAPrIntCn'])
      for (const e of [0, 1]) hw[`${k}${e},32`] = '1\n';
    const t = goodTree(fresh(), { debugfs: 'absent', hwCounters: hw });
    replaceWith(`${t.cls}/hw_counters/SDMAInt0,32`, 'fifo');
    const r = cli(t.root, ['engines', '--json']);
    exitedByItself(r);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('hw_counters/SDMAInt0,32: is a FIFO (named pipe)');
  });
});

describe('a link to an endless device is refused without reading it', () => {
  it.each([
    ['sdes', 'dev-zero'],
    ['sdes', 'dev-urandom'],
    ['interrupts', 'dev-zero'],
    ['counters', 'dev-urandom'],
  ] as const)('%s → %s: the link leads out of the tree, named and not followed', (key, kind) => {
    const t = goodTree(fresh());
    replaceWith(t[key], kind);
    const r = cli(t.root, ['engines']);
    exitedByItself(r);
    expect(r.code, r.stderr).toBe(0);
    const target = kind === 'dev-zero' ? '/dev/zero' : '/dev/urandom';
    expect(r.stderr).toContain(`${t[key]}: is a symbolic link to ${target}, outside the tree ${t.root}: not followed`);
  });

  it.runIf(IS_ROOT)('a character device node inside the tree (mknod, as root): named as one, never opened', () => {
    const t = goodTree(fresh());
    rmSync(t.sdes);
    expect(spawnSync('mknod', ['-m', '666', t.sdes, 'c', '1', '5']).status).toBe(0);
    const r = cli(t.root, ['engines']);
    exitedByItself(r);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${t.sdes}: is a character device, not a regular file`);
  });
});

describe('a file larger than the source can be fails fast at its cap', () => {
  it('a 500 MB unterminated sdes line: 65 naming the file and the cap, in seconds', () => {
    const t = goodTree(fresh());
    const fd = openSync(t.sdes, 'w');
    writeSync(fd, 'SDE 0 CPU 3 STE s99_Running C 0x9 ');
    ftruncateSync(fd, 500_000_000); // sparse: the rest reads as NUL bytes, no newline anywhere
    closeSync(fd);
    const r = cli(t.root, ['engines']);
    exitedByItself(r);
    expect(r.code).toBe(65);
    // 16 engines × (1 KiB + 2048 descriptors × 160 bytes): the most a valid sdes of this ring size holds
    expect(r.stderr).toContain(`${t.sdes}: holds more than 5 MiB`);
  });

  it('a 2 MiB vl: 65 naming the file and the 1 MiB cap', () => {
    const t = goodTree(fresh());
    const fd = openSync(t.vl, 'w');
    ftruncateSync(fd, 2 << 20);
    closeSync(fd);
    const r = cli(t.root, ['engines']);
    exitedByItself(r);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${t.vl}: holds more than 1 MiB`);
  });
});
