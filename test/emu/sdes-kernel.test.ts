// Every flavour's rendered `sdes` against the kernel's format strings and its pad rule, checked by a checker that
// shares no code with the emulator or the reader (test/support/kernel-sdes.ts); and that checker proven able to fail.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChipKind, DriverBuild } from '../../src/backend.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { checkSdes } from '../support/kernel-sdes.js';
import { tempDirs } from '../support/temp.js';

const tempDir = tempDirs('hfi1-sdes-kernel-');

interface Case {
  chip: ChipKind;
  driver: DriverBuild;
  ports: number;
  firstEngine: number;
  workload: string;
  descqCnt: number;
  faults?: string[];
}

const CASES: Case[] = [
  { chip: 'wfr', driver: 'upstream', ports: 1, firstEngine: 0, workload: 'mixed', descqCnt: 2048 },
  { chip: 'wfr', driver: 'upstream', ports: 1, firstEngine: 0, workload: 'small', descqCnt: 256 },
  { chip: 'wfr', driver: 'cornelis', ports: 1, firstEngine: 8, workload: 'mixed', descqCnt: 256 },
  { chip: 'jkr', driver: 'cornelis', ports: 2, firstEngine: 8, workload: 'mixed', descqCnt: 256 },
  { chip: 'jkr', driver: 'cornelis', ports: 1, firstEngine: 0, workload: 'psm', descqCnt: 2048 },
  { chip: 'jkr', driver: 'hfi2', ports: 2, firstEngine: 8, workload: 'mixed', descqCnt: 2048 },
  { chip: 'jkr', driver: 'hfi2', ports: 1, firstEngine: 12, workload: 'small', descqCnt: 256 },
  { chip: 'jkr', driver: 'hfi2', ports: 1, firstEngine: 12, workload: 'qp', descqCnt: 256, faults: ['engine-error:1@4:13'] },
  // A gone CN5000: every CSR reads all-ones, but the driver never reads SEND_DMA_CHECK_SLID on JKR and prints SLC 0.
  { chip: 'jkr', driver: 'cornelis', ports: 1, firstEngine: 12, workload: 'qp', descqCnt: 256, faults: ['device-gone@4'] },
  { chip: 'wfr', driver: 'hfi2', ports: 1, firstEngine: 8, workload: 'line-rate', descqCnt: 256 },
];

async function render(c: Case) {
  const u = new EmuUnit({ seed: 5, engines: 16 - c.firstEngine, ...c });
  u.runUntilMs(6);
  const dir = tempDir();
  await writeSysroot(u, dir);
  closeSysroot(u, dir);
  const text = readFileSync(join(dir, 'sys/kernel/debug', u.flavour.module, u.info.name, 'sdes'), 'utf8');
  return { u, text };
}

describe.each(CASES)('sdes of $chip × $driver ($ports port(s), engines $firstEngine-15, $workload)', (c) => {
  it('is of the kernel form: every header field, descriptor and AHG line, flag letter and pad', async () => {
    const { u, text } = await render(c);
    const padSdmaDesc = c.driver === 'upstream' ? 0 : u.flavour.settings.padSdmaDesc;
    expect(
      checkSdes(text, { driver: c.driver, chip: c.chip, descqCnt: c.descqCnt, padSdmaDesc, engines: u.info.engineIds }),
    ).toEqual([]);
    // Not an empty check: rings hold descriptors, and where pads are on, pads appear.
    expect(text.split('\n').filter((l) => l.startsWith('\tdesc[')).length).toBeGreaterThan(50);
    if (padSdmaDesc > 0 && c.workload !== 'small') expect(text).toMatch(/flags:---- addr:0x0{16} gen:\d len:0 d0:0x0{16} /);
  });
});

describe('the checker fails on what the kernel would not print', () => {
  const head = (dt: number, dh: number) =>
    `SDE 8 CPU 8 STE s99_Running C 0x19 S 0x0000000000000000 E 0x0 T(HW) 0x${(dt & 63).toString(16)} T(SW) 0x${(dt & 63).toString(16)} ` +
    `H(HW) 0x${(dh & 63).toString(16)} H(SW) 0x${(dh & 63).toString(16)} H(D) 0x0 DM 0x0 GL 0x0 R 0x0 LIS 0x0 AHGI 0x0 TXT 0 TXH 0 DT ${dt} DH ${dh} FLNE 0 DQF 0 SLC 0x0\n`;
  const q = (v: bigint) => v.toString(16).padStart(16, '0');
  // JKR qw1: F 31, L 30, len 29:16, gen 3:2, I 1, H 0.
  const line = (slot: number, qw0: bigint, qw1: bigint) => {
    const f = `${qw1 & 2n ? 'I' : '-'}${qw1 & 1n ? 'H' : '-'}${qw1 & (1n << 31n) ? 'F' : '-'}${qw1 & (1n << 30n) ? 'L' : '-'}`;
    const len = Number((qw1 >> 16n) & 0x3fffn);
    const gen = Number((qw1 >> 2n) & 3n);
    const out = `\tdesc[${slot}]: flags:${f} addr:0x${q(qw0)} gen:${gen} len:${len} d0:0x${q(qw0)} d1:0x${q(qw1)}\n`;
    return qw1 & (1n << 31n) ? `${out}\t\taidx:0 amode:0 alen:0\n` : out;
  };
  const x = { driver: 'hfi2', chip: 'jkr', descqCnt: 64, padSdmaDesc: 4 } as const;
  const F = 1n << 31n;
  const L = 1n << 30n;
  const len = (n: number) => BigInt(n) << 16n;

  it('accepts the kernel layout: pads before the last descriptor, completion bits on LAST', () => {
    const text =
      head(4, 0) + line(0, 0x1000n, F | len(64)) + line(1, 0n, 0n) + line(2, 0n, 0n) + line(3, 0x2000n, L | len(64) | 1n);
    expect(checkSdes(text, x)).toEqual([]);
  });

  it('refuses FIRST|LAST pads after the request with the completion bits moved onto them', () => {
    const text =
      head(4, 0) +
      line(0, 0x1000n, F | len(64)) +
      line(1, 0x2000n, L | len(64)) +
      line(2, 0x1000n, F | L) +
      line(3, 0x1000n, F | L | 1n);
    const problems = checkSdes(text, x);
    expect(problems.some((p) => /zero-length descriptor that is not the kernel’s sdma_pad/.test(p))).toBe(true);
  });

  it('refuses a wrong generation, a missing AHG line, flags that disagree with d1 and a header field in the wrong form', () => {
    expect(checkSdes(head(1, 0) + line(0, 0x1000n, F | L | len(8) | 4n | 1n), x).join('\n')).toMatch(/gen 1: _submit_tx/);
    expect(checkSdes(head(1, 0) + line(0, 0x1000n, F | L | len(8) | 1n).split('\t\taidx')[0], x).join('\n')).toMatch(/AHG line/);
    const lying = line(0, 0x1000n, F | L | len(8) | 1n).replace('flags:-HFL', 'flags:I-FL');
    expect(checkSdes(head(1, 0) + lying, x).join('\n')).toMatch(/flags:I-FL but d0\/d1 decode/);
    expect(checkSdes(head(0, 0).replace('DQF 0', 'DQF 00'), x).join('\n')).toMatch(/not an SDE_FMT header/);
    expect(checkSdes(head(0, 0).replace('SLC 0x0', 'SLC 0x7'), x).join('\n')).toMatch(/SLC 0x7/);
  });

  it('refuses pads in a one-descriptor packet, a pad run not ended by LAST, and the upstream line on a Cornelis build', () => {
    expect(checkSdes(head(2, 0) + line(0, 0n, 0n) + line(1, 0x1000n, F | L | len(8) | 1n), x)).toEqual([]);
    const one = head(3, 0) + line(0, 0x1000n, F | L | len(8) | 1n) + line(1, 0n, 0n) + line(2, 0x1000n, F | L | len(8) | 1n);
    expect(checkSdes(one, x).join('\n')).toMatch(/pad outside a packet/);
    const unended =
      head(4, 0) + line(0, 0x1000n, F | len(8)) + line(1, 0n, 0n) + line(2, 0x9000n, len(8)) + line(3, 0x2000n, L | len(8) | 1n);
    expect(checkSdes(unended, x).join('\n')).toMatch(/pads followed by a descriptor that is not the packet’s last/);
    const upstreamLine = '\tdesc[0]: flags:-HFL addr:0x0000000000001000 gen:0 len:8 bytes\n\t\tahgidx: 0 ahgmode: 0\n';
    expect(checkSdes(head(1, 0) + upstreamLine, x).join('\n')).toMatch(/not the hfi2 descriptor line/);
  });
});
