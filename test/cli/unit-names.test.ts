// A host with the upstream hfi1 and the hfi2 modules side by side has hfi1_0 and hfi2_0: a number no
// longer names one unit, so `--unit 0` is refused naming both and `--unit hfi2_0` selects by name.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/index.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { openHwBackend } from '../../src/hw/index.js';
import { writeHfi2Tree } from '../hw/hfi2-tree.js';
import { runCli } from '../support/cli.js';

let root = '';
let wfr = '';
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'two-modules-'));
  wfr = mkdtempSync(join(tmpdir(), 'two-modules-wfr-'));
  writeHfi2Tree(root);
  const u = new EmuUnit({ seed: 3, engines: 4 });
  u.runUntilMs(20);
  await writeSysroot(u, wfr);
  closeSysroot(u, wfr);
  for (const rel of [
    'sys/class/infiniband/hfi1_0',
    'sys/kernel/debug/hfi1',
    'sys/bus/pci/devices/0000:05:00.0',
    'sys/module/hfi1',
  ]) {
    cpSync(join(wfr, rel), join(root, rel), { recursive: true, verbatimSymlinks: true });
  }
});
afterAll(() => {
  for (const d of [root, wfr]) if (d) rmSync(d, { recursive: true, force: true });
});

describe('hfi1_0 and hfi2_0 on one host', () => {
  it('the backend finds both, refuses the shared number and opens each by name', async () => {
    const b = await openHwBackend({ sysroot: root });
    try {
      expect((await b.units()).map((u) => u.name).sort()).toEqual(['hfi1_0', 'hfi2_0']);
      await expect(b.unit(0)).rejects.toMatchObject({ code: 'E_NO_DEVICE', message: expect.stringMatching(/hfi1_0 and hfi2_0/) });
      expect((await b.unit('hfi2_0')).info.engineIds).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
      expect((await b.unit('hfi1_0')).info.engineIds).toEqual([0, 1, 2, 3]);
      await expect(b.unit('hfi2_1')).rejects.toMatchObject({ code: 'E_NO_DEVICE' });
    } finally {
      await b.close();
    }
  });

  it('--unit 0 is a usage error naming both; --unit hfi2_0 and --unit hfi1_0 select one', async () => {
    // The tree never changes: a short observation (--stall-ms) judges its busy engines without health's whole window.
    const both = await runCli(['--sysroot', root, '--unit', '0', 'engines']);
    expect(both.code).toBe(64);
    expect(both.stderr).toMatch(/--unit 0 matches hfi1_0 and hfi2_0 on this host: give the name \(--unit hfi2_0\)/);
    const hfi2 = await runCli(['--sysroot', root, '--unit', 'hfi2_0', 'engines', '--json', '--stall-ms', '50']);
    expect(hfi2.code, hfi2.stderr).toBe(0);
    expect(JSON.parse(hfi2.stdout).units.map((u: { name: string }) => u.name)).toEqual(['hfi2_0']);
    const hfi1 = await runCli(['--sysroot', root, '--unit', 'hfi1_0', 'show', '2', '--json', '--stall-ms', '50']);
    expect(hfi1.code, hfi1.stderr).toBe(0);
    expect(JSON.parse(hfi1.stdout)).toMatchObject({ engine: 2 });
    const all = await runCli(['--sysroot', root, 'engines', '--json', '--stall-ms', '50']);
    expect(
      JSON.parse(all.stdout)
        .units.map((u: { name: string }) => u.name)
        .sort(),
    ).toEqual(['hfi1_0', 'hfi2_0']);
  });
});
