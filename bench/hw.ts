// parse.* and bar.*: the live-host parsers and the BAR window against trivial baselines.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBarImage } from '../src/emu/bar-image.js';
import { parseSdes } from '../src/hw/parse/sdes.js';
import { ENGINE_CSR_OFFSETS, engineReg, openSdmaWindow, readEngineCsrs, SDMA_WINDOW } from '../src/hw/regs.js';
import { flagString, hex16 } from '../src/progress/descriptor.js';
import { type BenchSuite, nsPerOp, ratioResult } from './harness.js';

/** A full sdes (§g.2): 16 engines, each with a full 2048 ring (2047 descriptors), AHG lines on FIRST. */
export function fullSdes(engines = 16, descqCnt = 2048): string {
  const parts: string[] = [];
  for (let e = 0; e < engines; e++) {
    const dh = 5000 + e * 37;
    const dt = dh + descqCnt - 1;
    const mask = descqCnt - 1;
    parts.push(
      `SDE ${e} CPU ${e} STE s99_Running C 0x9 S 0x0000000000000000 E 0x0 T(HW) 0x${(dt & mask).toString(16)} T(SW) 0x${(dt & mask).toString(16)} H(HW) 0x${(dh & mask).toString(16)} H(SW) 0x${(dh & mask).toString(16)} H(D) 0x${(dh & mask).toString(16)} DM 0x${((392 << 16) + 392 * e).toString(16)} GL 0x40800 R 0xc9 LIS 0x0 AHGI 0xfffffffe00000000 TXT ${dt & 0xffff} TXH ${dh & 0xffff} DT ${dt} DH ${dh} FLNE 0 DQF 0 SLC 0x0\n`,
    );
    for (let k = 0; k < descqCnt - 1; k++) {
      const first = k % 3 === 0;
      const last = k % 3 === 2;
      const flags = flagString({ intReq: false, headToHost: last, first, last });
      const gen = ((dh + k) >>> 11) & 3;
      parts.push(
        `\tdesc[${(dh + k) & mask}]: flags:${flags} addr:${hex16(0x1_2340_0000 + k * 4096)} gen:${gen} len:${(k * 97) % 16384} bytes\n`,
      );
      if (first) parts.push('\t\tahgidx: 0 ahgmode: 0\n');
    }
  }
  return parts.join('');
}

function parseSuite(): ReturnType<BenchSuite['run']> {
  const text = fullSdes();
  const bytes = Buffer.from(text, 'latin1');
  const mb = bytes.length / 1e6;
  const opts = { batch: 1, minMs: 1500, warmupMs: 300 };
  const split = nsPerOp(() => text.split('\n').length, opts);
  const parse = nsPerOp(() => parseSdes(bytes).records.length, opts);
  const r = ratioResult('parse.sdes', parse / 1e6, split / 1e6, 'ms/dump', 2, {
    bytes: bytes.length,
    descriptors: 16 * 2047,
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
    const win = openSdmaWindow(path);
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
