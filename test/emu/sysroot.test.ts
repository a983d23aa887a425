// The sysroot writer: sdes byte for byte for a known state (sdma_seqfile_dump_sde, sdma.c), and the rest of the layout
// (counters the debugfs counters, debugfs.c; BAR image at the SEND_DMA_* offsets of chip_registers.h; sysfs sysfs.c; /proc/interrupts); serve with a fake clock.
import { mkdtempSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sdesText } from '../../src/emu/sdes.js';
import { SdesRenderer } from '../../src/emu/sdes-render.js';
import { serveSysroot } from '../../src/emu/serve.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { buildTx, isTxFailure, type TxSpec } from '../../src/progress/txreq.js';
import { removeTrees } from '../support/temp.js';
import { quietUnit, Recorder } from './support.js';

function built(spec: TxSpec) {
  const t = buildTx(spec);
  if (isTxFailure(t)) throw new Error(t.message);
  return t;
}

/** Engine 0 at DH 2046 / TXH 65535 with a 1-descriptor packet and a 4-descriptor padded packet across the wrap. */
async function knownState() {
  const u = quietUnit({ engines: 16 });
  u.presetCounters(0, 2046, 65535);
  const rec = new Recorder();
  expect(u.submit(0, rec.tx(built({ tlen: 64, fragments: [{ kind: 'single', len: 64 }] })))).toBe(0);
  const padded = built({
    tlen: 64 + 4096 + 1001,
    fragments: [
      { kind: 'single', len: 64 },
      { kind: 'page', len: 4096 },
      { kind: 'page', len: 1001 },
    ],
  });
  expect(u.submit(0, rec.tx(padded))).toBe(0);
  return u;
}

const EXPECTED_SDES = [
  'SDE 0 CPU 0 STE s99_Running C 0x9 S 0x0000000000000000 E 0x0 T(HW) 0x3 T(SW) 0x3 H(HW) 0x7fe H(SW) 0x7fe H(D) 0x0 DM 0x1880000 GL 0x40800 R 0xc9 LIS 0x100000000 AHGI 0xfffffffe00000000 TXT 1 TXH 65535 DT 2051 DH 2046 FLNE 0 DQF 0 SLC 0x0',
  '\tdesc[2046]: flags:-HFL addr:0x0000000000100000 gen:0 len:64 bytes',
  '\t\tahgidx: 0 ahgmode: 0',
  '\tdesc[2047]: flags:--F- addr:0x0000000000100000 gen:0 len:64 bytes',
  '\t\tahgidx: 0 ahgmode: 0',
  '\tdesc[0]: flags:---- addr:0x0000000000100040 gen:1 len:4096 bytes',
  '\tdesc[1]: flags:---- addr:0x0000000000101040 gen:1 len:1001 bytes',
  '\tdesc[2]: flags:-H-L addr:0x0000000000001000 gen:1 len:3 bytes',
  'SDE 1 CPU 1 STE s99_Running C 0x9 S 0x0000000000000000 E 0x0 T(HW) 0x0 T(SW) 0x0 H(HW) 0x0 H(SW) 0x0 H(D) 0x0 DM 0x1880188 GL 0x40800 R 0xc9 LIS 0x200000000 AHGI 0xfffffffe00000000 TXT 0 TXH 0 DT 0 DH 0 FLNE 0 DQF 0 SLC 0x0',
  '',
].join('\n');

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'hfi1-emu-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  removeTrees(dirs.splice(0));
});

describe('sdes (sdma_seqfile_dump_sde, sdma.c)', () => {
  it('renders a known state byte for byte', async () => {
    const u = await knownState();
    const samples = await u.sample([0, 1]);
    const rings = [await u.ring(0), await u.ring(1)];
    expect(sdesText(samples, rings)).toBe(EXPECTED_SDES);
  });

  it('once the device is gone: the sample has no state and no registers; sdes prints the driver state beside all-ones', async () => {
    const u = quietUnit({ faults: ['device-gone@3'] });
    u.runUntilMs(4);
    const [s] = await u.sample([0]);
    expect(s).toMatchObject({ gone: true, state: null, csr: null });
    expect(JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? v.toString(16) : v))).not.toContain('ffffffffffffffff');
    const text = new SdesRenderer().render(u).toString('latin1');
    // The live format (test/fixtures/sdes/device-gone.txt): software state and counts, CSRs all-ones.
    const header =
      /^SDE 0 CPU \d+ STE s99_Running C 0xffffffffffffffff S 0xffffffffffffffff E 0xffffffffffffffff T\(HW\) 0xffffffffffffffff T\(SW\) 0x0 H\(HW\) 0xffffffffffffffff H\(SW\) 0x0 H\(D\) 0x[0-9a-f]+ DM 0xffffffffffffffff GL 0xffffffffffffffff R 0xffffffffffffffff LIS 0x[0-9a-f]+ AHGI 0x[0-9a-f]+ TXT \d+ TXH \d+ DT \d+ DH \d+ FLNE 0 DQF \d+ SLC 0xffffffffffffffff$/m;
    expect(text).toMatch(header);
    expect(readFileSync(new URL('../fixtures/sdes/device-gone.txt', import.meta.url), 'utf8')).toMatch(header);
  });

  it('the incremental renderer gives exactly what sdesText gives, refresh after refresh, across the wrap', async () => {
    const u = new EmuUnit({ seed: 5, engines: 4, workload: 'mixed', descqCnt: 64 });
    const r = new SdesRenderer();
    for (let i = 0; i < 40; i++) {
      u.runUntilMs(2 + i * 0.25);
      const expected = sdesText(await u.sample(), await Promise.all(u.engines.map((e) => u.ring(e.idx))));
      expect(r.render(u).toString('latin1')).toBe(expected);
    }
    expect(u.engines[0]?.descqHead ?? 0).toBeGreaterThan(64);
  });
});

describe('writeSysroot', () => {
  it('writes the sysroot layout src/hw reads, in the kernel formats', async () => {
    const u = await knownState();
    const dir = tempDir();
    await writeSysroot(u, dir);
    const dbg = join(dir, 'sys/kernel/debug/hfi1/hfi1_0');
    const sdes = readFileSync(join(dbg, 'sdes'), 'utf8');
    expect(sdes.startsWith(EXPECTED_SDES.split('SDE 1')[0] as string)).toBe(true);
    expect(sdes.match(/^SDE /gm)).toHaveLength(16);
    const names = readFileSync(join(dbg, 'counter_names'), 'utf8').split('\n').slice(0, -1);
    // Every device counter in dev_cntrs[] order (init_cntrs, chip.c): 460 on WFR, starting RcvOverflow,32.
    expect(names.slice(0, 2)).toEqual(['RcvOverflow,32', 'RxLenErr,32']);
    expect(names).toHaveLength(460);
    expect(names).toContain('SDEDscFdCn0,32');
    expect(names).toContain('SDMAPrIntCn15,32');
    expect(names).toContain('SDmaGenMismatchErr');
    const counters = readFileSync(join(dbg, 'counters'));
    expect(counters.length).toBe(names.length * 8);
    const idle0 = names.indexOf('SDMAIdInt0,32');
    expect(counters.readBigUInt64LE(idle0 * 8)).toBe(BigInt(u.engines[0]?.idleIntCnt ?? -1));
    expect(readFileSync(join(dir, 'sys/class/infiniband/hfi1_0/hw_counters/SDMAIdInt0,32'), 'utf8')).toBe(
      `${u.engines[0]?.idleIntCnt}\n`,
    );
    expect(readFileSync(join(dir, 'sys/class/infiniband/hfi1_0/sdma3/vl'), 'utf8')).toBe('1\n');
    expect(readFileSync(join(dir, 'sys/class/infiniband/hfi1_0/sdma3/cpu_list'), 'utf8')).toBe('empty\n');
    expect(readFileSync(join(dir, 'sys/module/hfi1/parameters/sdma_descq_cnt'), 'utf8')).toBe('2048\n');
    expect(readFileSync(join(dir, 'sys/module/hfi1/parameters/sdma_idle_cnt'), 'utf8')).toBe('250\n');
    expect(readlinkSync(join(dir, 'sys/kernel/debug/hfi1/0'))).toBe('hfi1_0');
    const device = realpathSync(join(dir, 'sys/class/infiniband/hfi1_0/device'));
    expect(device).toBe(realpathSync(join(dir, 'sys/bus/pci/devices/0000:05:00.0')));
    expect(readFileSync(join(device, 'vendor'), 'utf8')).toBe('0x8086\n');
    expect(readFileSync(join(device, 'device'), 'utf8')).toBe('0x24f0\n');
    const interrupts = readFileSync(join(dir, 'proc/interrupts'), 'utf8');
    expect(interrupts).toMatch(/^\s+CPU0\s+CPU1/);
    expect(interrupts).toMatch(/ hfi1_0 sdma15\n/);
  });

  it('keeps resource0 a sparse 64 MiB BAR image with the CSRs at their offsets, updated in place', async () => {
    const u = await knownState();
    const dir = tempDir();
    const bar = join(dir, 'sys/bus/pci/devices/0000:05:00.0/resource0');
    await writeSysroot(u, dir);
    expect(statSync(bar).size).toBe(0x4000000);
    expect(statSync(bar).blocks * 512).toBeLessThan(1 << 20);
    const fh = await open(bar, 'r');
    const q = async (off: number) => {
      const b = Buffer.alloc(8);
      await fh.read(b, 0, 8, off);
      return b.readBigUInt64LE();
    };
    const ino = statSync(bar).ino;
    try {
      expect(await q(0x1a00000)).toBe(0x9n); // SEND_DMA_CTRL engine 0, s99
      expect(await q(0x1a00018)).toBe(0x40800n); // LEN_GEN
      expect(await q(0x1a00020)).toBe(3n); // TAIL
      expect(await q(0x1a00028)).toBe(0x7fen); // HEAD
      expect(await q(0x1a00048)).toBe(0xc9n); // RELOAD_CNT
      expect(await q(0x1a000b0 + 0x100 * 15)).toBe(0x18816f8n); // MEMORY engine 15 (init_sdma_regs, sdma.c)
      expect(await q(0x1800018)).toBe(16n); // SEND_DMA_ENGINES
      u.resume();
      u.advance(1);
      await writeSysroot(u, dir);
      expect(await q(0x1a00028)).toBe(3n); // the chip consumed up to TAIL; the open handle sees it
      expect(statSync(bar).ino).toBe(ino);
    } finally {
      await fh.close();
    }
  });
});

/** What a run of serveSysroot on a fake wall clock did: its writes, the virtual times written, the sleeps asked for. */
interface FakeServe {
  writes: number;
  times: number[];
  sleeps: number[];
}

/**
 * serveSysroot of a 2-engine unit on a fake wall clock that only the sleeps and each refresh's `cost` (wall ms, by
 * refresh number from 1) move; `stopAt` is asked after each sleep and each write, as a signal handler would stop it.
 */
async function serveOnFakeClock(o: {
  speed: number;
  dir?: string;
  cost?: (write: number) => number;
  stopAt: (run: FakeServe & { lagMs: number }) => boolean;
  onBehind?: (lagMs: number) => void;
  onCaughtUp?: (behindMs: number) => void;
}): Promise<FakeServe & { lagMs: number }> {
  const u = new EmuUnit({ seed: 2, engines: 2, workload: 'qp' });
  let wall = 0;
  const ac = new AbortController();
  const run = { writes: 0, times: [] as number[], sleeps: [] as number[], lagMs: Number.NaN };
  const returned = await serveSysroot(u, o.dir ?? tempDir(), {
    speed: o.speed,
    intervalMs: 10,
    signal: ac.signal,
    nowMs: () => wall,
    sleep: async (ms) => {
      run.sleeps.push(ms);
      wall += ms;
      if (o.stopAt(run)) ac.abort();
    },
    onWrite: (v) => {
      run.writes++;
      run.times.push(v);
      run.lagMs = wall * o.speed - v;
      wall += o.cost?.(run.writes) ?? 0;
      if (o.stopAt(run)) ac.abort();
    },
    ...(o.onBehind ? { onBehind: o.onBehind } : {}),
    ...(o.onCaughtUp ? { onCaughtUp: o.onCaughtUp } : {}),
  });
  expect(returned).toBe(run.writes);
  return run;
}

describe('serveSysroot', () => {
  it('follows the clock × speed, rewrites every interval and stops on abort with a consistent tree', async () => {
    const dir = tempDir();
    const run = await serveOnFakeClock({ speed: 0.5, dir, stopAt: (r) => r.writes === 4 });
    expect(run.writes).toBe(4);
    expect(run.times).toEqual([0, 5, 10, 15]);
    const sdes = readFileSync(join(dir, 'sys/kernel/debug/hfi1/hfi1_0/sdes'), 'utf8');
    expect(sdes.match(/^SDE /gm)).toHaveLength(2);
    expect(sdes.endsWith('\n')).toBe(true);
  });

  it('refreshes at a fixed rate: the wall time a refresh takes shortens the wait to the next', async () => {
    // Each refresh takes 6 ms of wall time.
    const run = await serveOnFakeClock({ speed: 1, cost: () => 6, stopAt: (r) => r.writes === 4 });
    expect(run.sleeps).toEqual([4, 4, 4]);
    expect(run.times).toEqual([0, 10, 20, 30]);
  });

  it('goes through the sleep (the event loop, where a stop signal is heard) between refreshes that overran', async () => {
    // Every refresh takes longer than the interval; the stop comes from the third sleep (a SIGTERM handler's place).
    const run = await serveOnFakeClock({ speed: 1, cost: () => 25, stopAt: (r) => r.sleeps.length === 3 || r.writes === 50 });
    expect(run.sleeps).toEqual([0, 0, 0]);
    expect(run.writes).toBe(3);
  });

  it('says once that it fell behind, and once that it caught up again', async () => {
    // At most 20 virtual ms a refresh: behind past 100 ms, caught up within 10. A slow start (as a cold process has),
    // then quick refreshes; stopped three writes after it caught up.
    const said: string[] = [];
    /** The first write after it caught up (the one that refresh made). */
    let firstCaughtUp: number | null = null;
    const run = await serveOnFakeClock({
      speed: 1,
      cost: (write) => (write <= 8 ? 40 : 1),
      stopAt: (r) => {
        if (said.length === 2) firstCaughtUp ??= r.writes;
        return r.writes === (firstCaughtUp ?? Number.NaN) + 2 || r.writes === 500;
      },
      onBehind: (lag) => said.push(`behind ${lag}`),
      onCaughtUp: (most) => said.push(`caught up ${most}`),
    });
    expect(said).toEqual(['behind 120', 'caught up 180']);
    expect(run.lagMs).toBeLessThanOrEqual(10);
  });
});
