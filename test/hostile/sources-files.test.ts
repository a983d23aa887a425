// A source that is not the kernel's file: a FIFO, a link to /dev/zero or /dev/urandom, a file far
// larger than any real one. Each is refused at once (never a hang, never an unbounded read) and
// named on stderr. A tree where a read could block runs in a child, so that a hang shows as the
// child's own timeout: one child for all of them (cliGuarded), each tree run alone in it.
import { closeSync, ftruncateSync, openSync, rmSync, writeSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from '../support/spawn.js';
import {
  type Case,
  CHILD_LIMIT_MS,
  cli,
  cliChild,
  cliGuarded,
  goodTree,
  IS_ROOT,
  type Oddity,
  type Run,
  replaceWith,
  tempRoots,
} from './sources-tree.js';

const fresh = tempRoots();

/** The child exited by itself (no timeout kill), in well under the limit. */
function exitedByItself(r: { code: number | null; signal: string | null; ms: number }): void {
  expect(r.signal).toBeNull();
  expect(r.code).not.toBeNull();
  expect(r.ms).toBeLessThan(CHILD_LIMIT_MS);
}

type Key = 'sdes' | 'counters' | 'counterNames' | 'interrupts' | 'vl' | 'cpuList' | 'param';

const FIFOS: readonly [string, Key][] = [
  ['sdes', 'sdes'],
  ['counters', 'counters'],
  ['counter_names', 'counterNames'],
  ['/proc/interrupts', 'interrupts'],
  ['sdma0/vl', 'vl'],
  ['sdma0/cpu_list', 'cpuList'],
  ['the ring-size parameter', 'param'],
];

const DEVICE_LINKS: readonly [Key, Oddity][] = [
  ['sdes', 'dev-zero'],
  ['sdes', 'dev-urandom'],
  ['interrupts', 'dev-zero'],
  ['counters', 'dev-urandom'],
];

/** The guarded runs by name, each with the file it replaced and the tree's root. */
const runs = new Map<string, { run: Run; file: string; root: string }>();

beforeAll(() => {
  const planned: { name: string; file: string; case: Case }[] = [];
  for (const [, key] of FIFOS) {
    const t = goodTree(fresh());
    replaceWith(t[key], 'fifo');
    planned.push({ name: `fifo ${key}`, file: t[key], case: { root: t.root, args: ['engines'] } });
  }
  const hw: Record<string, string> = {};
  for (const k of ['SDEDscFdCn', 'SDMAInt', 'SDMAErrCt', 'SDMAIdInt', 'SDMAPrIntCn'])
    for (const e of [0, 1]) hw[`${k}${e},32`] = '1\n';
  const t = goodTree(fresh(), { debugfs: 'absent', hwCounters: hw });
  replaceWith(`${t.cls}/hw_counters/SDMAInt0,32`, 'fifo');
  planned.push({
    name: 'fifo hw_counters',
    file: `${t.cls}/hw_counters/SDMAInt0,32`,
    case: { root: t.root, args: ['engines', '--json'] },
  });
  for (const [key, kind] of DEVICE_LINKS) {
    const d = goodTree(fresh());
    replaceWith(d[key], kind);
    planned.push({ name: `${kind} ${key}`, file: d[key], case: { root: d.root, args: ['engines'] } });
  }
  if (IS_ROOT) {
    const n = goodTree(fresh());
    rmSync(n.sdes);
    expect(spawnSync('mknod', ['-m', '666', n.sdes, 'c', '1', '5']).status).toBe(0);
    planned.push({ name: 'mknod sdes', file: n.sdes, case: { root: n.root, args: ['engines'] } });
  }
  const done = cliGuarded(planned.map((p) => p.case));
  planned.forEach((p, i) => {
    runs.set(p.name, { run: done[i] as Run, file: p.file, root: p.case.root });
  });
});

/** The guarded run named `name`. */
function guarded(name: string) {
  const found = runs.get(name);
  if (!found) throw new Error(`no guarded run ${name}`);
  return found;
}

describe('a FIFO in place of a source never blocks', () => {
  it.each(FIFOS)('%s: engines exits 0 and names the FIFO on stderr', (_what, key) => {
    const { run: r, file } = guarded(`fifo ${key}`);
    exitedByItself(r);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${file}: is a FIFO (named pipe), not a regular file`);
  });

  it('ring 0 with a FIFO as sdes: 69 naming the file and why', () => {
    const t = goodTree(fresh());
    replaceWith(t.sdes, 'fifo');
    // A child of its own: the one run here that exits 69, through the process's own exit path.
    const r = cliChild(t.root, ['ring', '0']);
    exitedByItself(r);
    expect(r.code).toBe(69);
    expect(r.stderr).toContain(`${t.sdes}: is a FIFO (named pipe), not a regular file`);
  });

  it('a FIFO as hw_counters/SDMAInt0, the only counter source besides /proc/interrupts: named, seq from interrupts', () => {
    const { run: r } = guarded('fifo hw_counters');
    exitedByItself(r);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('hw_counters/SDMAInt0,32: is a FIFO (named pipe)');
  });
});

describe('a link to an endless device is refused without reading it', () => {
  it.each(DEVICE_LINKS)('%s → %s: the link leads out of the tree, named and not followed', (key, kind) => {
    const { run: r, file, root } = guarded(`${kind} ${key}`);
    exitedByItself(r);
    expect(r.code, r.stderr).toBe(0);
    const target = kind === 'dev-zero' ? '/dev/zero' : '/dev/urandom';
    expect(r.stderr).toContain(`${file}: is a symbolic link to ${target}, outside the tree ${root}: not followed`);
  });

  it.runIf(IS_ROOT)('a character device node inside the tree (mknod, as root): named as one, never opened', () => {
    const { run: r, file } = guarded('mknod sdes');
    exitedByItself(r);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${file}: is a character device, not a regular file`);
  });
});

describe('a file larger than the source can be fails fast at its cap', () => {
  it('a 500 MB unterminated sdes line: 65 naming the file and the cap, in seconds', () => {
    const t = goodTree(fresh());
    const fd = openSync(t.sdes, 'w');
    writeSync(fd, 'SDE 0 CPU 3 STE s99_Running C 0x9 ');
    ftruncateSync(fd, 500_000_000); // sparse: the rest reads as NUL bytes, no newline anywhere
    closeSync(fd);
    // A child: were the cap lost, the read would take a child's memory and time, not the worker's; and the exit
    // path of 65 is the process's own.
    const r = cliChild(t.root, ['engines']);
    exitedByItself(r);
    expect(r.code).toBe(65);
    // 16 engines × (1 KiB + 2048 descriptors × 160 bytes): the most a valid sdes of this ring size holds
    expect(r.stderr).toContain(`${t.sdes}: holds more than 5 MiB`);
  });

  it('a 2 MiB vl: 65 naming the file and the 1 MiB cap', async () => {
    const t = goodTree(fresh());
    const fd = openSync(t.vl, 'w');
    ftruncateSync(fd, 2 << 20);
    closeSync(fd);
    const r = await cli(t.root, ['engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${t.vl}: holds more than 1 MiB`);
  });
});
