// Waiters of an hfi2 unit: qp_stats under debugfs hfi2/, PSM writers on an hfi2 SDMA handle sleeping in
// hfi2_user_sdma_process_request, and their engine from the hfi2_tx usdma events (an absolute index).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { WaitersSample } from '../../src/backend.js';
import { openHwBackend } from '../../src/hw/index.js';
import { fixture } from './fixtures.js';
import { JKR_BDF, writeHfi2Tree } from './hfi2-tree.js';

const base = mkdtempSync(join(tmpdir(), 'hfi2-waiters-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(base, String(n++));

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const HFI2_STACK = fixture('proc/psm/stack-blocked').replaceAll('hfi1_', 'hfi2_').replaceAll('[hfi1]', '[hfi2]');

/** A writer blocked in writev on fd 11, which links to `target`. */
function writer(root: string, pid: number, target: string, stack = HFI2_STACK): void {
  const dir = join(root, 'proc', String(pid));
  mkdirSync(join(dir, 'fd'), { recursive: true });
  symlinkSync(target, join(dir, 'fd', '11'));
  put(join(dir, 'stack'), stack);
  put(join(dir, 'syscall'), fixture('proc/psm/syscall-writev'));
  put(join(dir, 'comm'), 'mpi_app\n');
  put(join(dir, 'wchan'), '0');
}

describe('waiters on hfi2', () => {
  it('finds writers on anon_inode:hfi2-sdma and on a uverbs fd; not an hfi1 device, not an hfi1 stack', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    writer(root, 4711, 'anon_inode:hfi2-sdma');
    writer(root, 4712, '/dev/infiniband/uverbs0');
    writer(root, 4713, '/dev/hfi1_0');
    writer(root, 4714, 'anon_inode:hfi2-sdma', fixture('proc/psm/stack-blocked'));
    mkdirSync(join(root, 'proc/1/fd'), { recursive: true });
    const b = await openHwBackend({ sysroot: root, clock: { nowMs: () => 0 } });
    try {
      const u = await b.unit(0);
      expect(u.info?.sources.find((s) => s.source === 'qpStats')).toMatchObject({
        readable: true,
        path: join(root, 'sys/kernel/debug/hfi2/hfi2_0/qp_stats'),
      });
      const s = (await u.waiters?.()) as WaitersSample;
      const psm = s.waiters.filter((w) => w.kind === 'psm').map((w) => (w.kind === 'psm' ? w.pid : 0));
      expect(psm.sort()).toEqual([4711, 4712]);
    } finally {
      await b.close();
    }
  });

  it('ties a handle to its unit through the process uverbs fds (sys/class/infiniband_verbs/uverbsN/ibdev)', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    const verbs = (n: number, dev: string) => put(join(root, `sys/class/infiniband_verbs/uverbs${n}/ibdev`), `${dev}\n`);
    verbs(0, 'hfi2_0');
    verbs(1, 'hfi2_1');
    verbs(2, 'mlx5_0');
    const alsoHolds = (pid: number, fd: number, target: string) =>
      symlinkSync(target, join(root, 'proc', String(pid), 'fd', String(fd)));
    writer(root, 4801, 'anon_inode:hfi2-sdma'); // uverbs0: this unit
    alsoHolds(4801, 10, '/dev/infiniband/uverbs0');
    writer(root, 4802, 'anon_inode:hfi2-sdma'); // uverbs1: the other unit
    alsoHolds(4802, 10, '/dev/infiniband/uverbs1');
    writer(root, 4803, '/dev/infiniband/uverbs1'); // a v1 writer on the other unit
    writer(root, 4804, 'anon_inode:hfi2-sdma'); // only an mlx5 uverbs: cannot be told, shown
    alsoHolds(4804, 10, '/dev/infiniband/uverbs2');
    writer(root, 4805, '/dev/infiniband/uverbs7'); // no ibdev to read: cannot be told, shown
    writer(root, 4806, 'anon_inode:hfi2-sdma'); // both units open: shown (on each)
    alsoHolds(4806, 9, '/dev/infiniband/uverbs0');
    alsoHolds(4806, 10, '/dev/infiniband/uverbs1');
    mkdirSync(join(root, 'proc/1/fd'), { recursive: true });
    const b = await openHwBackend({ sysroot: root, clock: { nowMs: () => 0 } });
    try {
      const s = (await (await b.unit(0)).waiters?.()) as WaitersSample;
      const psm = s.waiters.flatMap((w) => (w.kind === 'psm' ? [w.pid] : []));
      expect(psm.sort()).toEqual([4801, 4804, 4805, 4806]);
    } finally {
      await b.close();
    }
  });

  it('takes a writer engine from hfi2_tx hfi2_usdma_defer, absolute', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    writer(root, 4711, 'anon_inode:hfi2-sdma');
    mkdirSync(join(root, 'proc/1/fd'), { recursive: true });
    const tracing = join(root, 'sys/kernel/tracing');
    put(join(tracing, 'events/hfi2_tx/hfi2_usdma_defer/enable'), '1\n');
    put(
      join(tracing, 'trace'),
      `         mpi_app-4711    [003] .....  1234.500000: hfi2_usdma_defer: [${JKR_BDF}] pq ffff9a0011223344 sde ffff9a0055667788 wait ffff9a0011223350 engine 13 empty 1\n`,
    );
    const b = await openHwBackend({ sysroot: root, clock: { nowMs: () => 0 } });
    try {
      const s = (await (await b.unit(0)).waiters?.()) as WaitersSample;
      expect(s.waiters.find((w) => w.kind === 'psm')).toMatchObject({ pid: 4711, engine: 13 });
    } finally {
      await b.close();
    }
  });
});

describe('the trace source of an hfi2 unit', () => {
  it('names the hfi2_tx events, how to enable them, and no hfi1 kernel-version hint', async () => {
    const { unitPaths } = await import('../../src/hw/paths.js');
    const { realFs } = await import('../../src/hw/fsio.js');
    const { usdmaTraceStatus } = await import('../../src/hw/waiters-trace.js');
    const root = mkdtempSync(join(tmpdir(), 'hfi2-trace-'));
    try {
      const absent = await usdmaTraceStatus(realFs, unitPaths(root, 'hfi2_0', ''));
      expect(absent.reason).toMatch(/has hfi2_tx events\)$/);
      const enable = join(root, 'sys/kernel/tracing/events/hfi2_tx/hfi2_usdma_defer/enable');
      mkdirSync(dirname(enable), { recursive: true });
      writeFileSync(enable, '0\n');
      const off = await usdmaTraceStatus(realFs, unitPaths(root, 'hfi2_0', ''));
      expect(off.reason).toBe('the hfi2_usdma_* trace events are not enabled');
      expect(off.fix).toContain('events/hfi2_tx/hfi2_usdma_defer/enable');
      const hfi1 = await usdmaTraceStatus(realFs, unitPaths(root, 'hfi1_0', ''));
      expect(hfi1.reason).toMatch(/kernels before v5\.13 lack the hfi1_usdma_\* events/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
