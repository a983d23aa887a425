// contain.watchSample and contain.scrape: what keeping every read inside a sysroot costs (each path
// resolved to an O_PATH descriptor, its real path checked, the same inode opened), against the
// same reads uncontained, in this process on the same emulated host (16 engines, waiters and link):
// `watch --json` samples as the command takes them, and the exporter's scrapes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Backend } from '../src/backend.js';
import type { Io } from '../src/cli/io.js';
import { main } from '../src/cli/main.js';
import { closeSysroot, writeSysroot } from '../src/emu/sysroot.js';
import { EmuUnit } from '../src/emu/unit.js';
import { Sampler } from '../src/export/server.js';
import { type HwFs, hwFsFor, realFs } from '../src/hw/fsio.js';
import { openHwBackend } from '../src/hw/index.js';
import { type BenchResult, type BenchSuite, ratioResult, wanted } from './harness.js';

const quiet: Io = { stdout: () => {}, stderr: () => {}, env: {}, isTTY: false, sleep: async () => {}, readStdin: async () => '' };

/** `watch --json` over the sysroot for `count` samples, read through `fs`; ms per sample (its share of opening the unit included). */
export function watchRun(
  sysroot: string,
  fs: HwFs,
  count: number,
  open: () => Promise<Backend> = async () => openHwBackend({ sysroot, fs }),
): () => Promise<void> {
  const argv = ['--sysroot', sysroot, '--backend', 'hw', 'watch', '--json', '--interval-ms', '10', '--count', String(count)];
  return async () => {
    const code = await main(argv, quiet, { openBackend: open });
    if (code !== 0) throw new Error(`watch exited ${code}`);
  };
}

/**
 * Median CPU ms (user + system of this process: what others running on the machine take does not
 * count) of `a()` and of `b()`, measured in alternating rounds of `batch` calls until `minMs` of
 * wall time have passed (so drift on a shared machine falls on both alike).
 */
export async function pairedMs(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  batch: number,
  minMs: number,
): Promise<[number, number]> {
  const time = async (f: () => Promise<unknown>) => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < batch; i++) await f();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000 / batch;
  };
  for (let i = 0; i < 3; i++) {
    await time(a);
    await time(b);
  }
  const as: number[] = [];
  const bs: number[] = [];
  const end = performance.now() + minMs;
  while (performance.now() < end || as.length < 7) {
    as.push(await time(a));
    bs.push(await time(b));
  }
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? Number.NaN;
  return [median(as), median(bs)];
}

/** A sampler of every unit, one fresh sample per scrape. */
function scraper(backend: Backend): () => Promise<string> {
  let now = 0;
  const sampler = new Sampler({
    backend,
    buildInfo: { version: '0.0.0', backend: 'hw' },
    minIntervalMs: 0,
    stallMs: 1000,
    nowMs: () => (now += 1000),
    log: () => {},
  });
  return async () => {
    await sampler.refresh();
    return sampler.metrics.text.metrics();
  };
}

export const containSuite: BenchSuite = {
  name: 'contain',
  async run(): Promise<BenchResult[]> {
    const dir = mkdtempSync(join(tmpdir(), 'bench-contain-'));
    const backends: Backend[] = [];
    try {
      const u = new EmuUnit({ seed: 1 });
      u.runUntilMs(20);
      await writeSysroot(u, dir);
      closeSysroot(u, dir);
      const open = async (fs: HwFs) => {
        const b = await openHwBackend({ sysroot: dir, fs });
        backends.push(b);
        return b;
      };
      const contained = await open(hwFsFor(dir));
      const plain = await open(realFs);
      const results: BenchResult[] = [];
      if (wanted('contain.watchSample')) {
        const count = 25;
        const [withMs, withoutMs] = await pairedMs(watchRun(dir, hwFsFor(dir), count), watchRun(dir, realFs, count), 1, 4000);
        results.push(
          ratioResult('contain.watchSample', withMs / count, withoutMs / count, 'CPU ms/sample', 1.1, { engines: 16 }),
        );
      }
      if (wanted('contain.scrape')) {
        const [withMs, withoutMs] = await pairedMs(scraper(contained), scraper(plain), 10, 3000);
        results.push(ratioResult('contain.scrape', withMs, withoutMs, 'CPU ms/scrape', 1.1, { engines: 16 }));
      }
      return results;
    } finally {
      for (const b of backends) await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
