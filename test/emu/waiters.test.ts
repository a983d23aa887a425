// The emulator's waiters straight from the model, the PSM writer's 1 s timeout, and the fault `lost-wakeup`
// (a QP stranded on an idle engine; a PSM writer's 1 s stall), compared with a replayed race trace. Virtual time only.
import { describe, expect, it } from 'vitest';
import type { Waiter } from '../../src/backend.js';
import { parseFault } from '../../src/emu/faults.js';
import { invariantViolations } from '../../src/emu/invariants.js';
import { DEFAULT_BOUND, explore } from '../../src/emu/race/explorer.js';
import { replaySchedule } from '../../src/emu/race/trace.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { EMU_PID_BASE, EMU_QPN_BASE } from '../../src/emu/waiters.js';

/** Waiters whose engine is running with an empty ring, nothing pending in the chip, and whose request fits. */
async function stranded(u: EmuUnit): Promise<Waiter[]> {
  const { waiters } = await u.waiters();
  return waiters.filter((w) => {
    const e = u.engines[w.engine ?? -1];
    return (
      e?.running() &&
      e.descqHead === e.descqTail &&
      e.chip.quiescent() &&
      (w.descriptorsNeeded ?? 0) <= e.freecnt() &&
      w.onList === true &&
      w.ownPending === 0
    );
  });
}

describe('waiters from the model', () => {
  it('a workload with full rings has QP and PSM waiters, each on the dmawait list of its engine', async () => {
    const u = new EmuUnit({ seed: 1, workload: 'mixed:load=3' });
    const kinds = new Set<string>();
    for (let ms = 5; ms <= 30; ms += 0.25) {
      u.runUntilMs(ms);
      const s = await u.waiters();
      expect(s.timeMs).toBe(ms);
      for (const w of s.waiters) {
        kinds.add(w.kind);
        const e = u.engines[w.engine ?? -1];
        expect(e?.dmawait.some((i) => u.senders[i.id]?.wait === i)).toBe(true);
        expect(w.sinceMs).toBeGreaterThan(1); // after the port went ACTIVE
        expect(w.sinceMs).toBeLessThanOrEqual(ms);
        expect(w).toMatchObject({ waitsFor: 'dma-desc', onList: true, source: 'model' });
        expect(w.descriptorsNeeded).toBeGreaterThanOrEqual(2);
        if (w.kind === 'qp') {
          expect(w.qpState).toBe('RTS');
          expect(u.senders[w.qpn - EMU_QPN_BASE]?.spec.kind).toBe('qp');
        } else if (w.kind === 'psm') {
          expect(u.senders[w.pid - EMU_PID_BASE]?.spec.kind).toBe('psm');
          expect(w.command).toMatch(/^mpi_rank_\d+$/);
        }
      }
      const asleep = u.engines.reduce((n, e) => n + e.dmawait.length, 0);
      expect(s.waiters).toHaveLength(asleep);
    }
    expect([...kinds].sort()).toEqual(['psm', 'qp']);
    const vis = (await u.waiters()).visibility;
    expect(vis.map((v) => [v.kind, v.visible, v.source])).toEqual([
      ['qp', true, 'model'],
      ['psm', true, 'model'],
      ['ipoib', true, 'model'],
    ]);
  });

  it('a waiter keeps the time it went to sleep while it sleeps', async () => {
    const u = new EmuUnit({ seed: 3, engines: 4, workload: 'psm' });
    u.runUntilMs(10);
    const first = (await u.waiters()).waiters;
    expect(first.length).toBeGreaterThan(0);
    u.runUntilMs(10.0001);
    const later = (await u.waiters()).waiters;
    const kept = later.filter((w) => first.some((f) => f.kind === 'psm' && w.kind === 'psm' && f.pid === w.pid));
    for (const w of kept)
      expect(w.sinceMs).toBe(first.find((f) => f.kind === 'psm' && f.pid === (w as { pid: number }).pid)?.sinceMs);
  });
});

describe('fault lost-wakeup', () => {
  it('parses NAME[:qp|psm|ipoib]@MS[:ENGINE] and refuses an engine without such a sender', () => {
    expect(parseFault('lost-wakeup@2000:5', 16)).toMatchObject({ name: 'lost-wakeup', param: 0, atMs: 2000, engine: 5 });
    expect(parseFault('lost-wakeup:qp@1:2', 16).param).toBe(1);
    expect(parseFault('lost-wakeup:psm@1:2', 16).param).toBe(2);
    expect(parseFault('lost-wakeup:ipoib@1:2', 16).param).toBe(3);
    expect(() => parseFault('lost-wakeup:vnic@1:2', 16)).toThrow(/qp, psm or ipoib/);
    expect(() => new EmuUnit({ workload: 'idle', faults: ['lost-wakeup@1:3'] })).toThrow(
      /engine 3 has no QP, PSM or IPoIB sender/,
    );
    expect(() => new EmuUnit({ workload: 'qp', faults: ['lost-wakeup:psm@1:3'] })).toThrow(/engine 3 has no PSM sender/);
  });

  it('leaves exactly one QP stranded on engine E, and nowhere else, for good; emu run counts one lost wake-up', async () => {
    const u = new EmuUnit({ seed: 1, engines: 8, workload: 'mixed:gbps=10', faults: ['lost-wakeup@50:5'] });
    u.runUntilMs(49);
    expect(await stranded(u)).toEqual([]);
    u.runUntilMs(60);
    const s = await stranded(u);
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({ kind: 'qp', engine: 5, qpState: 'RTS', onList: true, ownPending: 0 });
    const since = s[0]?.sinceMs ?? 0;
    expect(since).toBeGreaterThanOrEqual(50);
    expect(since).toBeLessThan(51);
    u.runUntilMs(1200); // past the 1 s after which a PSM writer would have sent again
    expect(await stranded(u)).toEqual(s); // a QP has no timeout: same waiter, same since
    expect(u.totals().lostWakeups).toBe(1);
    const v = invariantViolations(u);
    expect(v).toHaveLength(1);
    expect(v[0]).toMatch(/^lost wake-up on engine 5: QP 0x10a sleeps on dmawait/);
    expect(v[0]).toContain('--fault lost-wakeup@50:5 opens this window on purpose');
    // The other engines kept working.
    expect(u.engines[4]?.descqHead).toBeGreaterThan(0);
  });

  it('with a PSM writer: a 1 s stall, exactly SDMA_IOWAIT_TIMEOUT of virtual time, then it sends again', async () => {
    const u = new EmuUnit({ seed: 1, engines: 8, workload: 'mixed', faults: ['lost-wakeup:psm@50:5'] });
    u.runUntilMs(60);
    const [w] = await stranded(u);
    expect(w).toMatchObject({ kind: 'psm', engine: 5, pid: EMU_PID_BASE + 11, command: 'mpi_rank_5' });
    const sleptMs = w?.sinceMs ?? 0;
    u.runUntilMs(sleptMs + 999.999);
    expect(await stranded(u)).toHaveLength(1);
    u.runUntilMs(sleptMs + 1000);
    expect(await stranded(u)).toEqual([]);
    const timeouts = u.events(['waitTimeout']).filter((r) => r.engine === 5);
    expect(timeouts.map((r) => r.timeNs)).toEqual([sleptMs * 1e6 + 1e9]);
    const tail = u.engines[5]?.descqTail ?? 0;
    u.runUntilMs(sleptMs + 1010);
    expect(u.engines[5]?.descqTail).toBeGreaterThan(tail);
    expect(u.totals().lostWakeups).toBe(1);
    expect(invariantViolations(u)[0]).toMatch(/PSM writer 20011 \(mpi_rank_5\).* until its 1 s timeout/);
  });

  it('ends in the state a replayed race trace of the sdma_check_progress window ends in', async () => {
    const r = explore({ variant: 'kernel', submitters: 2, bound: DEFAULT_BOUND, seed: 1 });
    const { world } = replaySchedule('kernel', 2, r.lostSchedule ?? []);
    world.unit.resume();
    world.unit.advance(50);
    const u = new EmuUnit({ seed: 1, workload: 'mixed', faults: ['lost-wakeup:psm@50:5'] });
    u.runUntilMs(60);
    const shape = async (unit: EmuUnit) => {
      const [w, ...rest] = await stranded(unit);
      const e = unit.engines[w?.engine ?? -1];
      return {
        rest: rest.length,
        kind: w?.kind,
        onList: w?.onList,
        ownPending: w?.ownPending,
        free: e ? e.freecnt() === e.descqCnt - 1 : null,
        quiet: e?.chip.quiescent(),
        lost: unit.totals().lostWakeups,
      };
    };
    const fromTrace = await shape(world.unit);
    expect(fromTrace).toEqual({ rest: 0, kind: 'psm', onList: true, ownPending: 0, free: true, quiet: true, lost: 1 });
    expect(await shape(u)).toEqual(fromTrace);
  });
});
