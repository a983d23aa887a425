import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TimeoutBlocks } from '../../src/kmsg/ipoib.js';
import { parseKernelLog } from '../../src/kmsg/parse.js';
import { treeSource } from '../../src/report/gather.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';
import { copyTree, emulatedHost } from './canary.js';

const temp = tempDirs('hfi1-edges4-');

let host = '';
beforeAll(async () => {
  host = join(temp(), 'host');
  await emulatedHost(host);
});

/** A copy of the rendered host (holes kept: its BAR image is sparse), named `name`. */
function copyOfHost(name: string): string {
  const to = join(temp(), name);
  copyTree(host, to);
  return to;
}

/** The driver's IPoIB timeout block of hfi1_0 (0000:05:00.0) whose engine line names `engine`. */
function block(engine: string): string[] {
  return [
    'hfi1 0000:05:00.0: hfi1_0: timeout txq 00000000aabbccdd q 6 stopped 1 stops 4 no_desc 1 ring_full 0',
    `hfi1 0000:05:00.0: hfi1_0: sde 0000000011223344 engine ${engine}`,
    'hfi1 0000:05:00.0: hfi1_0: wait queued 1',
  ];
}

describe('an IPoIB timeout block naming an engine no chip has', () => {
  for (const engine of ['99999999999999999999', '40']) {
    it(`engine ${engine}: the line is shown undecoded, the block's engine is unknown (log, and the waiters' reader)`, () => {
      const log = parseKernelLog(
        block(engine)
          .map((l, i) => `[  100.00000${i}] ${l}`)
          .join('\n'),
      );
      const timeout = log.events.find((e) => e.kind === 'ipoib-timeout');
      expect(timeout?.engine).toBeUndefined();
      expect(log.events).toContainEqual(
        expect.objectContaining({ kind: 'unrecognised', text: `sde 0000000011223344 engine ${engine}` }),
      );
      const blocks = new TimeoutBlocks('0000:05:00.0');
      for (const l of block(engine)) blocks.push(l, 100_000_000);
      expect(blocks.records().map((r) => r.block.engine)).toEqual([undefined]);
    });
  }

  it('engine 5 is decoded as before', () => {
    const blocks = new TimeoutBlocks('0000:05:00.0');
    for (const l of block('5')) blocks.push(l, 100_000_000);
    expect(blocks.records().map((r) => r.block.engine)).toEqual([5]);
  });
});

describe('the command line', () => {
  it('an explicit empty --sysroot is a usage error (64; health UNKNOWN); an empty HFI1_SDMA_SYSROOT is an unset one', async () => {
    const e = await runCli(['--sysroot', '', 'engines', '--json']);
    expect(e.code).toBe(64);
    expect(e.stderr).toMatch(/--sysroot is empty: name a directory/);
    expect(e.stdout).toBe('');
    const h = await runCli(['--sysroot', '', 'health']);
    expect(h.code).toBe(3);
    expect(h.stdout).toMatch(/^HFI1-SDMA UNKNOWN - --sysroot is empty/);
    const env = await runCli(['--backend', 'emu', '--engines', '1', 'engines', '--json'], { HFI1_SDMA_SYSROOT: '' });
    expect(env.code, env.stderr).toBe(0);
  });

  it('report -o over a directory or a device exits 73 and leaves it as it is, whatever its name', async () => {
    const dir = join(temp(), 'dir');
    mkdirSync(dir);
    for (const out of [dir, '/dev/null', join(temp(), 'page.html/')]) {
      if (out.endsWith('/')) mkdirSync(out);
      const r = await runCli(['--sysroot', host, 'report', '-o', out.replace(/\/$/, '')]);
      expect(r.code, `${out}: ${r.stderr}`).toBe(73);
      expect(r.stderr).toMatch(/is a (directory|character device), not a regular file: it is left as it is/);
    }
    expect((await runCli(['--sysroot', host, 'report', '-o', join(temp(), 'page.txt')])).code).toBe(64);
  });

  it('an unknown option before the command is named (it took the command word as its value)', async () => {
    const r = await runCli(['--frobnicate', 'engines']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/^hfi1-sdma: unknown option --frobnicate\n/);
    expect((await runCli(['--jsn', 'engines'])).stderr).toMatch(/unknown option --jsn \(did you mean --json\?\)/);
  });

  it("--descq-cnt's help says what the emulator does with another value", async () => {
    const r = await runCli(['--help']);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain(
      '--descq-cnt ring size: a power of two from 64 to 32768 (fit refuses any other; the emulator takes any other as 2048, as the driver does)',
    );
  });

  it('decode takes the chip from the PCI identity when the tree’s ring size is malformed', async () => {
    const tree = copyOfHost('bad');
    writeFileSync(join(tree, 'sys/module/hfi1/parameters/sdma_descq_cnt'), 'zz\n');
    const r = await runCli(['--sysroot', tree, 'decode', '0xc040000000100000', '0x5']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^chip\s+wfr \(Intel Omni-Path 100\)\s+\(from hfi1_0; --chip to choose\)/);
    expect((await runCli(['--sysroot', tree, 'engines'])).code).toBe(65);
  });

  it('a capture past the entry limit with one sample says the tree holds too much, not to take fewer samples', async () => {
    const tree = copyOfHost('many');
    const params = join(tree, 'sys/module/hfi1/parameters');
    for (let i = 0; i < 120; i++) writeFileSync(join(params, `p${i}`), '1\n');
    const limits = { maxBytes: 1 << 30, maxEntries: 100 };
    const take = (samples: number) =>
      captureSnapshot(
        tree,
        join(temp(), 's.tar.gz'),
        { host: 'h', toolVersion: '0', now: new Date(0) },
        { samples, intervalMs: 10, clock: { nowMs: () => 0 }, sleep: async () => {}, limits },
      );
    await expect(take(1)).rejects.toThrow(/one instant of this tree already holds more than any host shows .*check the tree/);
    await expect(take(2)).rejects.toThrow(/take fewer --samples/);
  });
});

describe("report's uptime", () => {
  it('is read inside the tree as every source is: a link out of it or a device is not read', () => {
    const tree = join(temp(), 'up');
    mkdirSync(join(tree, 'proc'), { recursive: true });
    writeFileSync(join(tree, 'proc/uptime'), '42.50 1.00\n');
    expect(treeSource(tree, 't').uptimeSec()).toBe(42.5);
    const outside = join(temp(), 'secret-uptime');
    writeFileSync(outside, '31337.00 1.00\n');
    rmSync(join(tree, 'proc/uptime'));
    symlinkSync(outside, join(tree, 'proc/uptime'));
    expect(treeSource(tree, 't').uptimeSec()).toBeNull();
    rmSync(join(tree, 'proc/uptime'));
    symlinkSync('/dev/ptmx', join(tree, 'proc/uptime'));
    expect(treeSource(tree, 't').uptimeSec()).toBeNull();
  });
});
