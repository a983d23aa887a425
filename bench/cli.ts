// cli.coldStart, cli.version, cli.healthBrief, cli.coldStartHw, api.importProgress (a start of the command, or of a script importing
// hfi1-sdma/progress, against `node -e 0`, interleaved) and
// watch.cpu (a watch at 10 Hz against reading the same files at the same rate): the command line as an operator
// feels it.
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Io } from '../src/cli/io.js';
import { main } from '../src/cli/main.js';
import { openBarWindow } from '../src/hw/bar.js';
import { type HwFs, realFs } from '../src/hw/fsio.js';
import { openHwBackend } from '../src/hw/index.js';
import { readEngineCsrs, SDMA_WINDOW } from '../src/hw/regs.js';
import { type BenchResult, type BenchSuite, measureRatio, round, wanted, withGoal } from './harness.js';
import { qpStatsText } from './qpstats.js';

const BIN = fileURLToPath(new URL('../../bin/hfi1-sdma.js', import.meta.url));

/** One start of `node ARGS` to completion (wall clock: a child's CPU is not this process's). */
function spawnOnce(args: string[]): void {
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
}

/** `node ARGS` against `node -e 0`, started in turn: the ratio of their wall times (its goal, if it has one). */
function startRatio(name: string, args: string[], goal: number | null): Promise<BenchResult> {
  return measureRatio(
    name,
    'ms',
    { work: () => spawnOnce(args), baseline: () => spawnOnce(['-e', '0']), clock: 'wall', rounds: 9, warmup: 1 },
    goal === null ? {} : { max: goal },
    { baselineIs: 'node -e 0' },
  );
}

function quietIo(sleep: (ms: number) => Promise<void>): Io {
  return { stdout: () => {}, stderr: () => {}, env: {}, isTTY: false, sleep, readStdin: async () => '' };
}

/** An emulated host's sysroot written by `emu write` in a fresh directory (removed by the caller); `emu` its options. */
function emulatedSysroot(emu: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-watch-'));
  const w = spawnSync(process.execPath, [BIN, '--backend', 'emu', ...emu, 'emu', 'write', '--sysroot', dir], { stdio: 'ignore' });
  if (w.status !== 0) throw new Error(`emu write exited ${w.status}`);
  return dir;
}

/** api.importProgress: what a script pays to import the pure core by the package's name (no FFI, no CLI). */
export const apiSuite: BenchSuite = {
  name: 'api',
  async run(): Promise<BenchResult[]> {
    if (!wanted('api.importProgress')) return [];
    return [await startRatio('api.importProgress', ['--input-type=module', '-e', "await import('hfi1-sdma/progress')"], 1.2)];
  },
};

export const cliSuite: BenchSuite = {
  name: 'cli',
  async run(): Promise<BenchResult[]> {
    const results: BenchResult[] = [];
    if (wanted('cli.coldStart')) results.push(await startRatio('cli.coldStart', [BIN, '--backend', 'emu', 'engines'], 5));
    if (wanted('cli.version')) results.push(await startRatio('cli.version', [BIN, '--version'], 1.5));
    if (wanted('cli.healthBrief')) {
      // cli.healthBrief: the fleet's check (NHC, clush) as a node starts it, on a quiet tree (16 idle engines: OK)
      // with a short observation (20 ms of waits), so that what is measured is the start. No goal: a figure to follow.
      const idle = emulatedSysroot(['--workload', 'idle']);
      try {
        const args = [BIN, '--sysroot', idle, 'health', '--brief', '--state', 'none', '--stall-ms', '10'];
        results.push(await startRatio('cli.healthBrief', args, null));
      } finally {
        rmSync(idle, { recursive: true, force: true });
      }
    }
    if (!wanted('cli.coldStartHw')) return results;
    const dir = emulatedSysroot();
    try {
      // cli.coldStartHw: `engines` on a sysroot, the live-host backend as an operator starts it.
      results.push(await startRatio('cli.coldStartHw', [BIN, '--sysroot', dir, 'engines'], 2));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return results;
  },
};

/** One read of the live-host backend, as its file system saw it. */
export type FsRead = { op: 'readFile' | 'readdir' | 'readlink' | 'canRead' | 'size'; path: string };

/** The real file system, every read logged in `log`. */
export function loggingFs(log: FsRead[]): HwFs {
  const logged =
    <A extends unknown[], R>(op: FsRead['op'], read: (path: string, ...rest: A) => R) =>
    (path: string, ...rest: A): R => {
      log.push({ op, path });
      return read(path, ...rest);
    };
  return {
    readFile: logged('readFile', realFs.readFile),
    readdir: logged('readdir', realFs.readdir),
    readlink: logged('readlink', realFs.readlink),
    canRead: logged('canRead', realFs.canRead),
    size: logged('size', async (path: string) => (realFs.size ? realFs.size(path) : null)),
  };
}

/** Do `reads` the plainest way (whole-file reads, a listing, a stat, a byte), ignoring files that went away. */
export function replay(reads: readonly FsRead[]): number {
  let n = 0;
  for (const r of reads) {
    try {
      if (r.op === 'readFile') n += readFileSync(r.path).length;
      else if (r.op === 'readdir') n += readdirSync(r.path).length;
      else if (r.op === 'readlink') n += readlinkSync(r.path).length;
      else if (r.op === 'size') n += statSync(r.path).size;
      else {
        const fd = openSync(r.path, 'r');
        n += readSync(fd, Buffer.alloc(1), 0, 1, 0);
        closeSync(fd);
      }
    } catch {
      // gone between samples, as watch would find it
    }
  }
  return n;
}

/**
 * watch.cpu: `watch --json` at 10 Hz on an emulated sysroot read by the live-host backend (engines, link,
 * waiters), steady state, against the bytes a sample must read: the files one sample of it read (logged), read
 * whole with readFileSync, and the engines' registers loaded from the mapped BAR, once in each of its sleeps.
 * Both in CPU time per sample (at 10 Hz, 1 ms a sample is 1% of a core).
 */
async function watchCpu(dir: string, args: string[]): Promise<BenchResult> {
  const log: FsRead[] = [];
  const marks: number[] = [];
  // Warm the code paths and log what each sample reads (the reads between two sleeps).
  await main(
    [...args, '--count', '60'],
    quietIo(async () => void marks.push(log.length)),
    {
      openBackend: () => openHwBackend({ sysroot: dir, fs: loggingFs(log) }),
    },
  );
  const reads = log.slice(marks.at(-2) ?? 0, marks.at(-1) ?? 0);
  const bar = readdirSync(join(dir, 'sys/bus/pci/devices')).map((d) => join(dir, 'sys/bus/pci/devices', d, 'resource0'))[0];
  const win = bar ? openBarWindow(bar, SDMA_WINDOW) : null;
  let sink = 0n;
  const baseline = (): void => {
    sink ^= BigInt(replay(reads));
    if (win) for (let e = 0; e < 16; e++) sink ^= readEngineCsrs(win, e).ctrl;
  };
  const samples = 120;
  const watchMs: number[] = [];
  const baseMs: number[] = [];
  let out = process.cpuUsage();
  const cpuMs = (from: NodeJS.CpuUsage) => {
    const c = process.cpuUsage(from);
    return (c.user + c.system) / 1000;
  };
  // Each sleep of the watch: the CPU since the last one is one sample's; then the baseline, timed; then the wait.
  const sleep = async (ms: number): Promise<void> => {
    watchMs.push(cpuMs(out));
    const c0 = process.cpuUsage();
    baseline();
    baseMs.push(cpuMs(c0));
    await new Promise<void>((r) => setTimeout(r, ms));
    out = process.cpuUsage();
  };
  await main([...args, '--count', String(samples + 1)], quietIo(sleep));
  win?.close();
  if (sink === -1n) console.log('');
  // The first sleep follows the start-up and the first sample: left out. Ratios per window of 10 samples.
  const w = watchMs.slice(1);
  const b = baseMs.slice(1);
  const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
  const windows = Array.from(
    { length: Math.floor(w.length / 10) },
    (_, i) => sum(w.slice(i * 10, i * 10 + 10)) / sum(b.slice(i * 10, i * 10 + 10)),
  );
  const ratio = sum(w) / sum(b);
  const r: BenchResult = {
    name: 'watch.cpu',
    value: round(sum(w) / w.length),
    unit: 'ms/sample',
    baseline: round(sum(b) / b.length),
    ratio: round(ratio),
    ratioSpread: [round(Math.min(...windows)), round(Math.max(...windows))],
    percentOfCore: round(sum(w) / w.length / 1), // 10 samples a second: ms per sample ÷ 100 ms × 100
    filesPerSample: reads.length,
    bytesPerSample: replay(reads),
    baselineIs: 'the files of one sample read whole, the engine registers loaded from the mapped BAR, at 10 Hz',
  };
  return withGoal(r, ratio, { max: 2 });
}

export const watchSuite: BenchSuite = {
  name: 'watch',
  async run(): Promise<BenchResult[]> {
    const results: BenchResult[] = [];
    // watch.cpu: watch at 10 Hz on 16 engines of an emulated sysroot written by `emu write`,
    // read through the live-host backend as on a real host.
    const dir = emulatedSysroot();
    try {
      const wall = async (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
      const args = ['--sysroot', dir, '--backend', 'hw', 'watch', '--json', '--interval-ms', '100'];
      // Steady state is what a long-running watch costs: warm the code paths first.
      await main(
        [...args, '--count', '200'],
        quietIo(async () => {}),
      );
      if (wanted('watch.cpu')) results.push(await watchCpu(dir, args));
      // watch.cpuWaiters: the same watch with 1,000 QPs in qp_stats, against an empty qp_stats: what
      // reading and judging the waiters adds, in percentage points of a core.
      if (wanted('watch.cpuWaiters')) {
        const qpStats = join(dir, 'sys/kernel/debug/hfi1/hfi1_0/qp_stats');
        const cpuPct = async (text: string): Promise<number> => {
          writeFileSync(qpStats, text);
          await main(
            [...args, '--count', '50'],
            quietIo(async () => {}),
          );
          const c0 = process.cpuUsage();
          const w0 = performance.now();
          await main([...args, '--count', '50'], quietIo(wall));
          const c = process.cpuUsage(c0);
          return ((c.user + c.system) / 1000 / (performance.now() - w0)) * 100;
        };
        const without = await cpuPct('');
        const withQps = await cpuPct(qpStatsText(1000));
        const addedPts = withQps - without;
        results.push({
          name: 'watch.cpuWaiters',
          value: round(addedPts),
          unit: 'percentage points of one core',
          note: `watch at 10 Hz: ${round(withQps)}% with 1,000 QPs in qp_stats, ${round(without)}% with none`,
          goal: '≤ 1',
          met: addedPts <= 1,
        });
      }
      if (!wanted('watch.rss')) return results;
      // Memory: after 100 samples, after 10,000 and after 20,000 (no sleeping: as fast as it goes).
      // The heap must stay flat; RSS grows while the allocator warms up and must then level off.
      const none = async () => {};
      const mem = () => {
        globalThis.gc?.();
        const m = process.memoryUsage();
        return { rss: m.rss / 2 ** 20, heap: m.heapUsed / 2 ** 20 };
      };
      await main([...args, '--count', '100'], quietIo(none));
      const m100 = mem();
      await main([...args, '--count', '10000'], quietIo(none));
      const m10k = mem();
      await main([...args, '--count', '10000'], quietIo(none));
      const m20k = mem();
      results.push({
        name: 'watch.rss',
        value: round(m10k.rss),
        unit: 'MiB RSS',
        note: 'value after 10,000 samples, baseline after 100',
        baseline: round(m100.rss),
        ratio: round(m10k.rss / m100.rss),
        rssAfter20k: round(m20k.rss),
        heapAfter100: round(m100.heap),
        heapAfter10k: round(m10k.heap),
        heapAfter20k: round(m20k.heap),
        goal: 'flat: heap within 10%, RSS from 10,000 to 20,000 within 10%',
        met: m10k.heap <= m100.heap * 1.1 && m20k.heap <= m100.heap * 1.1 && m20k.rss <= m10k.rss * 1.1,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return results;
  },
};
