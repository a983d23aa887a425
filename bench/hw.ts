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
import { type BenchResult, type BenchSuite, nsPerOp, ratioResult } from './harness.js';

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
  const mb = bytes.length / 1e6;
  const opts = { batch: 1, minMs: 1500, warmupMs: 300 };
  const split = nsPerOp(() => text.split('\n').length, opts);
  const parse = nsPerOp(() => parseSdes(bytes).records.length, opts);
  const r = ratioResult('parse.sdes', parse / 1e6, split / 1e6, 'ms/dump', 2, {
    bytes: bytes.length,
    descriptors,
    mbPerSec: Math.round((mb / (parse / 1e9)) * 10) / 10,
    splitMbPerSec: Math.round((mb / (split / 1e9)) * 10) / 10,
  });
  return [r];
}

function barSuite(): ReturnType<BenchSuite['run']> {
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
    const base = nsPerOp(
      () => {
        for (let e = 0; e < 16; e++) {
          const row = idx[e] as number[];
          for (let i = 0; i < row.length; i++) sink ^= raw[row[i] as number] as bigint;
        }
        return sink;
      },
      { batch: 200 },
    );
    const sample = nsPerOp(
      () => {
        let n = 0n;
        for (let e = 0; e < 16; e++) n ^= readEngineCsrs(win, e).ctrl;
        return n;
      },
      { batch: 200 },
    );
    win.close();
    return [ratioResult('bar.sample16', sample / 1000, base / 1000, 'µs/sample', 3, { registers: 160 })];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const parseBenchSuite: BenchSuite = { name: 'parse', run: parseSuite };
export const barBenchSuite: BenchSuite = { name: 'bar', run: barSuite };
