import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Clock, Unit, WaitersSample } from '../../src/backend.js';
import { type HwFs, hwFsFor, realFs } from '../../src/hw/fsio.js';
import { openHwBackend } from '../../src/hw/index.js';
import type { PsmScanOptions } from '../../src/hw/waiters-psm.js';
import { spawnSync } from '../support/spawn.js';
import { fixture } from './fixtures.js';
import { BDF, writeTree } from './sysroot.js';

const base = mkdtempSync(join(tmpdir(), 'hfi1-waiters-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(base, String(n++));
const QP_STATS = 'sys/kernel/debug/hfi1/hfi1_0/qp_stats';

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A PSM writer blocked in writev on fd 11 -> /dev/hfi1_<unit> (the fixtures of test/fixtures/proc/psm). */
function psmWriter(root: string, pid: number, o: { unit?: number; stack?: string; syscall?: string; task?: boolean } = {}): void {
  const dir = o.task ? join(root, 'proc', String(pid), 'task', String(pid)) : join(root, 'proc', String(pid));
  mkdirSync(join(root, 'proc', String(pid), 'fd'), { recursive: true });
  symlinkSync(`/dev/hfi1_${o.unit ?? 0}`, join(root, 'proc', String(pid), 'fd', '11'));
  symlinkSync('/dev/null', join(root, 'proc', String(pid), 'fd', '0'));
  put(join(dir, 'stack'), o.stack ?? fixture('proc/psm/stack-blocked'));
  put(join(dir, 'syscall'), o.syscall ?? fixture('proc/psm/syscall-writev'));
  put(join(dir, 'comm'), fixture('proc/psm/comm'));
  put(join(dir, 'wchan'), fixture('proc/psm/wchan-blocked'));
}

/**
 * A file system (`base`, the real one by default) that records every path it is asked for and
 * whether the call was refused as leading out of the tree, and denies (EACCES) those `deny` matches.
 */
function recordingFs(
  deny: (p: string) => boolean = () => false,
  base: HwFs = realFs,
): HwFs & { paths: { op: string; path: string; outside?: true }[] } {
  const paths: { op: string; path: string; outside?: true }[] = [];
  const guard =
    <T>(op: string, f: (p: string) => Promise<T>) =>
    async (p: string) => {
      const rec: { op: string; path: string; outside?: true } = { op, path: p };
      paths.push(rec);
      if (deny(p)) throw Object.assign(new Error(`EACCES: permission denied, ${p}`), { code: 'EACCES' });
      try {
        return await f(p);
      } catch (e) {
        if ((e as { code?: unknown }).code === 'EOUTSIDE') rec.outside = true;
        throw e;
      }
    };
  return {
    paths,
    readFile: (p, cap) => guard('readFile', (q) => base.readFile(q, cap))(p),
    readdir: guard('readdir', base.readdir),
    readlink: guard('readlink', base.readlink),
    canRead: guard('canRead', base.canRead),
  };
}

async function withUnit<T>(
  root: string,
  f: (u: Unit, clock: { t: number }) => Promise<T>,
  o: { fs?: HwFs; psmScan?: PsmScanOptions } = {},
): Promise<T> {
  const state = { t: 1000 };
  const clock: Clock = { nowMs: () => state.t };
  const b = await openHwBackend({ sysroot: root, clock, ...o });
  try {
    return await f(await b.unit(0), state);
  } finally {
    await b.close();
  }
}

const vis = (s: WaitersSample, kind: string) => s.visibility.find((v) => v.kind === kind);
const who = (s: WaitersSample) =>
  s.waiters.map((w) =>
    w.kind === 'qp' ? `qp ${w.qpn.toString(16)}@${w.engine}` : w.kind === 'psm' ? `psm ${w.pid}@${w.engine}` : 'ipoib',
  );

describe('HwUnit.waiters: QPs from debugfs qp_stats (qp_iter_print, hfi1 qp.c)', () => {
  it('finds the waiting QPs with their engine, carries sinceMs, and drops a QP that stops waiting', async () => {
    const root = fresh();
    writeTree(root, { files: { [QP_STATS]: fixture('qp_stats/current.txt') } });
    await withUnit(root, async (u, clock) => {
      const first = await u.waiters?.();
      if (!first) throw new Error('HwUnit has waiters()');
      expect(who(first)).toEqual(['qp 12@5', 'qp 1e@9', 'qp 20@null']);
      expect(first.waiters[0]).toMatchObject({
        qpState: 'RTS',
        waitsFor: 'dma-desc',
        onList: true,
        ownPending: 0,
        sinceMs: 1000,
        source: 'qp_stats',
      });
      expect(vis(first, 'qp')).toEqual({ kind: 'qp', visible: true, source: 'qp_stats' });
      // The fixture has no sys/class/net: the unit's IPoIB netdevs are not known, so neither are their queues.
      expect(vis(first, 'ipoib')).toMatchObject({ visible: false, reason: expect.stringContaining('cannot be listed') });
      clock.t = 1500;
      const second = await u.waiters?.();
      expect(second?.timeMs).toBe(1500);
      expect(second?.waiters.map((w) => w.sinceMs)).toEqual([1000, 1000, 1000]);
      // QP 0x12 is woken: its s_flags lose RVT_S_WAIT_DMA_DESC and it leaves the list.
      const woken = fixture('qp_stats/current.txt').replace('f=80001000 0 0 1', 'f=80000000 0 0 0');
      writeFileSync(join(root, QP_STATS), woken);
      clock.t = 2000;
      const third = await u.waiters?.();
      expect(who(third as WaitersSample)).toEqual(['qp 1e@9', 'qp 20@null']);
      expect(third?.waiters[0]?.sinceMs).toBe(1000);
      // It waits again later: a new wait, seen since now.
      writeFileSync(join(root, QP_STATS), fixture('qp_stats/current.txt'));
      clock.t = 2500;
      const fourth = await u.waiters?.();
      expect(fourth?.waiters.find((w) => w.kind === 'qp' && w.qpn === 0x12)?.sinceMs).toBe(2500);
    });
  });

  it('qp_stats absent: the qp kind is not visible, with why (never "no waiters")', async () => {
    const cases: [string, Parameters<typeof writeTree>[1], RegExp, RegExp | null][] = [
      ['no qp_stats on this driver', { files: { [QP_STATS]: null } }, /^no qp_stats in .*this driver does not provide it$/, null],
      ['debugfs not mounted', { debugfs: 'empty' }, /^debugfs is not mounted at /, /mount -t debugfs/],
      ['no hfi1 debugfs directory', { debugfs: 'absent' }, /^debugfs is not mounted at /, /mount -t debugfs/],
    ];
    for (const [what, tree, reason, fix] of cases) {
      const root = fresh();
      writeTree(root, tree);
      const s = await withUnit(root, async (u) => (await u.waiters?.()) as WaitersSample);
      expect(s.waiters, what).toEqual([]);
      const v = vis(s, 'qp');
      expect(v?.visible, what).toBe(false);
      expect(v?.reason, what).toMatch(reason);
      if (fix) expect(v?.fix, what).toMatch(fix);
      else expect(v?.fix, what).toBeUndefined();
    }
  });

  it('not root: qp_stats denied (EACCES) says debugfs is root-only and to run as root', async () => {
    const root = fresh();
    writeTree(root, { files: { [QP_STATS]: fixture('qp_stats/current.txt') } });
    const fs = recordingFs((p) => p.endsWith('/qp_stats'));
    const s = await withUnit(root, async (u) => (await u.waiters?.()) as WaitersSample, { fs });
    expect(vis(s, 'qp')).toEqual({
      kind: 'qp',
      visible: false,
      reason: 'debugfs qp_stats is readable by root only (debugfs is mode 0700)',
      fix: 'run as root (e.g. sudo hfi1-sdma …)',
    });
    expect(s.waiters.filter((w) => w.kind === 'qp')).toEqual([]);
  });

  it('a torn qp_stats: a warning, and the complete records are used', async () => {
    const root = fresh();
    writeTree(root, { files: { [QP_STATS]: fixture('qp_stats/current-torn.txt') } });
    await withUnit(root, async (u) => {
      const s = (await u.waiters?.()) as WaitersSample;
      expect(who(s)).toEqual(['qp 12@5', 'qp 1e@9', 'qp 20@null']);
      expect(vis(s, 'qp')?.visible).toBe(true);
      const w = u.warnings?.().find((x) => x.key === 'qpStats:torn');
      expect(w).toMatchObject({ source: 'qpStats', path: join(root, QP_STATS) });
      expect(w?.message).toMatch(/qp_stats:\d+:\d+: .*no newline.*complete lines are used/s);
    });
  });

  it('trailing fields of a newer driver: a warning, the known fields are used', async () => {
    const root = fresh();
    writeTree(root, { files: { [QP_STATS]: fixture('qp_stats/trailing.txt') } });
    await withUnit(root, async (u) => {
      const s = (await u.waiters?.()) as WaitersSample;
      expect(who(s)).toEqual(['qp 12@5', 'qp 1e@9', 'qp 20@null']);
      expect(u.warnings?.().find((x) => x.key === 'qpStats:trailing-fields')?.message).toMatch(
        /a newer driver\?\): the known fields are used/,
      );
    });
  });

  it('a malformed qp_stats: not visible with the parse error (file:line:column), and a warning', async () => {
    const root = fresh();
    writeTree(root, { files: { [QP_STATS]: 'N 0 I QP zz R 1\n' } });
    await withUnit(root, async (u) => {
      const s = (await u.waiters?.()) as WaitersSample;
      expect(vis(s, 'qp')?.visible).toBe(false);
      expect(vis(s, 'qp')?.reason).toMatch(/^qp_stats is malformed: .*qp_stats:1:\d+/);
      expect(u.warnings?.().some((w) => w.key === 'qpStats:malformed')).toBe(true);
    });
  });

  it('a FIFO in place of qp_stats is refused without blocking', async () => {
    const root = fresh();
    writeTree(root, { files: { [QP_STATS]: null } });
    expect(spawnSync('mkfifo', [join(root, QP_STATS)]).status).toBe(0);
    const s = await withUnit(root, async (u) => (await u.waiters?.()) as WaitersSample);
    expect(vis(s, 'qp')).toMatchObject({
      visible: false,
      reason: expect.stringMatching(/is a FIFO \(named pipe\), not a regular file/),
    });
  });
});

describe('HwUnit.waiters: PSM writers seen through /proc (hfi1_user_sdma_process_request, user_sdma.c)', () => {
  it('a blocked writer holding /dev/hfi1_0 is a psm waiter (engine unknown), sinceMs carried; others are not', async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711);
    psmWriter(root, 4720, { unit: 1 }); // another unit's device
    psmWriter(root, 4730, { stack: fixture('proc/psm/stack-poll'), syscall: fixture('proc/psm/syscall-poll') });
    psmWriter(root, 4740, { task: true });
    mkdirSync(join(root, 'proc/1/fd'), { recursive: true });
    await withUnit(root, async (u, clock) => {
      const s = (await u.waiters?.()) as WaitersSample;
      expect(who(s).sort()).toEqual(['psm 4711@null', 'psm 4740@null']);
      expect(s.waiters.find((w) => w.kind === 'psm')).toMatchObject({
        command: 'mpi_app',
        waitsFor: 'dma-desc',
        source: 'proc',
        sinceMs: 1000,
      });
      expect(vis(s, 'psm')).toEqual({ kind: 'psm', visible: true, source: 'proc' });
      clock.t = 2200;
      const again = (await u.waiters?.()) as WaitersSample;
      expect(again.waiters.filter((w) => w.kind === 'psm').map((w) => w.sinceMs)).toEqual([1000, 1000]);
      // The writer's wait ends (the syscall returns): it is gone at the next look.
      writeFileSync(join(root, 'proc/4711/syscall'), fixture('proc/psm/syscall-running'));
      clock.t = 2400;
      expect(who((await u.waiters?.()) as WaitersSample)).toEqual(['psm 4740@null']);
    });
  });

  it('not root: the kernel stack is denied, so psm is not visible, with the reason and the fix', async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711);
    const fs = recordingFs((p) => p.endsWith('/stack'));
    const s = await withUnit(root, async (u) => (await u.waiters?.()) as WaitersSample, { fs });
    const v = vis(s, 'psm');
    expect(v?.visible).toBe(false);
    expect(v?.reason).toMatch(
      /^\S+\/proc\/4711\/stack needs root \(the kernel shows a thread's stack and system call to root only/,
    );
    expect(v?.fix).toBe('run as root (e.g. sudo hfi1-sdma …)');
  });

  it("not root: other users' fd directories are denied, so psm is not visible", async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711);
    mkdirSync(join(root, 'proc/1/fd'), { recursive: true });
    const fs = recordingFs((p) => p.endsWith('/proc/1/fd'));
    const s = await withUnit(root, async (u) => (await u.waiters?.()) as WaitersSample, { fs });
    expect(vis(s, 'psm')).toMatchObject({
      visible: false,
      reason: expect.stringMatching(/proc\/1\/fd is not readable: .*root only/),
    });
  });

  it('never opens a device, never follows a link out of the sysroot, never reads trace_pipe', async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711);
    // A pid directory that is a link to the host's /proc: a real /proc has none.
    symlinkSync('/proc/self', join(root, 'proc/999'));
    // tracefs with the events enabled and a trace_pipe that must not be touched.
    const tr = join(root, 'sys/kernel/tracing');
    put(join(tr, 'events/hfi1_tx/hfi1_usdma_defer/enable'), '1\n');
    put(join(tr, 'trace'), '# tracer: nop\n');
    expect(spawnSync('mkfifo', [join(tr, 'trace_pipe')]).status).toBe(0);
    // The backend's own file system under a sysroot: every read contained to the tree.
    const fs = recordingFs(undefined, hwFsFor(root));
    await withUnit(
      root,
      async (u, clock) => {
        await u.waiters?.();
        clock.t = 7000; // a full rescan
        await u.waiters?.();
      },
      { fs },
    );
    for (const { op, path, outside } of fs.paths) {
      expect(path.startsWith(`${root}/`), path).toBe(true);
      if (path.includes('/fd/')) expect(op, path).toBe('readlink');
      expect(path).not.toMatch(/trace_pipe/);
      // Whatever is asked of the link to the host's /proc is refused: nothing of it is read.
      if (path.startsWith(join(root, 'proc/999'))) expect(outside, path).toBe(true);
    }
    expect(fs.paths.some((p) => p.path.startsWith(join(root, 'proc/999')))).toBe(true);
    expect(fs.paths.some((p) => p.op === 'readlink' && p.path === join(root, 'proc/4711/fd/11'))).toBe(true);
  });

  it('between full scans a holder’s fd links are read again once a second, its thread at every sample', async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711);
    const fs = recordingFs();
    const links = () => fs.paths.filter((p) => p.op === 'readlink' && p.path === join(root, 'proc/4711/fd/11')).length;
    const syscalls = () => fs.paths.filter((p) => p.path === join(root, 'proc/4711/syscall')).length;
    const seen = await withUnit(
      root,
      async (u, clock) => {
        const out: { links: number; syscalls: number; psm: string[] }[] = [];
        // 1000: the full scan; 1100 and 1900 within the second; 2000 a second on; 6000 the next full scan.
        for (const t of [1000, 1100, 1900, 2000, 2100, 6000]) {
          clock.t = t;
          const s = (await u.waiters?.()) as WaitersSample;
          out.push({ links: links(), syscalls: syscalls(), psm: who(s).filter((w) => w.startsWith('psm')) });
        }
        return out;
      },
      { fs },
    );
    expect(seen.map((s) => s.links)).toEqual([1, 1, 1, 2, 2, 3]);
    expect(seen.map((s) => s.syscalls)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const s of seen) expect(s.psm).toEqual(['psm 4711@null']);
  });

  it('a holder that closed the device is dropped at the next reading of its links, never shown as blocked after', async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711, { syscall: fixture('proc/psm/syscall-writev') });
    const psm = (s: WaitersSample) => who(s).filter((w) => w.startsWith('psm'));
    const seen = await withUnit(root, async (u, clock) => {
      const first = psm((await u.waiters?.()) as WaitersSample);
      // It closes the device and goes on running elsewhere: its thread is no longer in the driver.
      rmSync(join(root, 'proc/4711/fd/11'));
      put(join(root, 'proc/4711/syscall'), 'running\n');
      clock.t = 1500;
      const within = psm((await u.waiters?.()) as WaitersSample);
      clock.t = 2000;
      const after = psm((await u.waiters?.()) as WaitersSample);
      return { first, within, after };
    });
    expect(seen).toEqual({ first: ['psm 4711@null'], within: [], after: [] });
  });

  it('the scan is bounded: too many processes, or too long, and psm is not visible with why', async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711);
    psmWriter(root, 4712);
    const many = await withUnit(root, async (u) => (await u.waiters?.()) as WaitersSample, { psmScan: { maxPids: 1 } });
    expect(vis(many, 'psm')?.reason).toMatch(/2 processes, more than the 1 a scan reads/);
    let t = 0;
    const slow = await withUnit(root, async (u) => (await u.waiters?.()) as WaitersSample, {
      psmScan: { elapsedMs: () => (t += 200), budgetMs: 250 },
    });
    expect(vis(slow, 'psm')?.reason).toMatch(/took more than 250 ms/);
  });
});

describe('HwUnit.waiters: the engine of a PSM writer from enabled hfi1_usdma trace events', () => {
  const traceText = (pid: number, engine: number, pci = BDF) =>
    [
      '# tracer: nop',
      '#',
      `         mpi_app-${pid}    [003] .....  1234.500000: hfi1_usdma_defer: [${pci}] pq ffff9a0011223344 sde ffff9a0055667788 wait ffff9a0011223350 engine ${engine} empty 1`,
      `         mpi_app-${pid}    [003] .....  1234.600000: hfi1_usdma_we: [${pci}] pq ffff9a0011223344 state 1 we_ret 0`,
      '',
    ].join('\n');

  it('enabled: the last hfi1_usdma_defer of the thread on this device names its engine', async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711);
    const tr = join(root, 'sys/kernel/tracing');
    put(join(tr, 'events/hfi1_tx/hfi1_usdma_defer/enable'), '1\n');
    put(
      join(tr, 'trace'),
      `${traceText(4711, 3)}${traceText(4711, 7).split('\n').slice(2).join('\n')}${traceText(4711, 9, '0000:81:00.0')}`,
    );
    const s = await withUnit(root, async (u) => (await u.waiters?.()) as WaitersSample);
    expect(who(s)).toEqual(['psm 4711@7']);
  });

  it('not enabled: the trace is not read and the engine stays unknown; the source says how to enable them', async () => {
    const root = fresh();
    writeTree(root);
    psmWriter(root, 4711);
    const tr = join(root, 'sys/kernel/tracing');
    put(join(tr, 'events/hfi1_tx/hfi1_usdma_defer/enable'), '0\n');
    put(join(tr, 'trace'), traceText(4711, 3));
    const fs = recordingFs();
    await withUnit(
      root,
      async (u) => {
        expect(who((await u.waiters?.()) as WaitersSample)).toEqual(['psm 4711@null']);
        const src = u.info.sources.find((x) => x.source === 'trace');
        expect(src).toMatchObject({ readable: false, reason: 'the hfi1_usdma_* trace events are not enabled' });
        expect(src?.fix).toMatch(/echo 1 > \/sys\/kernel\/tracing\/events\/hfi1_tx\/hfi1_usdma_defer\/enable/);
      },
      { fs },
    );
    expect(fs.paths.some((p) => p.path === join(tr, 'trace'))).toBe(false);
  });
});
