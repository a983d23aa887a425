// Accelerated-IPoIB transmit queues in the emulator: the sleep callback hfi1_ipoib_sdma_sleep (ipoib_tx.c) with its
// subqueue stop and the wake-up's restart, the fault netdev-unregister (-EINVAL, drops counted), the queues as
// waiters of kind ipoib, a lost wake-up leaving one stranded, and the other workloads' event logs unchanged.
// Virtual time and fixed seeds only.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmuBackend, type EmuBackend } from '../../src/emu/index.js';
import { invariantViolations } from '../../src/emu/invariants.js';
import { iowaitUnlink } from '../../src/emu/iowait.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EBUSY, EINVAL, EmuTx } from '../../src/emu/tx.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { parseWorkload } from '../../src/emu/workload.js';
import { openHwBackend } from '../../src/hw/index.js';
import { buildVlMap } from '../../src/progress/select.js';
import { judgeWaiters, newStrandTrack } from '../../src/progress/strand.js';
import { runCli } from '../support/cli.js';
import { Recorder, txOf } from './support.js';

/** Fill engine `idx`'s ring with direct 2-descriptor requests until one does not fit (the chips are paused). */
function fillRing(u: EmuUnit, idx: number): void {
  const r = new Recorder();
  for (let i = 0; i < 4096; i++) if (u.submit(idx, r.tx(txOf(2))) === EBUSY) return;
  throw new Error('the ring never filled');
}

/** A unit of one engine whose one IPoIB queue is not sending (load 0): the tests drive it. */
function idleQueue(): EmuUnit {
  const u = new EmuUnit({ seed: 1, engines: 1, workload: 'idle:ipoib=1', retainLog: 'all' });
  u.runUntilMs(2);
  u.pause();
  return u;
}

describe('the IPoIB sleep callback', () => {
  it('answers -EBUSY on a full ring: the txreq is parked on the queue list, the subqueue stops once, n_dmawait counts each sleep', () => {
    const u = idleQueue();
    const q = u.senders[0];
    if (!q?.ipoib) throw new Error('no IPoIB queue');
    fillRing(u, 0);
    const tx = new EmuTx(new Recorder()).load(txOf(3));
    expect(u.submit(0, tx, { wait: q.wait })).toBe(EBUSY);
    expect(q.wait.queuedOn).toBe(u.engines[0]);
    expect(q.ipoib.list).toEqual([tx]);
    expect(q.ipoib).toMatchObject({ subqueueStopped: true, stops: 1, restarts: 0 });
    expect(q.wait.nDmawait).toBe(1);
    // Off the list but the subqueue still stopped (woken, its list not flushed): sleeping again does not stop it twice,
    // and the parked txreq is not parked twice.
    iowaitUnlink(q.wait);
    expect(u.submit(0, tx, { wait: q.wait })).toBe(EBUSY);
    expect(q.ipoib).toMatchObject({ stops: 1, subqueueStopped: true });
    expect(q.ipoib.list).toHaveLength(1);
    expect(q.wait.nDmawait).toBe(2);
    expect(u.events(['subqueue']).map((r) => [r.a, r.b])).toEqual([[q.wait.id, 1]]);
    // Both sleeps counted in descq_full_count (the txreq came from the test, not the queue: no IPoIB conservation here).
    expect(u.engines[0]?.descqFullCount).toBe(u.stats().failedPlacements);
  });

  it('a wake-up restarts the subqueue and the queue submits again, its parked txreq first', () => {
    const u = new EmuUnit({ seed: 3, engines: 1, workload: 'ipoib:ipoib=1,load=max', retainLog: 'all' });
    u.runUntilMs(0.5);
    u.pause();
    u.runUntilMs(3);
    const q = u.senders[0];
    if (!q?.ipoib) throw new Error('no IPoIB queue');
    // The greedy queue filled the ring and sleeps on dmawait with its subqueue stopped.
    expect(q.asleep).toBe(true);
    expect(q.wait.queuedOn).toBe(u.engines[0]);
    expect(q.ipoib).toMatchObject({ subqueueStopped: true, stops: 1, restarts: 0 });
    const parked = q.ipoib.list[0];
    expect(parked).toBeDefined();
    const placed = q.ipoib.placed;
    const tail = u.engines[0]?.descqTail ?? 0;
    u.resume();
    u.runUntilMs(4);
    expect(u.events(['wakeup']).some((r) => r.a === q.wait.id)).toBe(true);
    expect(q.ipoib.restarts).toBeGreaterThanOrEqual(1);
    expect(q.ipoib.placed).toBeGreaterThan(placed);
    expect(u.engines[0]?.descqTail).not.toBe(tail);
    expect(q.ipoib.list.includes(parked as EmuTx)).toBe(false);
    const sq = u.events(['subqueue']).filter((r) => r.a === q.wait.id);
    expect(sq.slice(0, 2).map((r) => r.b)).toEqual([1, 0]); // stopped, then restarted by the wake-up
    expect(invariantViolations(u)).toEqual([]);
  });
});

describe('fault netdev-unregister', () => {
  it('emu run with netdev-unregister keeps every invariant; with an ENGINE it is a usage error', async () => {
    const run = ['emu', 'run', '--seed', '3', '--engines', '4', '--workload', 'mixed:ipoib=4,load=3', '--duration-ms', '60'];
    const ok = await runCli([...run, '--fault', 'netdev-unregister@30', '--json'], {});
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ invariantViolations: [], lostWakeups: 0 });
    expect(JSON.parse(ok.stdout).ipoibDropped).toBeGreaterThan(0);
    const text = await runCli([...run, '--fault', 'netdev-unregister@30'], {});
    expect(text.stdout).toMatch(/IPoIB dropped +\d+ txreqs \(the netdev was unregistered/);
    const none = await runCli(run, {});
    expect(none.stdout).not.toMatch(/IPoIB dropped/);
    const bad = await runCli([...run, '--fault', 'netdev-unregister@30:1'], {});
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/netdev-unregister takes no engine/);
  });

  it('parses without an engine and refuses one', () => {
    const u = idleQueue();
    expect(u.injectFault('netdev-unregister@5')).toMatchObject({ name: 'netdev-unregister', engine: null });
    expect(() => u.injectFault('netdev-unregister@5:0')).toThrow(/netdev-unregister takes no engine/);
  });

  it('then the sleep callback answers -EINVAL: nothing queued, the subqueue left alone, descq_full_count counts it', () => {
    const u = idleQueue();
    const q = u.senders[0];
    if (!q?.ipoib) throw new Error('no IPoIB queue');
    u.injectFault('netdev-unregister@2');
    u.runUntilMs(2.1);
    expect(u.host.netdevRegistered).toBe(false);
    fillRing(u, 0);
    const dqf = u.engines[0]?.descqFullCount ?? 0;
    expect(u.submit(0, new EmuTx(new Recorder()).load(txOf(2)), { wait: q.wait })).toBe(EINVAL);
    expect(q.wait.queuedOn).toBeNull();
    expect(q.ipoib).toMatchObject({ list: [], stops: 0, subqueueStopped: false });
    expect(u.engines[0]?.descqFullCount).toBe(dqf + 1);
    expect(invariantViolations(u)).toEqual([]);
  });

  it('an awake queue makes one last attempt: on a full ring the txreq is dropped and counted, and the queue stops', () => {
    const u = new EmuUnit({ seed: 1, engines: 1, workload: 'ipoib:ipoib=1,load=max,window=10', retainLog: 'all' });
    u.runUntilMs(0.5);
    u.pause();
    u.runUntilMs(3);
    const q = u.senders[0];
    if (!q?.ipoib) throw new Error('no IPoIB queue');
    expect(q.asleep).toBe(false); // its window is full, not the ring
    expect(q.outstanding).toBe(10);
    fillRing(u, 0);
    const taken = q.ipoib.taken;
    u.injectFault('netdev-unregister@3');
    u.runUntilMs(3.1);
    expect(u.events(['ipoibDrop']).map((r) => [r.a, r.b, r.c])).toEqual([[q.wait.id, 2, 1]]);
    expect(q.ipoib).toMatchObject({ dropped: 1, taken: taken + 1 });
    expect(u.stats().ipoibDropped).toBe(1);
    expect(q.stopped).toBe(true);
    expect(q.wait.queuedOn).toBeNull();
    u.resume();
    u.runUntilMs(10);
    expect(q.ipoib.taken).toBe(taken + 1); // the stack hands it nothing more
    expect(q.outstanding).toBe(0);
    expect(invariantViolations(u)).toEqual([]);
  });

  it('a queue asleep on dmawait drops its parked txreq when next woken, without submitting it, and stays stopped', () => {
    const u = new EmuUnit({ seed: 3, engines: 1, workload: 'ipoib:ipoib=1,load=max', retainLog: 'all' });
    u.runUntilMs(0.5);
    u.pause();
    u.runUntilMs(3);
    const q = u.senders[0];
    if (!q?.ipoib) throw new Error('no IPoIB queue');
    expect(q.asleep).toBe(true);
    u.injectFault('netdev-unregister@3');
    u.runUntilMs(3.1);
    expect(q.ipoib.list).toHaveLength(1); // still asleep: nothing happens until it is woken
    const placed = q.ipoib.placed;
    u.resume();
    u.runUntilMs(10);
    expect(u.events(['ipoibDrop']).map((r) => [r.a, r.c])).toEqual([[q.wait.id, 0]]);
    expect(q.ipoib).toMatchObject({ list: [], dropped: 1, placed, subqueueStopped: true });
    expect(q.stopped).toBe(true);
    const e = u.engines[0];
    expect(e?.descqHead).toBe(e?.descqTail); // the ring drained, nothing more came
    expect(invariantViolations(u)).toEqual([]);
  });
});

describe('IPoIB queues as waiters', () => {
  const dirs: [EmuUnit, string][] = [];
  afterEach(() => {
    for (const [u, d] of dirs.splice(0)) {
      closeSysroot(u, d);
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('the model lists them as kind ipoib, netdev ib0 and their queue index; the rendered tree shows none waiting less than the watchdog timeout', async () => {
    const u = new EmuUnit({ seed: 2, engines: 4, workload: 'mixed:ipoib=4,load=3' });
    const seen = new Set<number>();
    for (let ms = 5; ms <= 20; ms += 0.5) {
      u.runUntilMs(ms);
      for (const w of (await u.waiters()).waiters) {
        if (w.kind !== 'ipoib') continue;
        const s = u.senders.find((x) => x.ipoib?.txq === w.txq);
        expect(s?.spec.kind).toBe('ipoib');
        expect(w).toMatchObject({ netdev: 'ib0', engine: s?.engine.idx, waitsFor: 'dma-desc', onList: true, source: 'model' });
        expect(w.descriptorsNeeded).toBeGreaterThanOrEqual(2);
        expect(s?.wait.queuedOn?.idx).toBe(w.engine);
        seen.add(w.txq ?? -1);
      }
    }
    expect(seen.size).toBeGreaterThan(1);
    expect([...seen].every((t) => t >= 0 && t < 4)).toBe(true);
    // Keep stepping until one is asleep, then render: qp_stats lists QPs only and /proc PSM writers only.
    while (!(await u.waiters()).waiters.some((w) => w.kind === 'ipoib')) u.advance(0.1);
    const root = mkdtempSync(join(tmpdir(), 'hfi1-emu-ipoib-'));
    dirs.push([u, root]);
    await writeSysroot(u, root);
    const qpStats = readFileSync(join(root, 'sys/kernel/debug/hfi1/hfi1_0/qp_stats'), 'latin1');
    expect(qpStats.trim().split('\n')).toHaveLength(2 + 4); // QP0, QP1 and the four QP senders
    const hw = await openHwBackend({ sysroot: root });
    try {
      // A live host sees an IPoIB queue only once the netdev watchdog timed it out (over 1 s stopped): these wait
      // for microseconds, so none is listed; the kind is visible in part, from the kernel log.
      const seenHw = await (await hw.unit(0)).waiters?.();
      expect(seenHw?.waiters.some((w) => w.kind === 'ipoib')).toBe(false);
      expect(seenHw?.visibility.find((v) => v.kind === 'ipoib')).toMatchObject({
        visible: true,
        source: 'kmsg',
        partial: expect.stringContaining('netdev watchdog'),
      });
    } finally {
      await hw.close();
    }
  });
});

describe('a lost wake-up on an IPoIB queue', () => {
  it('lost-wakeup:ipoib@50:2 leaves the queue asleep for good: the rule judges it stranded through the emulated backend', async () => {
    const b: EmuBackend = createEmuBackend({
      seed: 1,
      engines: 3,
      descqCnt: undefined,
      workload: 'ipoib:gbps=10,sl=2', // VL 2, whose one engine is engine 2
      atMs: 40,
      fault: ['lost-wakeup:ipoib@50:2'],
    });
    const unit = await b.unit(0);
    const track = newStrandTrack();
    const verdicts: string[] = [];
    let last: { verdict: string; waiter: unknown; reason: string } | undefined;
    // 500 ms of virtual time: the fault at 50 ms, then strand-ms (200) and three quiet samples.
    for (let round = 0; round < 10; round++) {
      b.advanceMs(50);
      const w = await unit.waiters?.();
      if (!w) throw new Error('the emulated unit lists no waiters');
      const js = judgeWaiters(track, w, await unit.sample(), { strandMs: 200 });
      for (const j of js) if (j.verdict === 'stranded') verdicts.push(`${j.waiter.kind}@${j.waiter.engine}`);
      last = js.find((j) => j.verdict === 'stranded') ?? last;
    }
    expect(new Set(verdicts)).toEqual(new Set(['ipoib@2']));
    expect(last).toMatchObject({
      verdict: 'stranded',
      reason: 'lost-wakeup',
      waiter: { kind: 'ipoib', netdev: 'ib0', txq: 0, engine: 2, ownPending: 0 },
    });
    const u = unit as EmuUnit;
    expect(u.totals().lostWakeups).toBe(1);
    expect(invariantViolations(u)[0]).toMatch(/^lost wake-up on engine 2: IPoIB queue ib0 txq 0 sleeps on dmawait/);
    await b.close();
  });

  it('the waiters command on the emulated backend names the stranded queue by netdev and txq', async () => {
    const r = await runCli(
      [
        '--backend',
        'emu',
        '--workload',
        'ipoib:gbps=10,sl=2',
        '--engines',
        '3',
        '--fault',
        'lost-wakeup:ipoib@50:2',
        'waiters',
        '--json',
      ],
      {},
    );
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.stranded).toBe(1);
    const unit = j.units[0];
    expect(unit.visibility.find((v: { kind: string }) => v.kind === 'ipoib')).toMatchObject({ visible: true, source: 'model' });
    const stranded = unit.waiters.filter((w: { verdict: string }) => w.verdict === 'stranded');
    expect(stranded).toHaveLength(1);
    expect(stranded[0]).toMatchObject({ kind: 'ipoib', netdev: 'ib0', txq: 0, engine: 2, reason: 'lost-wakeup' });
  });

  it('is refused on an engine without an IPoIB queue', () => {
    expect(() => new EmuUnit({ workload: 'qp', faults: ['lost-wakeup:ipoib@1:3'] })).toThrow(/engine 3 has no IPoIB sender/);
  });
});

describe('workloads with IPoIB queues', () => {
  it('key ipoib=N makes queues 0..N-1 of the netdev send (num_sdma of them), after the QPs and PSM writers', () => {
    const map = buildVlMap(2, 2);
    const w = parseWorkload('mixed:ipoib=2', 2, map, 2);
    expect(w.senders.map((s) => s.kind)).toEqual(['qp', 'psm', 'qp', 'psm', 'ipoib', 'ipoib']);
    expect(w.senders.filter((s) => s.kind === 'ipoib').map((s) => [s.selector, s.vl])).toEqual([
      [0, 0],
      [1, 0],
    ]);
    // The ipoib workload: every queue, one per engine of the unit (the bulk service's included).
    expect(parseWorkload('ipoib', 2, map, 2, 4).senders.map((s) => s.selector)).toEqual([0, 1, 2, 3]);
    expect(parseWorkload('ipoib:sl=1', 2, map, 2).senders.map((s) => s.vl)).toEqual([1, 1]);
    expect(() => parseWorkload('mixed:ipoib=3', 2, map, 2)).toThrow(/ipoib must be from 0 to 2/);
    expect(() => parseWorkload('mixed:sl=32', 2, map, 2)).toThrow(/sl must be from 0 to 31/);
    expect(() => parseWorkload('nope', 2, map, 2)).toThrow(/ipoib, idle and keys load, spread, qps, psms, ipoib, sl,/);
  });
});

describe('the DmaWait port counter', () => {
  it('counts IPoIB sleeps with QP sleeps, never a PSM queue’s (n_dmawait, qp.c and ipoib_tx.c)', async () => {
    const u = new EmuUnit({ seed: 5, engines: 2, workload: 'ipoib:load=max', chip: 'jkr', driver: 'hfi2' });
    u.runUntilMs(30);
    const dir = mkdtempSync(join(tmpdir(), 'dmawait-'));
    try {
      await writeSysroot(u, dir);
      closeSysroot(u, dir);
      const bytes = readFileSync(join(dir, 'sys/kernel/debug/hfi2/hfi2_0/port1counters'));
      const names = readFileSync(join(dir, 'sys/kernel/debug/hfi2/hfi2_0/portcounter_names'), 'utf8').split('\n');
      const byKind = (k: string) => u.senders.filter((s) => s.spec.kind === k).reduce((n, s) => n + s.wait.nDmawait, 0);
      expect(byKind('ipoib')).toBeGreaterThan(0);
      expect(bytes.readBigUInt64LE(8 * names.indexOf('DmaWait'))).toBe(BigInt(byKind('qp') + byKind('ipoib')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
