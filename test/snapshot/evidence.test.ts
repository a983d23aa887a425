// A snapshot carries the evidence of the waiters a host shows through links: a PSM writer's /proc/<pid> (its device
// fd, its threads' syscall, stack and wchan) and the unit's IPoIB netdevs (sys/class/net, whose device link names the
// adapter), with the kernel log's timeout blocks; a replay finds the stalled writer and the stuck queue as the host
// showed them. The links are a record, never links in the archive.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLinksRecord, recordedLinksFs } from '../../src/snapshot/links.js';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('snapshot-evidence-');

async function captured(emu: string[], samples: number, intervalMs: number): Promise<string> {
  const out = join(tmp(), 'host.tar.gz');
  const r = await runCli([
    '--backend',
    'emu',
    ...emu,
    'snapshot',
    '-o',
    out,
    '--samples',
    String(samples),
    '--interval-ms',
    String(intervalMs),
  ]);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

describe('a snapshot holds the waiters a host shows through links', () => {
  it("a PSM writer's lost wake-up: the replay sees the writer stall (SD203), not 'lists no process'", async () => {
    const f = await captured(
      ['--engines', '1', '--workload', 'psm:gbps=0.2', '--fault', 'lost-wakeup:psm@300:0', '--at-ms', '350'],
      4,
      100,
    );
    const w = JSON.parse((await runCli(['--sysroot', f, 'waiters', '--json'])).stdout);
    const u = w.units[0];
    expect(u.visibility.find((v: { kind: string }) => v.kind === 'psm')).toMatchObject({ visible: true });
    expect(u.waiters.filter((x: { verdict: string }) => x.verdict === 'psm-stall').map((x: { kind: string }) => x.kind)).toEqual([
      'psm',
    ]);
    const h = await runCli(['--sysroot', f, 'health']);
    expect(h.code, h.stdout).toBe(1);
    expect(h.stdout).toMatch(/SD203 hfi1_0 1 PSM writer stall/);
    expect(h.stdout).not.toMatch(/lists no process/);
  });

  it('a stuck IPoIB queue: the replay names it and its engine (SD207), not "sys/class/net cannot be listed"', async () => {
    const f = await captured(
      // (The netdev's queue 0 sends on VL 0's first engine, engine 0.)
      ['--engines', '4', '--workload', 'mixed:ipoib=1,gbps=0.5', '--fault', 'ipoib-timeout@100:0', '--at-ms', '2100'],
      3,
      500,
    );
    const h = await runCli(['--sysroot', f, 'health']);
    expect(h.code, h.stdout).toBe(2);
    expect(h.stdout).toMatch(/^HFI1-SDMA CRITICAL - snapshot .*: SD207 hfi1_0 sdma0 IPoIB queue ib0 txq 0 stuck/);
    expect(h.stdout).not.toMatch(/cannot be listed/);
  });
});

describe('the record of links', () => {
  it('keeps only the links it records, with targets as the kernel writes them', () => {
    const r = parseLinksRecord(
      JSON.stringify({
        links: {
          'proc/12/fd/3': '/dev/hfi1_0',
          'proc/12/fd/4': '/etc/passwd',
          '../proc/1/fd/3': '/dev/hfi1_0',
          'sys/class/net/ib0/device': '../../../devices/pci0000:00/0000:05:00.0',
          'sys/class/net/ib1/device': 'bad\u001b[2Jtarget',
          'etc/x': '/dev/hfi1_0',
        },
        listed: ['proc', '/etc', 'sys/class/net'],
      }),
    );
    expect(r).toEqual({
      links: { 'proc/12/fd/3': '/dev/hfi1_0', 'sys/class/net/ib0/device': '../../../devices/pci0000:00/0000:05:00.0' },
      listed: ['proc', 'sys/class/net'],
    });
    expect(parseLinksRecord('not json')).toBeNull();
  });

  it('answers readlink from the record and lists a directory the capture listed, empty or not', async () => {
    const base = {
      readFile: async () => new Uint8Array(),
      readdir: async (p: string) => {
        if (p === '/t/proc') return ['interrupts'];
        throw Object.assign(new Error(`ENOENT ${p}`), { code: 'ENOENT' });
      },
      readlink: async (p: string) => Promise.reject(new Error(`no link ${p}`)),
      canRead: async () => {},
    };
    const fs = recordedLinksFs(base, '/t', { links: { 'proc/12/fd/3': '/dev/hfi1_0' }, listed: ['proc', 'sys/class/net'] });
    expect(await fs.readlink('/t/proc/12/fd/3')).toBe('/dev/hfi1_0');
    expect(await fs.readdir('/t/proc/12/fd')).toEqual(['3']);
    expect(await fs.readdir('/t/sys/class/net')).toEqual([]);
    expect(await fs.readdir('/t/proc')).toEqual(['interrupts']);
    await expect(fs.readdir('/t/elsewhere')).rejects.toThrow(/ENOENT/);
    expect(fs.recordedProcScan).toBe(true);
  });
});
