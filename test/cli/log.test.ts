import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseKernelLog } from '../../src/kmsg/parse.js';
import { kmsgRecordLine } from '../../src/snapshot/kmsg.js';
import { runCli } from '../support/cli.js';

const FIXTURE = new URL('../fixtures/kmsg/engine-error.dmesg', import.meta.url).pathname;
const text = readFileSync(FIXTURE, 'utf8');

describe('kernel log parser (the driver log lines, sdma.c)', () => {
  const log = parseKernelLog(text);

  it('collects unit facts: engines, ring size, engine → IRQ CPU', () => {
    expect(log.units).toEqual([
      {
        name: 'hfi1_0',
        module: 'hfi1',
        pci: '0000:05:00.0',
        engines: 16,
        descqCnt: 2048,
        engineCpu: [2, 3, 4],
        chipEngines: 16,
        memSize: 401408,
      },
    ]);
  });

  it('decodes the engine error with named bits and whether it halts', () => {
    const e = log.events.find((x) => x.kind === 'engine-error');
    expect(e).toMatchObject({
      line: 9,
      engine: 2,
      value: '0x42',
      state: 's99_Running',
      halts: true,
      errors: [
        { bit: 1, name: 'SDmaGenMismatchErr', halts: true },
        { bit: 6, name: 'SDmaHaltErr', halts: true },
      ],
    });
  });

  it('attaches raw qwords and AHG lines to the descriptor before them, under the dump’s engine', () => {
    const ds = log.events.filter((x) => x.kind === 'descriptor');
    expect(ds).toHaveLength(2);
    expect(ds[0]).toMatchObject({
      engine: 2,
      slot: 2042,
      flags: '--F-',
      len: 64,
      gen: 1,
      qw0: '0x8040000123456000',
      ahgIdx: 0,
      ahgMode: 0,
      ahgLen: 0,
    });
    expect(ds[0]?.decoded).toMatchObject({ first: true, last: false, len: 64, gen: 1, addr: 0x123456000n });
    expect(ds[1]?.decoded).toMatchObject({ last: true, headToHost: true, len: 8192 });
  });

  it('keeps other SDMA messages and marks an unknown one as unrecognised', () => {
    expect(log.events.map((e) => e.kind)).toEqual([
      'engine-error',
      'ring-dump',
      'descriptor',
      'descriptor',
      'halt-timeout',
      'bad-head',
      'spurious-interrupt',
      'unrecognised',
    ]);
    expect(log.events.at(-1)).toMatchObject({ line: 19, text: 'SDMA frobnicated strangely' });
  });

  it('reads journalctl prefixes and CRLF line ends too', () => {
    const j = parseKernelLog(
      'Nov 29 10:00:00 node17 kernel: hfi1 0000:81:00.0: hfi1_1: SDMA (7) engine error: 0x80000 state s99_Running\r\n',
    );
    expect(j.events[0]).toMatchObject({
      unit: 'hfi1_1',
      engine: 7,
      halts: false,
      errors: [{ bit: 19, name: 'SDmaDescTableCorErr', halts: false }],
    });
  });
});

describe('log command', () => {
  it('prints the decoded report', async () => {
    // An empty sysroot: no unit to take the chip from, whatever host runs the test.
    const empty = mkdtempSync(join(tmpdir(), 'hfi1-sdma-log-'));
    const r = await runCli(['--sysroot', empty, 'log', FIXTURE]);
    rmSync(empty, { recursive: true, force: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/hfi1_0\s+hfi1\s+0000:05:00\.0\s+16\s+2048\s+0:2 1:3 2:4/);
    expect(r.stdout).toMatch(/^descriptor qwords decoded as wfr \(default: no unit found; --chip to choose\)$/m);
    expect(r.stdout).toMatch(
      /line 9 \[8812.123456\]: hfi1_0 sdma2: engine error 0x42 in s99_Running: SDmaGenMismatchErr\(1\) SDmaHaltErr\(6\) -> halts/,
    );
  });

  it('reads standard input with - and prints the documented JSON', async () => {
    const r = await runCli(['log', '-', '--json'], {}, false, text);
    const j = JSON.parse(r.stdout);
    expect(j.units[0]).toMatchObject({ name: 'hfi1_0', engines: 16, descqCnt: 2048, engineCpu: [2, 3, 4] });
    expect(j.events[0]).toMatchObject({ line: 9, unit: 'hfi1_0', kind: 'engine-error', engine: 2 });
  });

  it('exits 66 for a missing file and 65 for a log without hfi1 lines', async () => {
    const missing = await runCli(['log', '/nonexistent/dmesg.txt']);
    expect(missing.code).toBe(66);
    expect(missing.stderr).toMatch(/no such file/);
    const none = await runCli(['log', '-'], {}, false, 'just\nsome\nlines\n');
    expect(none.code).toBe(65);
    expect(none.stderr).toMatch(/no hfi1 lines among 3 lines/);
  });

  it('a kernel log without a driver line, or no input at all, is an answer (exit 0), said on stderr', async () => {
    const quiet = await runCli(
      ['log', '-'],
      {},
      false,
      '[    1.000000] e1000e: eth0 NIC Link is Up\n[    2.000000] EXT4-fs (sda1): mounted\n',
    );
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toBe('0 SDMA events (0 engine errors) in 2 lines\n');
    expect(quiet.stderr).toMatch(/no hfi1 or hfi2 lines among 2 kernel log lines: the driver logged nothing there/);
    const journal = await runCli(
      ['log', '-'],
      {},
      false,
      '-- Logs begin at Mon 2026-11-30 08:00:01 UTC. --\nNov 30 22:00:01 node17 kernel: e1000e: eth0 NIC Link is Up\n',
    );
    expect(journal.code).toBe(0);
    const empty = await runCli(['log', '-'], {}, false, '');
    expect(empty.code).toBe(0);
    expect(empty.stderr).toMatch(/empty: no kernel log to decode \(dmesg prints nothing where kernel.dmesg_restrict is 1/);
    const one = await runCli(
      ['log', '-'],
      {},
      false,
      '[    1.000000] hfi1 0000:05:00.0: hfi1_0: SDMA engine 3 - check scheduled\n',
    );
    expect(one.stdout).toContain('1 SDMA event (0 engine errors) in 1 line\n');
  });
});

describe('log keeps each line’s timestamp', () => {
  it.each([
    ['[ 8812.123456] ', '8812.123456'],
    ['[Mon Nov 30 22:00:01 2026] ', 'Mon Nov 30 22:00:01 2026'],
    ['Nov 30 22:00:01 node17 kernel: ', 'Nov 30 22:00:01'],
    ['Nov  3 22:00:01.123456 node17 kernel: ', 'Nov  3 22:00:01.123456'],
    ['2026-11-30T22:00:01+0000 node17 kernel: ', '2026-11-30T22:00:01+0000'],
    ['2026-11-30T22:00:01.123456+00:00 node17 kernel: ', '2026-11-30T22:00:01.123456+00:00'],
    ['[  123.000001] node17 kernel: ', '123.000001'],
    ['6,1234,8812123456,-;', '8812123456'],
    ['', null],
  ])('%j gives ts %j in the JSON event and the text', async (prefix, ts) => {
    const line = `${prefix}hfi1 0000:05:00.0: hfi1_0: SDMA (2) engine error: 0x42 state s99_Running\n`;
    const j = JSON.parse((await runCli(['log', '-', '--json'], {}, false, line)).stdout);
    expect(j.events[0].ts).toBe(ts);
    const text = (await runCli(['log', '-'], {}, false, line)).stdout;
    expect(text).toContain(ts === null ? 'line 1: hfi1_0 sdma2' : `line 1 [${ts}]: hfi1_0 sdma2`);
  });
});

describe('addresses are strings of one form in every JSON output', () => {
  const ADDR = /^0x[0-9a-f]{16}$/;

  it('log: descriptor addr, qwords and the decoded address; the PCI address lowercase', async () => {
    const text = [
      '[ 1.0] hfi1 0000:AF:00.0: hfi1_0: SDMA sdmadesc[5]: flags:--F- addr:0x0000000ABCDEF000 gen:1 len:64 bytes',
      '[ 1.0] hfi1 0000:AF:00.0: hfi1_0: \tdesc0:0x8040000ABCDEF000 desc1 0x0000000000000004',
      '[ 1.0] hfi1 0000:AF:00.0: hfi1_0: Invalid SDMA interrupt 0xABC',
    ].join('\n');
    const j = JSON.parse((await runCli(['log', '-', '--json'], {}, false, `${text}\n`)).stdout);
    expect(j.units[0].pci).toBe('0000:af:00.0');
    const d = j.events[0];
    expect(d.addr).toMatch(ADDR);
    expect(d.addr).toBe('0x0000000abcdef000');
    expect(d.qw0).toMatch(ADDR);
    expect(d.decoded.addr).toBe('0x0000000abcdef000');
    expect(d.decoded.ahgUpdate).toBe('0x00000000');
    expect(j.events[1]).toMatchObject({ kind: 'invalid-interrupt', value: '0xabc' });
  });

  it('decode: qw0, qw1 and addr', async () => {
    const j = JSON.parse((await runCli(['decode', '0xC040000000100000', '0x5', '--json'])).stdout);
    expect([j.qw0, j.qw1, j.addr]).toEqual(['0xc040000000100000', '0x0000000000000005', '0x0000000000100000']);
  });

  it('ring: addr and the qwords where the source has them', async () => {
    const j = JSON.parse(
      (await runCli(['--backend', 'emu', '--workload', 'line-rate', '--at-ms', '5', 'ring', '1', '--json'])).stdout,
    );
    expect(j.descriptors.length).toBeGreaterThan(0);
    for (const d of j.descriptors) {
      expect(d.addr).toMatch(ADDR);
      if (d.qw0 !== undefined) expect([d.qw0, d.qw1]).toEqual([expect.stringMatching(ADDR), expect.stringMatching(ADDR)]);
    }
  });
});

/** A dmesg line as /dev/kmsg returns its record: `PRI,SEQ,USEC,-;text`, bytes escaped as printk does, then the dictionary. */
function asKmsgRecord(line: string, seq: number): string {
  const m = /^\[\s*(\d+)\.(\d{6})\] (.*)$/.exec(line) as RegExpExecArray;
  const usec = BigInt(m[1] as string) * 1_000_000n + BigInt(m[2] as string);
  const text = [...Buffer.from(m[3] as string, 'utf8')]
    .map((b) => (b < 0x20 || b >= 0x7f || b === 0x5c ? `\\x${b.toString(16).padStart(2, '0')}` : String.fromCharCode(b)))
    .join('');
  return `3,${seq},${usec},-;${text}\n SUBSYSTEM=pci\n DEVICE=+pci:0000:05:00.0\n`;
}

describe('a log read from /dev/kmsg (msg_add_ext_text, printk.c: tabs and other bytes escaped as \\xNN)', () => {
  const kmsg = text
    .trimEnd()
    .split('\n')
    .map((l, i) => asKmsgRecord(l, i + 1))
    .join('');
  const strip = (es: readonly object[]) => es.map(({ line: _line, ts: _ts, ...rest }: { line?: unknown; ts?: unknown }) => rest);

  it('decodes the same events as the dmesg text: every descriptor word and AHG field of the dump', () => {
    expect(kmsg).toContain('\\x09desc0:0x8040000123456000');
    const fromKmsg = parseKernelLog(kmsg);
    const fromDmesg = parseKernelLog(text);
    expect(fromKmsg.events.some((e) => e.kind === 'descriptor' && 'qw0' in e)).toBe(true);
    expect(strip(fromKmsg.events)).toEqual(strip(fromDmesg.events));
    expect(fromKmsg.units).toEqual(fromDmesg.units);
  });

  it('a snapshot stores the records in dmesg form with the tabs back', () => {
    expect(kmsgRecordLine('3,9,8812123471,-;hfi1 0000:05:00.0: hfi1_0: \\x09desc0:0x1 desc1 0x2')).toBe(
      '[ 8812.123471] hfi1 0000:05:00.0: hfi1_0: \tdesc0:0x1 desc1 0x2',
    );
    expect(kmsgRecordLine('3,9,1,-;a\\x5cb caf\\xc3\\xa9')).toBe('[    0.000001] a\\b café');
  });
});
