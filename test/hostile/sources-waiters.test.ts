// The waiter sources when they are not the kernel's files: qp_stats replaced by a FIFO, a link to /dev/zero or
// /dev/urandom, a directory, a link loop; a /proc entry that is a device or a link out of the tree. Each is refused
// at once (never a hang, never an unbounded read), and the kind is "not visible" with the file named, never "no waiters".
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Clock, WaitersSample } from '../../src/backend.js';
import { openHwBackend } from '../../src/hw/index.js';
import { EMULATED_MARKER } from '../../src/hw/paths.js';
import { fixture } from '../hw/fixtures.js';
import { writeTree } from '../hw/sysroot.js';
import { type Oddity, replaceWith, tempRoots } from './sources-tree.js';

const fresh = tempRoots();
const clock: Clock = { nowMs: () => 5000 };
const QP_STATS = 'sys/kernel/debug/hfi1/hfi1_0/qp_stats';

async function waitersOf(root: string): Promise<WaitersSample> {
  const b = await openHwBackend({ sysroot: root, clock });
  try {
    const u = await b.unit(0);
    if (!u.waiters) throw new Error('the live unit lists its waiters');
    return await u.waiters();
  } finally {
    await b.close();
  }
}

describe('qp_stats that is not the kernel file', () => {
  it.each([
    ['fifo', /is a FIFO \(named pipe\), not a regular file/],
    ['dev-zero', /is a symbolic link to \/dev\/zero, outside the tree .*: not followed/],
    ['dev-urandom', /is a symbolic link to \/dev\/urandom, outside the tree .*: not followed/],
    ['dir', /is a directory, not a regular file/],
    ['loop', /a loop of symbolic links \(ELOOP\)/],
    ['dangling', /a symbolic link to .*, which does not exist/],
  ] as [Oddity, RegExp][])('%s: qp is not visible, the file named', async (kind, why) => {
    const root = fresh();
    writeTree(root);
    replaceWith(join(root, QP_STATS), kind);
    const s = await waitersOf(root);
    const qp = s.visibility.find((v) => v.kind === 'qp');
    expect(qp?.visible).toBe(false);
    expect(qp?.reason).toContain(join(root, QP_STATS));
    expect(qp?.reason).toMatch(why);
    expect(s.waiters).toEqual([]);
  });

  it('an empty qp_stats is a device without QPs: visible, no waiters', async () => {
    const root = fresh();
    writeTree(root);
    replaceWith(join(root, QP_STATS), 'empty');
    const s = await waitersOf(root);
    expect(s.visibility.find((v) => v.kind === 'qp')).toEqual({ kind: 'qp', visible: true, source: 'qp_stats' });
  });
});

describe('/proc entries that are not the kernel files', () => {
  function writer(root: string, pid: number): string {
    const dir = join(root, 'proc', String(pid));
    mkdirSync(join(dir, 'fd'), { recursive: true });
    symlinkSync('/dev/hfi1_0', join(dir, 'fd', '11'));
    writeFileSync(join(dir, 'syscall'), fixture('proc/psm/syscall-writev'));
    writeFileSync(join(dir, 'comm'), fixture('proc/psm/comm'));
    writeFileSync(join(dir, 'stack'), fixture('proc/psm/stack-blocked'));
    return dir;
  }

  it.each(['fifo', 'dev-zero', 'dev-urandom', 'dir', 'loop'] as Oddity[])(
    'a stack that is a %s: the writer is not taken as blocked, and nothing hangs',
    async (kind) => {
      const root = fresh();
      writeTree(root);
      replaceWith(join(writer(root, 4711), 'stack'), kind);
      writer(root, 4712);
      const s = await waitersOf(root);
      expect(s.waiters.map((w) => (w.kind === 'psm' ? w.pid : -1))).toEqual([4712]);
    },
  );

  it('a malformed stack: that thread is left out with a warning naming the file', async () => {
    const root = fresh();
    writeTree(root);
    writeFileSync(join(writer(root, 4711), 'stack'), 'not a stack\n');
    const b = await openHwBackend({ sysroot: root, clock });
    try {
      const u = await b.unit(0);
      expect((await u.waiters?.())?.waiters).toEqual([]);
      expect(u.warnings?.().find((w) => w.key === 'procPsm:malformed:4711')?.message).toMatch(
        /proc\/4711\/stack:1:1: expected a stack frame/,
      );
    } finally {
      await b.close();
    }
  });

  it('a tree that lists no process (a snapshot): psm is not visible, never "no waiters"', async () => {
    const root = fresh();
    writeTree(root);
    const s = await waitersOf(root);
    expect(s.visibility.find((v) => v.kind === 'psm')).toEqual({
      kind: 'psm',
      visible: false,
      reason: `${join(root, 'proc')} lists no process (a recorded tree, not a live /proc): PSM writers cannot be seen`,
    });
  });

  it('an emulated tree that lists no process runs no PSM writer: psm is visible, with none waiting', async () => {
    const root = fresh();
    writeTree(root);
    writeFileSync(join(root, EMULATED_MARKER), 'an emulated hfi1 host\n');
    const s = await waitersOf(root);
    expect(s.visibility.find((v) => v.kind === 'psm')).toEqual({ kind: 'psm', visible: true, source: 'proc' });
    expect(s.waiters.filter((w) => w.kind === 'psm')).toEqual([]);
  });
});
