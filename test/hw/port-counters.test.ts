// The live port counters and driver settings, read from the emulator's rendered tree and from the same tree with
// files taken away or broken: debugfs port<N>counters first, sysfs hw_counters without it, the PortCounters view for
// what only it gives and for what is still missing; a saturated 8-bit counter said; a malformed file a warning that
// loses nothing else; the settings (use_bulksvc, bulksvc_*, num_vls, cap_mask, bulksvc.sde) with their evidence.
import { readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PortCounters } from '../../src/backend.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit, type EmuUnitOptions } from '../../src/emu/unit.js';
import { openHwBackend } from '../../src/hw/index.js';
import { parseBulkServiceEngines } from '../../src/hw/parse/hw-resources.js';
import { PMA_REFRESH_MS } from '../../src/hw/port-counters.js';
import { paramBool } from '../../src/hw/settings.js';
import { TWO_PORT_CN5000 } from '../emu/support.js';
import { tempDirs } from '../support/temp.js';

const tempDir = tempDirs('hw-port-counters-');
const TWO_PORTS: EmuUnitOptions = { ...TWO_PORT_CN5000, seed: 7 };
const DEBUG = 'sys/kernel/debug/hfi1/hfi1_0';
const PORTS = 'sys/class/infiniband/hfi1_0/ports';

async function rendered(opts: EmuUnitOptions, atMs = 100): Promise<{ dir: string; u: EmuUnit }> {
  const u = new EmuUnit(opts);
  u.runUntilMs(atMs);
  const dir = tempDir();
  await writeSysroot(u, dir);
  closeSysroot(u, dir);
  return { dir, u };
}

async function read(dir: string): Promise<{ ports: PortCounters[]; warnings: string[] }> {
  const hw = await openHwBackend({ sysroot: dir });
  try {
    const unit = await hw.unit(0);
    const ports = (await unit.portCounters?.()) ?? [];
    return { ports, warnings: (unit.warnings?.() ?? []).map((w) => w.message) };
  } finally {
    await hw.close();
  }
}

describe('port counters of a live unit', () => {
  it("read every port from debugfs, LinkErrorRecovery and RcvErrors from PortCounters: the emulator's own values", async () => {
    const { dir, u } = await rendered(TWO_PORTS);
    const { ports, warnings } = await read(dir);
    expect(warnings).toEqual([]);
    const model = await u.portCounters();
    expect(ports.map((p) => p.port)).toEqual([1, 2]);
    for (const p of ports) {
      const m = model.find((x) => x.port === p.port)?.values;
      expect(p.values).toEqual(m);
      expect(p.sources).toMatchObject({ xmitWait: 'debugfs', dmaWait: 'debugfs', linkErrorRecovery: 'pma', rcvErrors: 'pma' });
      expect(p.saturated).toEqual([]);
    }
  });

  it('without debugfs, from the world-readable hw_counters', async () => {
    const { dir, u } = await rendered(TWO_PORTS);
    rmSync(join(dir, 'sys/kernel/debug'), { recursive: true });
    const { ports } = await read(dir);
    const model = await u.portCounters();
    expect(ports[1]?.values.xmitWait).toBe(model[1]?.values.xmitWait);
    expect(ports[1]?.sources).toMatchObject({ xmitWait: 'hwCounters', xmitData: 'hwCounters', dmaWait: 'hwCounters' });
  });

  it('with only the PortCounters view: what it gives, XmitWait and DmaWait unknown rather than 0', async () => {
    const { dir } = await rendered(TWO_PORTS);
    rmSync(join(dir, 'sys/kernel/debug'), { recursive: true });
    for (const p of [1, 2]) rmSync(join(dir, PORTS, String(p), 'hw_counters'), { recursive: true });
    const { ports } = await read(dir);
    expect(ports[0]?.values.xmitPackets).toBeGreaterThan(0n);
    expect(ports[0]?.sources.xmitPackets).toBe('pma');
    expect(ports[0]?.values.xmitWait).toBeNull();
    expect(ports[0]?.values.dmaWait).toBeNull();
  });

  it('say a PortCounters field at its largest is saturated (8-bit LinkDowned at 255)', async () => {
    const { dir } = await rendered(TWO_PORTS);
    rmSync(join(dir, 'sys/kernel/debug'), { recursive: true });
    rmSync(join(dir, PORTS, '2/hw_counters'), { recursive: true });
    writeFileSync(join(dir, PORTS, '2/counters/link_downed'), '255\n');
    const { ports } = await read(dir);
    expect(ports[1]?.values.linkDowned).toBe(255n);
    expect(ports[1]?.saturated).toContain('linkDowned');
  });

  it('a malformed port<N>counters is a warning naming it, the port read from sysfs instead; nothing else is lost', async () => {
    const { dir } = await rendered(TWO_PORTS);
    writeFileSync(join(dir, DEBUG, 'port2counters'), Buffer.alloc(13));
    const { ports, warnings } = await read(dir);
    expect(warnings.join('\n')).toMatch(/port2counters/);
    expect(ports[0]?.sources.xmitWait).toBe('debugfs');
    expect(ports[1]?.sources.xmitWait).toBe('hwCounters');
  });

  it('reads the PortCounters files at most every PMA_REFRESH_MS; the driver counters every time', async () => {
    const { dir } = await rendered(TWO_PORTS);
    let now = 10_000;
    const hw = await openHwBackend({ sysroot: dir, clock: { nowMs: () => now } });
    try {
      const unit = await hw.unit(0);
      expect((await unit.portCounters?.())?.[0]?.values.linkErrorRecovery).toBe(0n);
      writeFileSync(join(dir, PORTS, '1/counters/link_error_recovery'), '3\n');
      writeFileSync(join(dir, PORTS, '1/hw_counters/DmaWait'), '77\n');
      rmSync(join(dir, 'sys/kernel/debug'), { recursive: true });
      now += PMA_REFRESH_MS - 1;
      const soon = (await unit.portCounters?.())?.[0]?.values;
      expect(soon?.linkErrorRecovery).toBe(0n);
      expect(soon?.dmaWait).toBe(77n);
      now += 1;
      expect((await unit.portCounters?.())?.[0]?.values.linkErrorRecovery).toBe(3n);
    } finally {
      await hw.close();
    }
  });

  it('a PortCounters file that is not a number is a warning; the others are read', async () => {
    const { dir } = await rendered(TWO_PORTS);
    writeFileSync(join(dir, PORTS, '1/counters/link_error_recovery'), 'lots\n');
    const { ports, warnings } = await read(dir);
    expect(warnings.join('\n')).toMatch(/ports\/1\/counters/);
    expect(ports[0]?.values.xmitWait).not.toBeNull();
    expect(ports[1]?.values.linkErrorRecovery).toBe(0n);
  });
});

describe('driver settings of a live unit', () => {
  it('the bulk service on: use_bulksvc, its parameters and the engines hw_resources gives it, with the files named', async () => {
    const { dir } = await rendered({ seed: 7, chip: 'jkr', driver: 'cornelis', descqCnt: 256, params: ['use_bulksvc=Y'] }, 10);
    const hw = await openHwBackend({ sysroot: dir });
    const [info] = await hw.units();
    await hw.close();
    expect(info?.settings).toMatchObject({
      useBulksvc: true,
      bulkServiceEngines: [12, 13, 14, 15],
      numVls: 8,
      sdmaEnabled: true,
      bulksvc: expect.objectContaining({ bulksvc_num_sdma: '4' }),
    });
    expect(info?.settings?.evidence.join('\n')).toMatch(/use_bulksvc Y \(.*parameters\/use_bulksvc\)/);
    expect(info?.settings?.evidence.join('\n')).toMatch(/bulksvc\.sde 12-15 \(.*hw_resources line \d+\)/);
  });

  it('upstream hfi1 has no bulk service (null, not false); a cap_mask without the SDMA bit says SDMA is off', async () => {
    const { dir } = await rendered({ seed: 7, engines: 2, params: ['cap_mask=0x4c09a08cb98'] }, 10);
    const hw = await openHwBackend({ sysroot: dir });
    const [info] = await hw.units();
    await hw.close();
    expect(info?.settings).toMatchObject({ useBulksvc: null, bulkServiceEngines: [], sdmaEnabled: false });
  });

  it('a use_bulksvc that is not a bool is a warning and left out', async () => {
    const { dir } = await rendered(
      { seed: 7, chip: 'jkr', driver: 'cornelis', engines: 2, params: ['use_bulksvc=Y', 'bulksvc_num_sdma=1', 'num_vls=1'] },
      10,
    );
    const file = join(dir, 'sys/module/hfi1/parameters/use_bulksvc');
    writeFileSync(file, 'maybe\n');
    const hw = await openHwBackend({ sysroot: dir });
    const unit = await hw.unit(0);
    const warnings = (unit.warnings?.() ?? []).map((w) => w.message).join('\n');
    await hw.close();
    expect(unit.info.settings?.useBulksvc).toBeNull();
    expect(warnings).toMatch(/use_bulksvc: not Y or N/);
  });

  it('a parameter holding control characters is shown escaped and cut short, never raw', async () => {
    const { dir } = await rendered(
      { seed: 7, chip: 'jkr', driver: 'cornelis', engines: 2, params: ['use_bulksvc=Y', 'bulksvc_num_sdma=1', 'num_vls=1'] },
      10,
    );
    writeFileSync(join(dir, 'sys/module/hfi1/parameters/cap_mask'), '\u00000x4c09a08cb9a\n');
    writeFileSync(join(dir, 'sys/module/hfi1/parameters/bulksvc_num_sdma'), `\u001b[2J${'9'.repeat(200)}\n`);
    const hw = await openHwBackend({ sysroot: dir });
    const [info] = await hw.units();
    await hw.close();
    expect(info?.settings?.capMask).toBeNull();
    expect(info?.settings?.evidence.join('\n')).toContain('cap_mask \\x000x4c09a08cb9a (');
    expect(info?.settings?.bulksvc.bulksvc_num_sdma).toMatch(/^\\x1b\[2J9+…$/);
    expect(info?.settings?.bulksvc.bulksvc_num_sdma?.length).toBeLessThan(80);
  });

  it('parsers: the kernel bool, and the bulksvc.sde window (absent, or a line that does not parse, named)', () => {
    expect([paramBool('Y\n'), paramBool('N'), paramBool('1'), paramBool('yes')]).toEqual([true, false, true, null]);
    expect(parseBulkServiceEngines('sde 0-11\nbulksvc.sde 12-15\n')).toEqual({ engines: [12, 13, 14, 15], line: 2 });
    expect(parseBulkServiceEngines('sde 0-15\n')).toBeNull();
    expect(() => parseBulkServiceEngines('bulksvc.sde 15-12\n', '/x/hw_resources')).toThrow(/\/x\/hw_resources/);
  });
});

describe('a rendered tree names the same ports the reader reads', () => {
  it('hw_counters holds only names the driver uses', async () => {
    const { dir } = await rendered(TWO_PORTS);
    const names = readFileSync(join(dir, DEBUG, 'portcounter_names'), 'utf8')
      .trim()
      .split('\n');
    const hw = join(dir, PORTS, '1/hw_counters');
    for (const f of ['TxWait', 'DmaWait']) expect(names).toContain(f);
    unlinkSync(join(hw, 'TxWait'));
    rmSync(join(dir, 'sys/kernel/debug'), { recursive: true });
    const { ports } = await read(dir);
    expect(ports[0]?.values.xmitWait).toBeNull();
    expect(ports[0]?.values.dmaWait).not.toBeNull();
  });
});
