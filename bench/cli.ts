// cli.coldStart, cli.version, cli.coldStartHw and watch.cpu: the command line as an operator feels it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Io } from '../src/cli/io.js';
import { main } from '../src/cli/main.js';
import { type BenchResult, type BenchSuite, ratioResult, round, wanted } from './harness.js';
import { qpStatsText } from './qpstats.js';

const BIN = fileURLToPath(new URL('../../bin/hfi1-sdma.js', import.meta.url));

function medianWallMs(args: string[], runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    times.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

function quietIo(sleep: (ms: number) => Promise<void>): Io {
  return { stdout: () => {}, stderr: () => {}, env: {}, isTTY: false, sleep, readStdin: async () => '' };
}

/** An emulated host's sysroot written by `emu write` in a fresh directory (removed by the caller). */
function emulatedSysroot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-watch-'));
  const w = spawnSync(process.execPath, [BIN, '--backend', 'emu', 'emu', 'write', '--sysroot', dir], { stdio: 'ignore' });
  if (w.status !== 0) throw new Error(`emu write exited ${w.status}`);
  return dir;
}

export const cliSuite: BenchSuite = {
  name: 'cli',
  async run(): Promise<BenchResult[]> {
    const base = medianWallMs(['-e', '0'], 7);
    const results: BenchResult[] = [];
    if (wanted('cli.coldStart'))
      results.push(ratioResult('cli.coldStart', medianWallMs([BIN, '--backend', 'emu', 'engines'], 7), base, 'ms', 5));
    if (wanted('cli.version')) results.push(ratioResult('cli.version', medianWallMs([BIN, '--version'], 7), base, 'ms', 1.5));
    if (!wanted('cli.coldStartHw')) return results;
    const dir = emulatedSysroot();
    try {
      // cli.coldStartHw: `engines` on a sysroot, the live-host backend as an operator starts it.
      const coldHw = medianWallMs([BIN, '--sysroot', dir, 'engines'], 7);
      results.push(ratioResult('cli.coldStartHw', coldHw, base, 'ms', 2));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return results;
  },
};

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
      if (wanted('watch.cpu')) {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await main([...args, '--count', '100'], quietIo(wall));
        const cpu = process.cpuUsage(cpu0);
        const pct = ((cpu.user + cpu.system) / 1000 / (performance.now() - t0)) * 100;
        results.push({ name: 'watch.cpu', value: round(pct), unit: '% of one core', goal: '≤ 5', met: pct <= 5 });
      }
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
