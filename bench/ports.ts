// ports.watchSample: what reading every port's counters adds to a `watch --json` sample (debugfs port<N>counters
// with portcounter_names, the PortCounters files the driver's counters leave out, and judging each stalled engine's
// cause from them), in this process on an emulated two-port CN5000 (16 engines, waiters and links), against the same
// watch on a backend whose units offer no port counters.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, Unit } from '../src/backend.js';
import { closeSysroot, writeSysroot } from '../src/emu/sysroot.js';
import { EmuUnit } from '../src/emu/unit.js';
import { hwFsFor } from '../src/hw/fsio.js';
import { openHwBackend } from '../src/hw/index.js';
import { pairedMs, watchRun } from './contain.js';
import { type BenchResult, type BenchSuite, ratioResult, wanted } from './harness.js';

/** `b` with every unit's portCounters taken away (the monitor then reads none). */
function withoutPortCounters(b: Backend): Backend {
  const strip = (u: Unit): Unit =>
    new Proxy(u, {
      get(t, k) {
        if (k === 'portCounters') return undefined;
        const v = Reflect.get(t, k);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
  return new Proxy(b, {
    get(t, k) {
      if (k === 'unit') return async (id: number | string) => strip(await t.unit(id));
      const v = Reflect.get(t, k);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

export const portsSuite: BenchSuite = {
  name: 'ports',
  async run(): Promise<BenchResult[]> {
    if (!wanted('ports.watchSample')) return [];
    const dir = mkdtempSync(join(tmpdir(), 'bench-ports-'));
    try {
      const u = new EmuUnit({ seed: 1, chip: 'jkr', driver: 'cornelis', ports: 2 });
      u.runUntilMs(20);
      await writeSysroot(u, dir);
      closeSysroot(u, dir);
      // Each run opens the tree as a command does, with a reader of its own.
      const fs = hwFsFor(dir);
      const count = 25;
      const [withMs, withoutMs] = await pairedMs(
        watchRun(dir, fs, count, async () => openHwBackend({ sysroot: dir, fs: hwFsFor(dir) })),
        watchRun(dir, fs, count, async () => withoutPortCounters(await openHwBackend({ sysroot: dir, fs: hwFsFor(dir) }))),
        2,
        8000,
      );
      return [
        ratioResult('ports.watchSample', withMs / count, withoutMs / count, 'CPU ms/sample', 1.1, { engines: 16, ports: 2 }),
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
