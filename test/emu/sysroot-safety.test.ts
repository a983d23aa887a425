// The sysroot writer under readers and tampering: a concurrent reader never lists a temporary,
// unchanged files are not rewritten, planted symlinks are replaced rather than followed, the
// engine error counter reaches counters and hw_counters, and one refresh's work is bounded.
import { lstatSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { DEV_COUNTER_NAMES, DRIVER_COUNTER_NAMES } from '../../src/emu/dev-counters.js';
import { runBounded } from '../../src/emu/serve.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { removeTrees } from '../support/temp.js';

const CLASS = 'sys/class/infiniband/hfi1_0';
const DBG = 'sys/kernel/debug/hfi1/hfi1_0';
const BAR = 'sys/bus/pci/devices/0000:05:00.0/resource0';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'hfi1-safe-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  removeTrees(dirs.splice(0));
});

/** A worker listing `dir` in a loop until told to stop; reports the listings and any name not among `names`. */
const LISTER = `
const { readdirSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const flag = new Int32Array(workerData.flag);
const names = new Set(workerData.names);
let listings = 0;
const odd = new Set();
while (Atomics.load(flag, 0) === 0) {
  for (const name of readdirSync(workerData.dir)) if (!names.has(name)) odd.add(name);
  listings++;
  Atomics.store(flag, 1, listings);
}
parentPort.postMessage({ listings, odd: [...odd] });
`;

describe('readers of a served tree', () => {
  it('a concurrent reader listing hw_counters never sees a temporary', async () => {
    const u = new EmuUnit({ seed: 3, engines: 16, workload: 'mixed' });
    const dir = tempDir();
    u.runUntilMs(5);
    await writeSysroot(u, dir);
    const flag = new SharedArrayBuffer(8);
    const counts = new Int32Array(flag);
    const names = [...DEV_COUNTER_NAMES, ...DRIVER_COUNTER_NAMES, 'lifespan'];
    const worker = new Worker(LISTER, { eval: true, workerData: { dir: join(dir, CLASS, 'hw_counters'), flag, names } });
    const done = new Promise<{ listings: number; odd: string[] }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    // Refresh until the reader has listed the directory 300 times while refreshes ran (bounded by
    // the refresh count, not by time: a slow machine only makes each refresh see more listings).
    let refreshes = 0;
    while (Atomics.load(counts, 1) < 300 && refreshes < 20_000) {
      u.advance(0.5);
      await writeSysroot(u, dir);
      refreshes++;
    }
    Atomics.store(counts, 0, 1);
    const seen = await done;
    await worker.terminate();
    expect(seen.listings).toBeGreaterThanOrEqual(300);
    expect(seen.odd).toEqual([]);
  });
});

describe('what a refresh writes', () => {
  it('leaves unchanged files alone and overwrites a counter of the same length in place', async () => {
    const u = new EmuUnit({ seed: 3, engines: 2, workload: 'qp' });
    const dir = tempDir();
    u.runUntilMs(5);
    await writeSysroot(u, dir);
    const param = join(dir, 'sys/module/hfi1/parameters/sdma_descq_cnt');
    const counter = join(dir, CLASS, 'hw_counters/SDEDscFdCn0,32');
    const paramIno = statSync(param).ino;
    const counterIno = statSync(counter).ino;
    const before = readFileSync(counter, 'utf8');
    // Advance until the counter changed but kept its number of digits.
    for (let i = 0; i < 100 && readFileSync(counter, 'utf8') === before; i++) {
      u.advance(0.01);
      await writeSysroot(u, dir);
      if (readFileSync(counter, 'utf8').length !== before.length) break;
    }
    const after = readFileSync(counter, 'utf8');
    expect(after).not.toBe(before);
    expect(after).toBe(`${u.engines[0]?.chip.descFetched}\n`);
    expect(statSync(param).ino).toBe(paramIno);
    if (after.length === before.length) expect(statSync(counter).ino).toBe(counterIno);
  });

  it('replaces a symlink planted between refreshes (BAR image, sdes, a counter) and never writes through it', async () => {
    const u = new EmuUnit({ seed: 3, engines: 2, workload: 'qp' });
    const dir = tempDir();
    const outside = tempDir();
    const victim = join(outside, 'victim');
    writeFileSync(victim, 'precious\n');
    u.runUntilMs(5);
    await writeSysroot(u, dir);
    for (const rel of [BAR, `${DBG}/sdes`, `${CLASS}/hw_counters/SDEDscFdCn0,32`]) {
      rmSync(join(dir, rel));
      symlinkSync(victim, join(dir, rel));
    }
    u.advance(1);
    await writeSysroot(u, dir);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(victim).size).toBe(9);
    for (const rel of [BAR, `${DBG}/sdes`, `${CLASS}/hw_counters/SDEDscFdCn0,32`])
      expect(lstatSync(join(dir, rel)).isFile()).toBe(true);
    expect(statSync(join(dir, BAR)).size).toBe(0x4000000);
    closeSysroot(u, dir);
  });
});

describe('the engine error counter (SDMAErrCt)', () => {
  it('a halt-class error that recovers in under a millisecond still shows in counters and hw_counters', async () => {
    const u = new EmuUnit({ seed: 4, engines: 2, workload: 'qp', faults: ['engine-error:1@10:1'] });
    const dir = tempDir();
    u.runUntilMs(11);
    expect(u.engines[1]?.state).toBe('s99_Running'); // recovered within the millisecond
    await writeSysroot(u, dir);
    const hw = (e: number) => readFileSync(join(dir, CLASS, `hw_counters/SDMAErrCt${e},32`), 'utf8');
    // One engine-error interrupt at driver load (the halt report) on every engine, one more on engine 1.
    expect(hw(0)).toBe('1\n');
    expect(hw(1)).toBe('2\n');
    const names = readFileSync(join(dir, DBG, 'counter_names'), 'utf8').split('\n');
    const counters = readFileSync(join(dir, DBG, 'counters'));
    expect(counters.readBigUInt64LE(8 * names.indexOf('SDMAErrCt1,32'))).toBe(2n);
    const [, s1] = await u.sample();
    expect(s1?.counters?.errCount).toBe(2n);
  });
});

describe('one refresh of emu serve', () => {
  it('stops simulating once its wall budget is spent, and slicing leaves the model unchanged', () => {
    const a = new EmuUnit({ seed: 9, engines: 4, workload: 'line-rate' });
    const b = new EmuUnit({ seed: 9, engines: 4, workload: 'line-rate' });
    let wall = 0;
    // Every look at the clock costs 10 ms of wall time: a budget of 50 ms allows 5 slices.
    runBounded(a, 1000, () => (wall += 10), 50);
    expect(a.nowMs).toBeGreaterThan(0);
    expect(a.nowMs).toBeLessThan(10);
    const reached = a.nowMs;
    runBounded(a, 40, () => 0, 1);
    b.runUntilMs(40);
    expect(reached).toBeLessThan(40);
    expect(a.logHash()).toBe(b.logHash());
  });
});

describe('a tree removed between refreshes', () => {
  it('is written again in full by the same unit', async () => {
    const u = new EmuUnit({ seed: 3, engines: 2, workload: 'idle' });
    const dir = tempDir();
    u.runUntilMs(5);
    await writeSysroot(u, dir);
    rmSync(dir, { recursive: true });
    await writeSysroot(u, dir);
    expect(readFileSync(join(dir, 'sys/module/hfi1/parameters/sdma_descq_cnt'), 'utf8')).toBe('2048\n');
    expect(statSync(join(dir, BAR)).size).toBe(0x4000000);
    closeSysroot(u, dir);
  });
});
