// Values no driver prints, and the odd corners of the exit codes: sdes counters whose tail is behind
// the head (never reported as 4,294,966,588 in flight, never "fits"), a link-local --listen without
// its interface (64, not a crash), a log line naming engine 10^20 or carrying a bidirectional
// override, a qp_stats type field of control characters, and the same missing privilege giving the
// same code (77) from ring, fit and progress.
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bindError } from '../../src/export/listen.js';
import { parseQpStats } from '../../src/hw/parse/qp-stats.js';
import { parseSdes } from '../../src/hw/parse/sdes.js';
import { sysrootMetrics } from '../export/harness.js';
import { fixture } from '../hw/fixtures.js';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';
import { emulatedHost } from './canary.js';
import { cliGuarded, NOBODY_UNAVAILABLE } from './sources-tree.js';

const temp = tempDirs('hfi1-odd-');
const SDES = 'sys/kernel/debug/hfi1/hfi1_0/sdes';

let host = '';
beforeAll(async () => {
  host = join(temp(), 'host');
  await emulatedHost(host);
});

describe('sdes: a tail behind the head', () => {
  const header = (dt: number, dh: number) =>
    `SDE 0 CPU 0 STE s99_Running C 0x9 S 0x0000000000000000 E 0x0 T(HW) 0x0 T(SW) 0x0 H(HW) 0x2c4 H(SW) 0x2c4 H(D) 0x2c4 DM 0x0 GL 0x40800 R 0x0 LIS 0x0 AHGI 0x0 TXT 0 TXH 0 DT ${dt} DH ${dh} FLNE 0 DQF 0 SLC 0x0\n`;

  it('is refused naming file:line:column, as is more in flight than the ring holds; an empty ring is fine', () => {
    expect(() => parseSdes(header(0, 708), { file: 'sdes', descqCnt: 2048, headersOnly: true })).toThrow(
      /^sdes:1:\d+: DT 0 and DH 708 contradict each other: the tail is behind the head/,
    );
    expect(() => parseSdes(header(4000, 708), { file: 'sdes', descqCnt: 2048, headersOnly: true })).toThrow(/3292 descriptors/);
    expect(
      parseSdes(header(708, 708).replace('T(SW) 0x0', 'T(SW) 0x2c4'), { file: 'sdes', descqCnt: 2048 }).records,
    ).toHaveLength(1);
  });

  it('in a tree: a warning, no in-flight figure, fit does not say it fits, the exporter serves no such number', async () => {
    const path = join(host, SDES);
    const good = readFileSync(path, 'utf8');
    writeFileSync(path, good.replace(/ DT [0-9]+ /, ' DT 0 '));
    try {
      const e = await runCli(['--sysroot', host, '--backend', 'hw', 'engines', '--json']);
      expect(e.stderr).toContain(`${path}:1:`);
      expect(e.stderr).toContain('contradict each other');
      expect(e.stdout).not.toContain('4294966');
      const f = await runCli(['--sysroot', host, '--backend', 'hw', 'fit', '0', '--num-desc', '9']);
      expect(f.stdout).not.toMatch(/fits\s+yes/);
      expect(f.code).not.toBe(0);
      expect(await sysrootMetrics(host, 1, 1000)).not.toContain('4294966');
    } finally {
      writeFileSync(path, good);
    }
  });
});

describe('--listen on an address the kernel refuses (EINVAL: link-local without its interface)', () => {
  it('is a usage error (64) naming the address, not an internal error', () => {
    const e = bindError(Object.assign(new Error('listen EINVAL'), { code: 'EINVAL' }), 'fe80::1', 19491);
    expect(e?.exitCode).toBe(64);
    expect(e?.message).toContain('--listen [fe80::1]:19491: this address cannot be listened on (EINVAL)');
    expect(e?.message).toContain('link-local');
  });
});

describe('log: lines no driver prints', () => {
  it('engine 10^20 is not decoded as an engine; a right-to-left override is escaped', async () => {
    const lines = [
      'hfi1 0000:05:00.0: hfi1_0: SDMA (99999999999999999999) engine error: 0x2 state s50_HwHaltWait',
      'hfi1 0000:05:00.0: hfi1_0: SDMA (3) engine error: 0x2 state s50_HwHaltWait\u202e evil',
    ];
    const r = await runCli(['log', '--json'], {}, false, `${lines.join('\n')}\n`);
    const events = JSON.parse(r.stdout).events as { kind: string; engine?: number; text?: string }[];
    expect(events.filter((e) => e.kind === 'engine-error').map((e) => e.engine)).toEqual([]);
    expect(events.every((e) => e.engine === undefined || e.engine < 16)).toBe(true);
    const text = await runCli(['log'], {}, false, `${lines.join('\n')}\n`);
    expect(text.stdout).not.toContain('\u202e');
    expect(text.stdout).toContain('\\u202e');
    expect(text.stdout).not.toMatch(/sdma1\d{5,}/);
  });
});

describe('qp_stats: a type field of control characters', () => {
  it('the warning quotes the token as it was, escaped (not an empty string)', () => {
    const line = (fixture('qp_stats/current.txt').split('\n')[2] as string).replace(' RC ', ' \x1b]0;PWN\x07RC ');
    expect(() => parseQpStats(`${line}\n`, { file: 'qp_stats' })).toThrow(/unknown QP type '\\x1b\]0;PWN\\x07RC'/);
  });
});

describe.runIf(NOBODY_UNAVAILABLE === null)(
  'the same missing privilege, the same code (as nobody; skipped unless root with setpriv)',
  () => {
    it('ring, fit and progress all exit 77 when debugfs and the BAR are root-only', async () => {
      const root = join(temp(), 'perm');
      const w = await runCli(['emu', 'write', '--sysroot', root, '--engines', '4', '--workload', 'idle']);
      expect(w.code, w.stderr).toBe(0);
      chmodSync(join(root, '..'), 0o755);
      chmodSync(join(root, 'sys/kernel/debug'), 0o700);
      const pci = join(root, 'sys/bus/pci/devices');
      for (const d of readdirSync(pci)) chmodSync(join(pci, d, 'resource0'), 0o600);
      const commands = [
        ['ring', '3'],
        ['fit', '3', '--num-desc', '9'],
        ['progress', '3', '--num-desc', '9', '--timeout-ms', '0'],
      ];
      // A child (one for the three): the rights of another user (nobody) belong to a process.
      const runs = cliGuarded(
        commands.map((args) => ({ root, args })),
        { asNobody: true },
      );
      commands.forEach((args, i) => {
        expect(runs[i]?.code, `${args.join(' ')}: ${runs[i]?.stderr}`).toBe(77);
      });
    });
  },
);
