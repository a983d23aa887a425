// A snapshot of a CN5000 host running hfi2 (engine window 8-15, two ports, a JKR BAR) replays with the same
// flavour, engine set and samples: capture stores what the hfi2 readers read.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openHwBackend } from '../../src/hw/index.js';
import { chipModel, engineRegOffset, memoryRegOffset } from '../../src/progress/chip.js';
import { openSnapshotBackend } from '../../src/snapshot/backend.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';
import { writeBarImage } from '../hw/bar-image.js';
import { writeHfi2Tree } from '../hw/hfi2-tree.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'snap-hfi2-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const META = { host: 'cn5000', toolVersion: '0.0.0-test', now: new Date('2026-01-02T03:04:05.000Z') };
const JKR = chipModel('jkr');

describe('a snapshot of an hfi2 host', () => {
  it('replays with the same flavour, engines 8..15 and samples, the JKR BAR included', async () => {
    const host = tmp();
    writeHfi2Tree(host, {
      params: { sdma_descq_cnt: '2048\n', pad_sdma_desc: '-1\n' },
      bar: (p) =>
        writeBarImage(
          p,
          new Map([
            [JKR.sendDmaEngines, 16n],
            [engineRegOffset(JKR, 'ctrl', 9), 0x19n],
            [memoryRegOffset(JKR, 9), 0x400090n],
          ]),
          JKR.bar0Size,
        ),
    });
    const live = await openHwBackend({ sysroot: host, clock: { nowMs: () => 0 } });
    const [want] = await live.units();
    const wantSamples = await (await live.unit(0)).sample();
    await live.close();

    const out = join(tmp(), 'cn5000.tar.gz');
    const m = await captureSnapshot(host, out, META, {
      samples: 1,
      intervalMs: 0,
      clock: { nowMs: () => 0 },
      sleep: async () => {},
    });
    expect(m.units).toEqual([{ name: 'hfi2_0', pci: '0000:41:00.0', chip: 'jkr' }]);
    const captured = m.instants[0]?.sources.filter((s) => s.captured).map((s) => s.path) ?? [];
    for (const f of [
      'sys/class/infiniband/hfi2_0/hw_resources',
      'sys/module/hfi2/parameters/pad_sdma_desc',
      'sys/class/infiniband/hfi2_0/sdma8/vl',
      'sys/class/infiniband/hfi2_0/sdma15/vl',
      'sys/class/infiniband/hfi2_0/ports/2/state',
      'sys/kernel/debug/hfi2/hfi2_0/sdes',
      'sys/kernel/debug/hfi2/hfi2_0/sdma_cpu_list',
      'sys/kernel/debug/hfi2/hfi2_0/port2counters',
      'sys/bus/pci/devices/0000:41:00.0/vendor',
      'sys/bus/pci/devices/0000:41:00.0/resource0',
    ]) {
      expect(captured).toContain(f);
    }

    const replay = await openSnapshotBackend(out, { tmpDir: tmp() });
    try {
      const [got] = await replay.units();
      expect(got?.engineIds).toEqual(want?.engineIds);
      expect(got?.flavour).toMatchObject({ module: 'hfi2', chip: 'jkr', driver: 'hfi2', ports: 2 });
      expect(got?.sources.find((s) => s.source === 'bar')?.readable).toBe(true);
      const samples = await (await replay.unit(0)).sample();
      expect(samples.map((s) => [s.engine, s.state, s.csr?.ctrl, s.vl, s.counters?.sdmaInt])).toEqual(
        wantSamples.map((s) => [s.engine, s.state, s.csr?.ctrl, s.vl, s.counters?.sdmaInt]),
      );
    } finally {
      await replay.close();
    }
  });
});
