// cli.coldStart and watch.cpu: the command line as an operator feels it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Io } from '../src/cli/io.js';
import { main } from '../src/cli/main.js';
import { type BenchResult, type BenchSuite, ratioResult, round } from './harness.js';

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

export const cliSuite: BenchSuite = {
  name: 'cli',
  async run(): Promise<BenchResult[]> {
    const base = medianWallMs(['-e', '0'], 7);
    const cold = medianWallMs([BIN, '--backend', 'emu', 'engines'], 7);
    const results: BenchResult[] = [ratioResult('cli.coldStart', cold, base, 'ms', 5)];

    // watch.cpu: watch at 10 Hz on 16 engines of an emulated sysroot written by `emu write`,
    // read through the live-host backend as on a real host.
    const dir = mkdtempSync(join(tmpdir(), 'bench-watch-'));
    try {
      const w = spawnSync(process.execPath, [BIN, '--backend', 'emu', 'emu', 'write', '--sysroot', dir], { stdio: 'ignore' });
      if (w.status !== 0) throw new Error(`emu write exited ${w.status}`);
      const wall = async (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
      const args = ['--sysroot', dir, '--backend', 'hw', 'watch', '--json', '--interval-ms', '100'];
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await main([...args, '--count', '50'], quietIo(wall));
      const cpu = process.cpuUsage(cpu0);
      const pct = ((cpu.user + cpu.system) / 1000 / (performance.now() - t0)) * 100;
      results.push({ name: 'watch.cpu', value: round(pct), unit: '% of one core', goal: '≤ 5', met: pct <= 5 });
      // Memory: RSS after 10,000 samples vs after 100 (no sleeping: as fast as it goes).
      const none = async () => {};
      globalThis.gc?.();
      await main([...args, '--count', '100'], quietIo(none));
      const rss100 = process.memoryUsage().rss;
      await main([...args, '--count', '10000'], quietIo(none));
      globalThis.gc?.();
      const rss10k = process.memoryUsage().rss;
      results.push({
        name: 'watch.rss',
        value: round(rss10k / 2 ** 20),
        unit: 'MiB RSS (value after 10,000 samples, baseline after 100)',
        baseline: round(rss100 / 2 ** 20),
        ratio: round(rss10k / rss100),
        goal: 'flat (ratio ≤ 1.2)',
        met: rss10k / rss100 <= 1.2,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return results;
  },
};
