// The emulator's sysroot shows the host's identity and the port's link as a live host does, and
// its kernel log as /dev/kmsg records, so that src/hw and a snapshot of the tree read them.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { afterEach, describe, expect, it } from 'vitest';
import { EMU_CONTEXT } from '../../src/emu/context.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';
import { KMSG_ENTRY } from '../../src/snapshot/format.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'emu-ctx-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the emulator's sysroot: context, link and kernel log", () => {
  it('renders the identity files with the values info.context gives', async () => {
    const root = tmp();
    const u = new EmuUnit({ seed: 1, engines: 2 });
    u.runUntilMs(5);
    await writeSysroot(u, root);
    const read = (rel: string) => readFileSync(join(root, rel), 'utf8');
    expect(u.info.context).toEqual(EMU_CONTEXT);
    expect(read('proc/sys/kernel/osrelease')).toBe(`${EMU_CONTEXT.kernelRelease}\n`);
    expect(read('sys/module/hfi1/srcversion')).toBe(`${EMU_CONTEXT.driverSrcversion}\n`);
    expect(read('sys/class/infiniband/hfi1_0/fw_ver')).toBe('1.27.0\n');
    expect(read('sys/bus/pci/devices/0000:05:00.0/current_link_speed')).toBe('8.0 GT/s PCIe\n');
    expect(read('sys/bus/pci/devices/0000:05:00.0/current_link_width')).toBe('16\n');
    expect(read('sys/class/infiniband/hfi1_0/ports/1/state')).toBe('4: ACTIVE\n');
    expect(read('sys/class/infiniband/hfi1_0/ports/1/phys_state')).toBe('5: LinkUp\n');
    expect(read('sys/class/infiniband/hfi1_0/ports/1/rate')).toBe('100 Gb/sec (4X EDR)\n');
    closeSysroot(u, root);
  });

  it("an engine error's log line reaches dev/kmsg and a snapshot of the tree keeps it", async () => {
    const root = tmp();
    const u = new EmuUnit({ seed: 1, engines: 4, faults: ['engine-error:1@10:2'] });
    u.runUntilMs(5);
    await writeSysroot(u, root);
    expect(readFileSync(join(root, 'dev/kmsg'), 'utf8')).not.toContain('engine error');
    u.runUntilMs(30);
    await writeSysroot(u, root);
    const kmsg = readFileSync(join(root, 'dev/kmsg'), 'utf8');
    expect(kmsg).toMatch(
      /^3,[0-9]+,10[0-9]{3},-;hfi1 0000:05:00\.0: hfi1_0: SDMA \(2\) engine error: .*\n SUBSYSTEM=pci\n DEVICE=\+pci:0000:05:00\.0$/m,
    );
    const out = join(tmp(), 'emu.tar.gz');
    const m = await captureSnapshot(
      root,
      out,
      { host: 'emu', toolVersion: 't', now: new Date(0) },
      {
        samples: 1,
        intervalMs: 0,
        clock: { nowMs: () => 0 },
        sleep: async () => {},
      },
    );
    expect(m.instants[0]?.sources.filter((s) => !s.captured)).toEqual([]);
    const ex = tmp();
    await tar.x({ file: out, cwd: ex });
    expect(readFileSync(join(ex, 'instants/0', KMSG_ENTRY), 'utf8')).toMatch(
      /^\[ {4}0\.010[0-9]{3}\] hfi1 0000:05:00\.0: hfi1_0: SDMA \(2\) engine error: /m,
    );
    closeSysroot(u, root);
  });
});
