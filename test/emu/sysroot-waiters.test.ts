// The waiters in the rendered sysroot: debugfs qp_stats byte for byte against a hand-written fixture (current upstream
// format, s_flags layout C), read back by src/hw's parsers to the model's waiters; /proc of blocked PSM writers,
// read back by the PSM reader, appearing when a writer blocks and removed when it wakes. Virtual time only.
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { emuQpOwnerPid } from '../../src/emu/qp-owners.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { hash32 } from '../../src/emu/waiter-files.js';
import { psmVerdict } from '../../src/hw/parse/proc-psm.js';
import { parseQpStats } from '../../src/hw/parse/qp-stats.js';
import { qpWaiters } from '../../src/progress/waiters.js';

const FIXTURE = join(import.meta.dirname, '../fixtures/qp_stats/emu-stranded.txt');
const dirs: string[] = [];
const units: [EmuUnit, string][] = [];
afterEach(() => {
  for (const [u, d] of units.splice(0)) closeSysroot(u, d);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tree(u: EmuUnit): string {
  const d = mkdtempSync(join(tmpdir(), 'hfi1-emu-waiters-'));
  dirs.push(d);
  units.push([u, d]);
  return d;
}
const dbg = (root: string) => join(root, 'sys/kernel/debug/hfi1/hfi1_0');

describe('qp_stats of the emulated QPs', () => {
  it('renders two QPs stranded by lost-wakeup byte for byte as the fixture, QP0 and QP1 first', async () => {
    const u = new EmuUnit({ seed: 1, engines: 2, workload: 'qp:qps=1', faults: ['lost-wakeup@5'] });
    u.runUntilMs(10);
    const root = tree(u);
    await writeSysroot(u, root);
    expect(readFileSync(join(dbg(root), 'qp_stats'), 'latin1')).toBe(readFileSync(FIXTURE, 'latin1'));
    // The slots are rvt's: 2 specials, then hash_32(qpn, 8) buckets.
    expect([hash32(0x100, 8), hash32(0x101, 8)]).toEqual([200, 42]);
  });

  it('reads back through parseQpStats and qpWaiters to the waiters of the model', async () => {
    const u = new EmuUnit({ seed: 2, engines: 4, workload: 'mixed:load=3' });
    const root = tree(u);
    let compared = 0;
    for (let ms = 5; ms <= 8; ms += 0.5) {
      u.runUntilMs(ms);
      await writeSysroot(u, root);
      const file = parseQpStats(readFileSync(join(dbg(root), 'qp_stats')), { file: 'qp_stats' });
      expect(file.layout?.layout).toBe('C');
      expect(file.records.slice(0, 2).map((r) => [r.qpn, r.type, r.engine])).toEqual([
        [0, 'SMI', null],
        [1, 'GSI', 0],
      ]);
      const key = (w: { kind: string; engine: number | null; onList: boolean | null; ownPending: number | null }) => ({
        id: (w as { qpn?: number }).qpn,
        state: (w as { qpState?: string }).qpState,
        engine: w.engine,
        onList: w.onList,
        ownPending: w.ownPending,
      });
      const fromFile = qpWaiters(file.records, u.nowMs).map(key);
      const fromModel = (await u.waiters()).waiters.filter((w) => w.kind === 'qp').map(key);
      expect(fromFile.sort((a, b) => (a.id ?? 0) - (b.id ?? 0))).toEqual(fromModel.sort((a, b) => (a.id ?? 0) - (b.id ?? 0)));
      compared += fromModel.length;
    }
    expect(compared).toBeGreaterThan(0);
  });
});

describe('/proc of blocked PSM writers', () => {
  function readProc(root: string, pid: number) {
    const dir = join(root, 'proc', String(pid));
    const fdDir = join(dir, 'fd');
    return psmVerdict({
      pid,
      comm: readFileSync(join(dir, 'comm'), 'utf8'),
      fds: readdirSync(fdDir).map((n) => ({ fd: Number(n), target: readlinkSync(join(fdDir, n)) })),
      stack: readFileSync(join(dir, 'stack'), 'utf8'),
      syscall: readFileSync(join(dir, 'syscall'), 'utf8'),
      wchan: readFileSync(join(dir, 'wchan'), 'utf8'),
      dir,
    });
  }
  const qpOwners = (u: EmuUnit) => u.senders.filter((s) => s.spec.kind === 'qp').map((s) => emuQpOwnerPid(s.id));
  const pids = (root: string) =>
    readdirSync(join(root, 'proc'))
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort();

  it('shows each blocked writer as the PSM reader expects, and as running once it times out and sends', async () => {
    const u = new EmuUnit({ seed: 1, engines: 2, workload: 'mixed', faults: ['lost-wakeup:psm@5'] });
    u.runUntilMs(10);
    const root = tree(u);
    await writeSysroot(u, root);
    const model = (await u.waiters()).waiters;
    expect(model.map((w) => (w.kind === 'psm' ? [w.pid, w.command] : null))).toEqual([
      [20001, 'mpi_rank_0'],
      [20003, 'mpi_rank_1'],
    ]);
    // The PSM writers' processes, beside those of the QP senders (which own their QPs).
    expect(pids(root)).toEqual([20001, 20003, ...qpOwners(u)]);
    for (const [pid, command] of [
      [20001, 'mpi_rank_0'],
      [20003, 'mpi_rank_1'],
    ] as const) {
      const v = readProc(root, pid);
      expect(v).toMatchObject({ pid, command, blocked: true, unit: 0, fd: 11, units: [0] });
      expect(lstatSync(join(root, 'proc', String(pid), 'fd', '11')).isSymbolicLink()).toBe(true);
    }
    expect(readFileSync(join(dbg(root), 'qp_stats'), 'latin1')).not.toContain('f=1000'); // the QPs ended, none waits
    // An unchanged refresh rewrites nothing.
    const inode = statSync(join(root, 'proc/20001/stack')).ino;
    const qpInode = statSync(join(dbg(root), 'qp_stats')).ino;
    await writeSysroot(u, root);
    expect(statSync(join(root, 'proc/20001/stack')).ino).toBe(inode);
    expect(statSync(join(dbg(root), 'qp_stats')).ino).toBe(qpInode);
    // After SDMA_IOWAIT_TIMEOUT the writers leave the list and send again: still processes of the
    // host (as on a live one), no longer blocked in the user SDMA request.
    u.runUntilMs(1006);
    await writeSysroot(u, root);
    expect((await u.waiters()).waiters.filter((w) => w.kind === 'psm')).toEqual([]);
    // The PSM writers' processes, beside those of the QP senders (which own their QPs).
    expect(pids(root)).toEqual([20001, 20003, ...qpOwners(u)]);
    for (const pid of [20001, 20003]) expect(readProc(root, pid)).toMatchObject({ pid, blocked: false });
  });
});
