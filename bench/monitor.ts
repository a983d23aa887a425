// monitor.round: one round of the monitor every command and the exporter render (every unit's engines, registers,
// counters, waiters with their owners, every port's counters, the findings), on an emulated host of two 16-engine
// units with 1,024 QPs in their qp_stats, read by the live-host backend, against the bytes a round must read: the
// files that round read (logged), read whole the plainest way, and the engines' registers loaded from the mapped
// BARs. Both in CPU time; between rounds the emulator moves 100 ms on and renders the tree again (not timed), so
// every round reads new text as on a live host.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeSysroot, writeSysroot } from '../src/emu/sysroot.js';
import { EmuUnit } from '../src/emu/unit.js';
import { openBarWindow } from '../src/hw/bar.js';
import { openHwBackend } from '../src/hw/index.js';
import { readEngineCsrs, SDMA_WINDOW } from '../src/hw/regs.js';
import { Monitor } from '../src/monitor/monitor.js';
import { type FsRead, loggingFs, replay } from './cli.js';
import { type BenchResult, type BenchSuite, measureRatio, wanted } from './harness.js';

/** 32 QPs on each of 16 engines of each unit: 1,024 QPs in all. */
const WORKLOAD = 'qp:qps=32,gbps=1';

export const monitorSuite: BenchSuite = {
  name: 'monitor',
  async run(): Promise<BenchResult[]> {
    if (!wanted('monitor.round')) return [];
    const dir = mkdtempSync(join(tmpdir(), 'bench-monitor-'));
    const units = [
      new EmuUnit({ seed: 1, unit: 0, workload: WORKLOAD }),
      new EmuUnit({ seed: 2, unit: 1, pci: '0000:06:00.0', workload: WORKLOAD }),
    ];
    try {
      const render = async () => {
        for (const u of units) await writeSysroot(u, dir);
      };
      for (const u of units) u.runUntilMs(200);
      await render();
      const log: FsRead[] = [];
      const backend = await openHwBackend({ sysroot: dir, fs: loggingFs(log), clock: { nowMs: () => units[0]?.nowMs ?? 0 } });
      const monitor = new Monitor(backend, { stallMs: 1000, strandMs: 1000 });
      let reads: FsRead[] = [];
      const bars = readdirSync(join(dir, 'sys/bus/pci/devices')).map((d) =>
        openBarWindow(join(dir, 'sys/bus/pci/devices', d, 'resource0'), SDMA_WINDOW),
      );
      let sink = 0n;
      const r = await measureRatio(
        'monitor.round',
        'ms/round',
        {
          before: async (side) => {
            if (side !== 'work') return;
            for (const u of units) u.runUntilMs(u.nowMs + 100);
            await render();
          },
          work: async () => {
            const from = log.length;
            await monitor.round();
            reads = log.slice(from);
          },
          baseline: () => {
            sink ^= BigInt(replay(reads));
            for (const w of bars) for (let e = 0; e < 16; e++) sink ^= readEngineCsrs(w, e).ctrl;
          },
          rounds: 15,
          warmup: 5,
        },
        { max: 3 },
      );
      // Every QP of both units as qp_stats lists them (QP0 and QP1 of each port included).
      const qps = units.reduce(
        (n, u) =>
          n +
          readFileSync(join(dir, `sys/kernel/debug/hfi1/${u.info.name}/qp_stats`), 'utf8')
            .split('\n')
            .filter(Boolean).length,
        0,
      );
      Object.assign(r, {
        units: units.length,
        engines: units.length * 16,
        qps,
        filesPerRound: reads.length,
        bytesPerRound: replay(reads),
        baselineIs: 'the files of one round read whole, the engine registers loaded from the mapped BARs',
      });
      for (const w of bars) w.close();
      await backend.close();
      if (sink === -1n) console.log('');
      return [r];
    } finally {
      for (const u of units) closeSysroot(u, dir);
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
