// An hfi2 window (engines 8-11 of a CN5000) whose device fell off the bus, read through the rendered
// sysroot: every command says the unit is gone, names its own driver, and invents nothing for it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, Unit } from '../../src/backend.js';
import { openHwBackend } from '../../src/hw/index.js';
import { runCli } from '../support/cli.js';

let dir = '';
let root = '';
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'truth-gone-'));
  root = join(dir, 'root');
  const w = await runCli([
    'emu',
    'write',
    '--sysroot',
    root,
    ...['--chip', 'jkr', '--driver', 'hfi2', '--engines', '8-11', '--ports', '2'],
    ...['--workload', 'qp:gbps=10', '--fault', 'device-gone@50', '--at-ms', '100'],
  ]);
  expect(w.code, w.stderr).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a gone hfi2 device through the rendered sysroot', () => {
  it('engines and waiters exit 69 and tell to reload the hfi2 driver, not hfi1', async () => {
    for (const cmd of [['engines'], ['waiters', '--count', '1']]) {
      const r = await runCli(['--sysroot', root, ...cmd]);
      expect(r.code, cmd.join(' ')).toBe(69);
      expect(r.stderr).toMatch(/hfi2_0: device gone: .*then reload the hfi2 driver or reboot/);
      expect(r.stderr).not.toMatch(/hfi1 driver/);
    }
  });

  it('health is CRITICAL with one line for the unit; the exporter serves it gone with no engine series', async () => {
    const h = await runCli(['--sysroot', root, 'health', '--stall-ms', '200']);
    expect(h.code, h.stdout).toBe(2);
    expect(h.stdout).toMatch(/^CRITICAL: SD301 hfi2_0 \(0000:05:00\.0\) gone: registers read all-ones on 4 of 4 engines/m);
    expect(h.stdout).toMatch(/ gone=1;;0 /);
    const out = join(dir, 'gone.prom');
    const x = await runCli(['--sysroot', root, 'export', '--textfile', out]);
    expect(x.code, x.stderr).toBe(0);
    const text = readFileSync(out, 'utf8');
    // The warning names the BAR file once.
    expect(x.stderr).toMatch(/hfi2_0: \S+\/resource0: registers read all-ones/);
    expect(x.stderr).not.toMatch(/resource0: \S+resource0/);
    expect(text).toMatch(/^hfi1_sdma_up\{unit="hfi2_0"\} 0$/m);
    expect(text).toMatch(/^hfi1_sdma_device_gone\{unit="hfi2_0"\} 1$/m);
    expect(text).toMatch(
      /^hfi1_sdma_unit_info\{unit="hfi2_0",name="CN5000",module="hfi2",chip="jkr",driver="hfi2",ports="2"\} 1$/m,
    );
    expect(text).not.toMatch(/engine="/);
  });

  it('health on a unit whose files vanish during the check (its driver unloaded) is CRITICAL gone, not UNKNOWN', async () => {
    const live = join(dir, 'live');
    const w = await runCli(['emu', 'write', '--sysroot', live, '--chip', 'jkr', '--driver', 'hfi2', '--engines', '8-9']);
    expect(w.code, w.stderr).toBe(0);
    const hw = await openHwBackend({ sysroot: live });
    let samples = 0;
    // The second sample finds the unit gone: hfi2 unloaded between two rounds of the check.
    const vanishing = async (id: number | string): Promise<Unit> => {
      const u = await hw.unit(id);
      return {
        info: u.info,
        sample: async (engines) => {
          samples += 1;
          if (samples === 2) {
            rmSync(join(live, 'sys/class/infiniband/hfi2_0'), { recursive: true });
            rmSync(join(live, 'sys/kernel/debug/hfi2'), { recursive: true });
          }
          return u.sample(engines);
        },
        ring: (engine) => u.ring(engine),
      };
    };
    const backend: Backend = { kind: 'hw', units: () => hw.units(), unit: vanishing, close: () => hw.close() };
    const h = await runCli(['health', '--stall-ms', '200'], {}, false, '', backend);
    expect(h.code, h.stdout).toBe(2);
    expect(h.stdout).toMatch(
      /^HFI1-SDMA CRITICAL - SD301 hfi2_0 \(0000:05:00\.0\) gone: .*sdes: ENOENT: the device or its driver \(hfi1, hfi2\) went away/,
    );
    expect(h.stdout).not.toMatch(/hfi1 driver/);
  });
});
