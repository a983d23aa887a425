// A reduced view (no debugfs sdes, no BAR: what a user without root reads): only interrupt counts.
// An engine whose counts do not move may be idle or stopped with work in flight, so it is never
// called idle, healthy or not running: health answers UNKNOWN, the exporter serves no state,
// running or stalled series for it.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { seriesOf, sysrootMetrics, value } from '../export/harness.js';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('truth-reduced-');

/** Take away what only root reads: the sdes file and the BAR image. */
function reduce(root: string): void {
  rmSync(join(root, 'sys/kernel/debug/hfi1/hfi1_0/sdes'), { force: true });
  const pci = join(root, 'sys/bus/pci/devices');
  for (const bdf of readdirSync(pci)) rmSync(join(pci, bdf, 'resource0'), { force: true });
}

describe('a reduced view', () => {
  it('the exporter does not call an engine stopped with work in flight idle, not stalled, or not running', async () => {
    const root = tmp();
    const u = new EmuUnit({ seed: 11, engines: 2, workload: 'qp:gbps=10', faults: ['stop-fetch@300:1'] });
    u.runUntilMs(100);
    await writeSysroot(u, root);
    reduce(root);
    // Rounds every 100 ms from 100 to 1500, the tree rendered and reduced before each.
    const text = await sysrootMetrics(root, 15, 100, 0, async (now) => {
      u.runUntilMs(now);
      await writeSysroot(u, root);
      reduce(root);
    });
    const E1 = 'unit="hfi1_0",engine="1"';
    // Engine 0 keeps taking interrupts: progressing. Engine 1 stopped fetching at 300 ms with work in flight.
    expect(value(text, 'hfi1_sdma_verdict{unit="hfi1_0",engine="0",verdict="progressing",reason="no-ring-state"}')).toBe(1);
    expect(seriesOf(text, 'hfi1_sdma_verdict').filter((l) => l.includes(E1))).toEqual([
      `hfi1_sdma_verdict{${E1},verdict="unknown",reason="no-ring-state"} 1`,
    ]);
    expect(value(text, `hfi1_sdma_stalled{${E1}}`)).toBeUndefined();
    expect(seriesOf(text, 'hfi1_sdma_engine_running')).toEqual([]);
    expect(seriesOf(text, 'hfi1_sdma_engine_state')).toEqual([]);
  });

  it('health answers UNKNOWN, naming the engines it cannot judge, where with sdes it answers OK', async () => {
    const root = tmp();
    const w = await runCli(['emu', 'write', '--sysroot', root, '--engines', '2', '--workload', 'idle', '--at-ms', '100']);
    expect(w.code, w.stderr).toBe(0);
    const full = await runCli(['--sysroot', root, 'health', '--stall-ms', '200']);
    expect(full.code, full.stdout).toBe(0);
    expect(full.stdout).toMatch(/^HFI1-SDMA OK - emulated sysroot: 2 engines on 1 unit healthy/);
    reduce(root);
    // The whole text (--max-bytes 0): the lines that name a path under TMPDIR are as long as that path.
    const h = await runCli(['--sysroot', root, 'health', '--stall-ms', '200', '--max-bytes', '0']);
    expect(h.code, h.stdout).toBe(3);
    expect(h.stdout).toMatch(/^HFI1-SDMA UNKNOWN - /);
    expect(h.stdout).toMatch(/^UNKNOWN: SD108 hfi1_0 2 engine\(s\) cannot be judged \(sdma0,sdma1\)/m);
    expect(h.stdout).not.toMatch(/healthy/);
    // The reason names the error once.
    expect(h.stdout).toMatch(/not readable: sdes: ENOENT: no such file or directory, (stat|open) '?\//);
  });
});
