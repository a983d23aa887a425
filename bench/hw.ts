// parse.* and bar.*: the live-host parsers and the BAR window against trivial baselines.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBarImage } from '../src/emu/bar-image.js';
import { sdesText } from '../src/emu/sdes.js';
import { EmuUnit } from '../src/emu/unit.js';
import { openBarWindow } from '../src/hw/bar.js';
import { parseSdes } from '../src/hw/parse/sdes.js';
import { ENGINE_CSR_OFFSETS, engineReg, readEngineCsrs, SDMA_WINDOW } from '../src/hw/regs.js';
import { type BenchResult, type BenchSuite, measureRatio, round } from './harness.js';

/**
 * A full sdes (sdma_seqfile_dump_sde, sdma.c) from the emulator's writer: 16 engines at line rate whose chips stopped
 * fetching, so every ring holds 2046 descriptors (2-descriptor packets leave the last slot free).
 */
async function fullSdes(): Promise<{ text: string; descriptors: number }> {
  const u = new EmuUnit({ seed: 1, workload: 'line-rate', faults: ['stop-fetch@5'] });
  u.runUntilMs(30);
  const samples = await u.sample();
  const rings = await Promise.all(samples.map((s) => u.ring(s.engine)));
  return { text: sdesText(samples, rings), descriptors: rings.reduce((n, r) => n + r.descriptors.length, 0) };
}

async function parseSuite(): Promise<BenchResult[]> {
  const { text, descriptors } = await fullSdes();
  const bytes = Buffer.from(text, 'latin1');
  let sink = 0;
  const r = await measureRatio(
    'parse.sdes',
    'ms/dump',
    {
      work: () => {
        for (let i = 0; i < 5; i++) sink += parseSdes(bytes).records.length;
      },
      baseline: () => {
        for (let i = 0; i < 5; i++) sink += text.split('\n').length;
      },
      perRound: 5,
      rounds: 15,
    },
    { max: 2 },
    { bytes: bytes.length, descriptors, baselineIs: "split('\\n') of the same text" },
  );
  r.mbPerSec = round(bytes.length / 1e6 / (r.value / 1000));
  if (sink === -1) console.log('');
  return [r];
}

async function barSuite(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'hfi1-bench-'));
  try {
    const path = join(dir, 'resource0');
    const regs = new Map<number, bigint>();
    for (let e = 0; e < 16; e++) for (const off of ENGINE_CSR_OFFSETS) regs.set(engineReg(off, e), BigInt(e * 0x1000 + off));
    writeBarImage(path, regs);
    // The live host's path: the mapped window (an image elsewhere is read with pread).
    const win = openBarWindow(path, SDMA_WINDOW);
    // The raw baseline: the same 160 loads from a BigUint64Array over the same bytes.
    const raw = new BigUint64Array(SDMA_WINDOW.length / 8);
    for (const [off, v] of regs) raw[(off - SDMA_WINDOW.start) / 8] = v;
    const idx = Array.from({ length: 16 }, (_, e) => ENGINE_CSR_OFFSETS.map((o) => (engineReg(o, e) - SDMA_WINDOW.start) / 8));
    let sink = 0n;
    const loads = (): void => {
      for (let e = 0; e < 16; e++) {
        const row = idx[e] as number[];
        for (let i = 0; i < row.length; i++) sink ^= raw[row[i] as number] as bigint;
      }
    };
    const sample = (): void => {
      for (let e = 0; e < 16; e++) sink ^= readEngineCsrs(win, e).ctrl;
    };
    const times = 2000;
    const r = await measureRatio(
      'bar.sample16',
      'µs/sample',
      {
        work: () => {
          for (let i = 0; i < times; i++) sample();
        },
        baseline: () => {
          for (let i = 0; i < times; i++) loads();
        },
        perRound: times / 1000,
        rounds: 15,
      },
      { max: 3 },
      { registers: 160, baselineIs: 'the same 160 loads from a BigUint64Array over the same bytes' },
    );
    if (sink === -1n) console.log('');
    win.close();
    return [r];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const parseBenchSuite: BenchSuite = { name: 'parse', run: parseSuite };
export const barBenchSuite: BenchSuite = { name: 'bar', run: barSuite };
