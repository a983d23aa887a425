// Capturing a host whose sources are odd files: a FIFO, a link to /dev/zero, a directory. Capture
// neither blocks nor reads without bound; each is recorded as not captured, with the reason.

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BDF, writeTree } from '../hw/sysroot.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('snapshot of a host with odd source files', () => {
  it('records a FIFO (a kernel log too), a link to /dev/zero and a directory as not captured, and finishes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'snap-src-'));
    dirs.push(root);
    writeTree(root, { engines: 2 });
    const dbg = join(root, 'sys/kernel/debug/hfi1/hfi1_0');
    unlinkSync(join(dbg, 'sdes'));
    expect(spawnSync('mkfifo', [join(dbg, 'sdes')]).status).toBe(0);
    unlinkSync(join(dbg, 'counters'));
    symlinkSync('/dev/zero', join(dbg, 'counters'));
    mkdirSync(join(dbg, 'sdma_cpu_list'));
    expect(spawnSync('mkfifo', [join(root, 'sys/bus/pci/devices', BDF, 'resource0')]).status).toBe(0);
    mkdirSync(join(root, 'dev'));
    expect(spawnSync('mkfifo', [join(root, 'dev/kmsg')]).status).toBe(0);
    // The kernel's clock, as every host has it: only the odd files above are to be left out.
    writeFileSync(join(root, 'proc/uptime'), '5.00 9.00\n');
    const out = join(`${root}.out`, 'odd.tar.gz');
    mkdirSync(`${root}.out`);
    dirs.push(`${root}.out`);
    const r = await runCli(['--sysroot', root, '--backend', 'hw', 'snapshot', '-o', out, '--json']);
    expect(r.code).toBe(0);
    const missing = Object.fromEntries(
      JSON.parse(r.stdout)
        .instants[0].sources.filter((s: { captured: boolean }) => !s.captured)
        .map((s: { path: string; reason: string }) => [s.path, s.reason]),
    );
    expect(missing).toEqual({
      'sys/kernel/debug/hfi1/hfi1_0/sdes': 'not a regular file',
      'sys/kernel/debug/hfi1/hfi1_0/counters': `is a symbolic link to /dev/zero, outside the tree ${root}: not followed (only links that stay inside the tree are); replace it, or point --sysroot at a real tree`,
      'sys/kernel/debug/hfi1/hfi1_0/sdma_cpu_list': 'not a regular file',
      [`sys/bus/pci/devices/${BDF}/resource0`]: 'not a regular file: a BAR image must be one (replace it)',
      'kmsg-hfi1.txt': `${join(root, 'dev/kmsg')}: not a regular file; under a sysroot only a regular file stands in for /dev/kmsg`,
    });
  });
});
