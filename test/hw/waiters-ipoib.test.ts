// IPoIB queues on the live record: the unit's netdevs from sysfs, each queue's tx_timeout, the driver's timeout blocks
// from the kernel log (dated by /proc/uptime; recent ones only) and the txq trace events when tracing is on, read
// from the emulator's rendered tree on its virtual clock. What is seen, and what the kind's visibility says when a
// source is missing: never "none stranded" for what cannot be seen.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Unit, Waiter, WaiterVisibility } from '../../src/backend.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit, type EmuUnitOptions } from '../../src/emu/unit.js';
import { openHwBackend } from '../../src/hw/index.js';
import { tempDirs } from '../support/temp.js';

const tempDir = tempDirs('hw-ipoib-');
const STUCK: EmuUnitOptions = {
  seed: 5,
  engines: 2,
  numVls: 1, // VL 0 maps both engines: queue q sends on engine q & 1 (sdma_select_engine_sc)
  descqCnt: 256,
  workload: 'mixed:ipoib=2,gbps=2',
  faults: ['ipoib-timeout@100:1'],
};

type Ipoib = Extract<Waiter, { kind: 'ipoib' }>;

/** Render `u` at `atMs`, let `edit` change the tree, then read the unit's waiters on the emulator's clock. */
async function waitersAt(
  u: EmuUnit,
  atMs: number,
  edit: (dir: string) => void = () => {},
  dir = tempDir(),
): Promise<{ ipoib: Ipoib[]; visibility: WaiterVisibility | undefined; dir: string }> {
  u.runUntilMs(atMs);
  await writeSysroot(u, dir);
  closeSysroot(u, dir);
  edit(dir);
  const hw = await openHwBackend({ sysroot: dir, clock: { nowMs: () => u.nowMs } });
  try {
    const unit: Unit = await hw.unit(0);
    const s = await unit.waiters?.();
    return {
      ipoib: (s?.waiters ?? []).filter((w): w is Ipoib => w.kind === 'ipoib'),
      visibility: s?.visibility.find((v) => v.kind === 'ipoib'),
      dir,
    };
  } finally {
    await hw.close();
  }
}

describe('IPoIB queues on a live host', () => {
  it('a queue the watchdog timed out: its engine, no_desc and wait queued from the timeout block; the kind visible in part', async () => {
    const { ipoib, visibility } = await waitersAt(new EmuUnit(STUCK), 2300);
    expect(ipoib).toHaveLength(1);
    expect(ipoib[0]).toMatchObject({ netdev: 'ib0', txq: 1, engine: 1, source: 'kmsg', waitsFor: 'dma-desc' });
    expect(ipoib[0]?.evidence).toMatchObject({ source: 'kmsg', noDesc: 1, waitQueued: true, stopped: true });
    expect(visibility).toMatchObject({ visible: true, source: 'kmsg', partial: expect.stringMatching(/watchdog/) });
  });

  it('before the watchdog fires nothing is seen, and the visibility still says only part of the kind shows', async () => {
    const { ipoib, visibility } = await waitersAt(new EmuUnit(STUCK), 600);
    expect(ipoib).toEqual([]);
    expect(visibility?.visible).toBe(true);
    expect(visibility?.partial).toBeTruthy();
  });

  it('an old timeout block is not a queue stuck now', async () => {
    // The fault's queue recovers only by a wake-up; a block dated long before the read is left out.
    const { ipoib } = await waitersAt(new EmuUnit(STUCK), 2300, (dir) => {
      writeFileSync(join(dir, 'proc/uptime'), '99999.00 0.00\n');
    });
    expect(ipoib).toEqual([]);
  });

  it('the kernel log unreadable: not visible, with why and what to do; a rising tx_timeout still names the queue', async () => {
    const u = new EmuUnit(STUCK);
    const dir = tempDir();
    const noLog = (d: string) => rmSync(join(d, 'dev/kmsg'));
    const first = await waitersAt(u, 1000, noLog, dir);
    expect(first.visibility).toMatchObject({ visible: false, fix: expect.stringMatching(/root|dmesg_restrict/) });
    const hw = await openHwBackend({ sysroot: dir, clock: { nowMs: () => u.nowMs } });
    try {
      const unit = await hw.unit(0);
      await unit.waiters?.();
      u.runUntilMs(2300);
      await writeSysroot(u, dir);
      closeSysroot(u, dir);
      noLog(dir);
      const later = ((await unit.waiters?.())?.waiters ?? []).filter((w): w is Ipoib => w.kind === 'ipoib');
      expect(later).toHaveLength(1);
      expect(later[0]).toMatchObject({ txq: 1, engine: null, source: 'sysfs' });
      expect(later[0]?.evidence?.timeouts).toBeGreaterThanOrEqual(1);
    } finally {
      await hw.close();
    }
  });

  it('a unit without an IPoIB netdev: visible, none; sys/class/net unlisted: not visible, never none', async () => {
    const none = await waitersAt(new EmuUnit({ seed: 5, engines: 2, workload: 'qp' }), 100, (dir) =>
      rmSync(join(dir, 'sys/class/net/ib0'), { recursive: true, force: true }),
    );
    expect(none.visibility).toMatchObject({ visible: true, source: 'sysfs' });
    const blind = await waitersAt(new EmuUnit({ seed: 5, engines: 2, workload: 'qp' }), 100, (dir) =>
      rmSync(join(dir, 'sys/class/net'), { recursive: true }),
    );
    expect(blind.visibility).toMatchObject({ visible: false, reason: expect.stringMatching(/sys\/class\/net/) });
  });

  it('the txq trace events, when someone enabled them, name a stopped queue and its engine (never enabled by the reader)', async () => {
    const u = new EmuUnit({ seed: 5, engines: 2, descqCnt: 256, workload: 'mixed:ipoib=1,gbps=2' });
    const line = (stopped: number) =>
      `  kworker/1:1-77 [001] .... 12.000100: hfi1_txq_stop: [0000:05:00.0] txq ffff9a01 idx 0 sde ffff9b02:1 cpu 1 head 5 tail 9 flow 0 used 4 stops 2 no_desc 1 stopped ${stopped}`;
    const tracing = (dir: string, enable: string, lines: string[]) => {
      const t = join(dir, 'sys/kernel/tracing');
      mkdirSync(join(t, 'events/hfi1_tx/hfi1_txq_stop'), { recursive: true });
      writeFileSync(join(t, 'events/hfi1_tx/hfi1_txq_stop/enable'), enable);
      writeFileSync(join(t, 'trace'), `# tracer: nop\n${lines.join('\n')}\n`);
    };
    const on = await waitersAt(u, 100, (dir) => tracing(dir, '1\n', [line(1)]));
    expect(on.ipoib).toEqual([
      expect.objectContaining({ netdev: 'ib0', txq: 0, engine: 1, source: 'trace', waitsFor: 'dma-desc', ownPending: 4 }),
    ]);
    // Off: the reader reads nothing; a later wake leaves the queue running.
    expect(
      (await waitersAt(new EmuUnit({ seed: 5, engines: 2, workload: 'mixed:ipoib=1' }), 100, (d) => tracing(d, '0\n', [line(1)])))
        .ipoib,
    ).toEqual([]);
    expect(
      (
        await waitersAt(new EmuUnit({ seed: 5, engines: 2, workload: 'mixed:ipoib=1' }), 100, (d) =>
          tracing(d, '1\n', [line(1), line(0)]),
        )
      ).ipoib,
    ).toEqual([]);
  });
});
