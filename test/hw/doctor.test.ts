import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliContext, GlobalOptions } from '../../src/cli/context.js';
import { doctorCommand, doctorReport } from '../../src/cli/doctor.js';
import type { Io } from '../../src/cli/io.js';
import { emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { emuOptions } from '../support/rendered-host.js';
import { writeBarImage } from './bar-image.js';
import { writeTree } from './sysroot.js';

const base = mkdtempSync(join(tmpdir(), 'hfi1-doctor-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function runDoctor(sysroot: string, json: boolean): Promise<{ code: number; out: string }> {
  let out = '';
  const stdout = (t: string) => {
    out += t;
  };
  const io = { stdout, stderr: () => {}, env: {}, isTTY: false } as unknown as Io;
  const global = { backend: 'auto', sysroot, json, color: false, fault: [] } as unknown as GlobalOptions;
  const ctx = { io, global, paint: (_s: unknown, t: string) => t, openBackend: async () => Promise.reject(new Error('unused')) };
  const code = await doctorCommand.run({}, ctx as unknown as CliContext);
  return { code, out };
}

describe('doctor', () => {
  it('explains a missing debugfs with the mount command, and lists what is readable', async () => {
    const root = join(base, 'nodebugfs');
    writeTree(root, { debugfs: 'empty', bar: (p) => writeBarImage(p, new Map()) });
    const { code, out } = await runDoctor(root, false);
    expect(code).toBe(0);
    expect(out).toContain('hfi1_0 (0000:05:00.0): 2 engines, ring 2048 descriptors');
    expect(out).toMatch(/debugfs sdes\s+not readable\s+debugfs is not mounted/);
    expect(out).toContain('fix:  mount debugfs: mount -t debugfs none /sys/kernel/debug');
    expect(out).toMatch(/BAR \(resource0\)\s+readable/);
    expect(out).toMatch(/\/proc\/interrupts\s+readable/);
  });

  it('--json carries every source with reason and fix', async () => {
    const root = join(base, 'json');
    writeTree(root, { debugfs: 'empty' });
    const { out } = await runDoctor(root, true);
    const r = JSON.parse(out);
    expect(r.units).toHaveLength(1);
    const bySource = Object.fromEntries(r.units[0].sources.map((s: { source: string }) => [s.source, s]));
    expect(Object.keys(bySource)).toEqual([
      'sdes',
      'counters',
      'hwCounters',
      'interrupts',
      'bar',
      'sysfs',
      'portCounters',
      'qpStats',
      'procPsm',
      'trace',
    ]);
    expect(bySource.portCounters).toMatchObject({ readable: false, reason: expect.stringContaining('from sysfs') });
    expect(bySource.qpStats).toMatchObject({ readable: false, reason: expect.stringContaining('not mounted') });
    expect(bySource.trace).toMatchObject({ readable: false, reason: expect.stringContaining('tracefs is not mounted') });
    expect(bySource.counters).toMatchObject({ readable: false, fix: expect.stringContaining('mount -t debugfs') });
    expect(bySource.bar).toMatchObject({ readable: false, reason: expect.stringContaining('no such file') });
    expect(bySource.sysfs.readable).toBe(true);
  });

  it('says when an HFI is on the bus but the driver is not bound, and points at the emulator', async () => {
    const root = join(base, 'unbound');
    const dev = join(root, 'sys/bus/pci/devices/0000:81:00.0');
    mkdirSync(dev, { recursive: true });
    writeFileSync(join(dev, 'vendor'), '0x8086\n');
    writeFileSync(join(dev, 'device'), '0x24f1\n');
    const r = await doctorReport(root);
    expect(r.units).toEqual([]);
    expect(r.unboundPci).toEqual(['0000:81:00.0']);
    expect(r.advice.join('\n')).toContain('driver is not bound');
    expect(r.advice.join('\n')).toContain('modprobe hfi1');
    expect(r.advice.join('\n')).toContain('--backend emu');
  });

  it('fails a device whose registers read all-ones (device-gone), naming it and what to do', async () => {
    const root = join(base, 'gone');
    const u = emuUnitFromOptions(emuOptions({ engines: 2, workload: 'qp:gbps=1', fault: ['device-gone@5'] }));
    u.runUntilMs(10);
    await writeSysroot(u, root);
    const { code, out } = await runDoctor(root, false);
    expect(code).toBe(1);
    expect(out).toMatch(
      /FAIL {2}registers\n {8}hfi1_0 \(0000:[0-9a-f:.]+\): registers read all-ones on 2 of 2 engines: the device is gone/,
    );
    expect(out).toMatch(/fix: check 'dmesg' and 'lspci -s /);
    expect(out).toContain('LEN_GEN reads all-ones (the device is gone)');
    expect(out).not.toContain('LEN_GEN says');
    const healthy = join(base, 'answers');
    const v = emuUnitFromOptions(emuOptions({ engines: 2, workload: 'qp:gbps=1' }));
    v.runUntilMs(10);
    await writeSysroot(v, healthy);
    const fine = await runDoctor(healthy, false);
    expect(fine.out).toMatch(/PASS {2}registers\n {8}hfi1_0: the registers answer \(2 engines sampled\)/);
  });

  it('on an empty tree: no unit found, and --backend emu exists', async () => {
    const { out } = await runDoctor(join(base, 'nothing'), false);
    expect(out).toContain('no hfi1 or hfi2 unit found');
    expect(out).toContain('--backend emu');
  });
});
