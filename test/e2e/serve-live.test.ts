// Two processes, as on a host: `hfi1-sdma emu serve` keeps an emulated sysroot live; readers in
// other processes (src/hw and the CLI here, watch as a child) see it move, and see a stall appear.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHwBackend } from '../../src/hw/index.js';
import { startChild } from '../support/child.js';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'serve-live-'));
/** The serving process: started before the first test (a run that filters these tests out starts nothing). */
let serve: ReturnType<typeof startChild>;
beforeAll(() => {
  serve = startChild([
    '--backend',
    'emu',
    '--engines',
    '4',
    '--workload',
    // A light load: the serving process keeps up with wall time even on a loaded machine.
    'qp:gbps=5',
    '--fault',
    'stop-fetch@800:3',
    'emu',
    'serve',
    '--sysroot',
    dir,
    '--interval-ms',
    '50',
  ]);
});
afterAll(() => {
  serve?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Wait (bounded) until `fn` is true. */
async function until(what: string, ms: number, fn: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; serve said: ${serve.err()}`);
}

// In this order, even under --sequence.shuffle: the tests are the steps of one served host, the last stops it.
describe('a sysroot kept live by emu serve', { shuffle: false }, () => {
  it('says on stderr when the fault fires, in virtual and wall time', { timeout: 70_000 }, async () => {
    await until('the fault line on stderr', 60_000, () => /fault stop-fetch@800:3 fired/.test(serve.err()));
    expect(serve.err()).toMatch(
      /^emu serve: fault stop-fetch@800:3 fired at 800 ms virtual time on engine 3; wall clock \d\d:\d\d:\d\d\.\d{3} \(seen at \d+ ms virtual\)$/m,
    );
    expect(serve.err().match(/fault stop-fetch@800:3 fired/g)).toHaveLength(1);
  });

  it('src/hw sees heads advance and seq change through sdes and the BAR image', async () => {
    await until('the first sysroot write', 20_000, () => existsSync(join(dir, 'sys/kernel/debug/hfi1/hfi1_0/sdes')));
    const hw = await openHwBackend({ sysroot: dir });
    try {
      const unit = await hw.unit(0);
      const a = await unit.sample();
      expect(a[0]?.sources).toEqual(expect.arrayContaining(['sdes', 'bar', 'counters']));
      // Poll (bounded) until the tree has moved on: the serving process may be slow to get a core.
      let b = a;
      const movedAll = () =>
        [0, 1, 2].some((i) => a[i]?.sw?.descqHead !== b[i]?.sw?.descqHead) &&
        [0, 1, 2].some((i) => a[i]?.seq !== b[i]?.seq) &&
        [0, 1, 2].some((i) => a[i]?.csr?.hwHead !== b[i]?.csr?.hwHead);
      await until('heads, seq and HEAD registers to move', 20_000, async () => {
        b = await unit.sample();
        return movedAll();
      });
      expect(movedAll()).toBe(true);
      expect(b.every((s) => s.sources.includes('sdes') && s.sources.includes('bar'))).toBe(true);
    } finally {
      await hw.close();
    }
  });

  it('watch in another process shows engine 3 stalled (chip-not-fetching) and no other; health exits 2', {
    timeout: 120_000,
  }, async () => {
    // Watch until engine 3's stall shows (the fault fires at 800 ms of the server's virtual time, which a starved
    // server reaches late), then stop it; every round must show no other stall. The reader judges by its own clock:
    // a server starved of a core for --stall-ms leaves every engine still, so the rounds allow 4 s of that (engine 3
    // stays still for good). health reads the same tree meanwhile, on this process's clock.
    const w = startChild(['--sysroot', dir, 'watch', '--json', '--count', '200', '--interval-ms', '300', '--stall-ms', '4000']);
    const health = runCli(['--sysroot', dir, 'health', '--stall-ms', '1000'], {}, false, '', undefined, true);
    const rounds = () =>
      w
        .out()
        .slice(0, w.out().lastIndexOf('\n') + 1)
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l));
    let ended = false;
    void w.exited.then(() => {
      ended = true;
    });
    try {
      await until('engine 3 to show as stalled in watch', 60_000, () => ended || rounds().some((l) => l.verdict === 'stalled'));
    } finally {
      w.child.kill('SIGTERM');
    }
    expect(await w.exited, w.err()).toBe(0);
    const lines = rounds();
    expect(lines.every((l) => l.backend === undefined && l.sources.includes('sdes'))).toBe(true);
    const stalled = lines.filter((l) => l.verdict === 'stalled');
    expect(stalled.filter((l) => l.engine !== 3)).toEqual([]);
    expect(new Set(stalled.map((l) => `${l.engine}/${l.reason}`))).toEqual(new Set(['3/chip-not-fetching']));
    const h = await health;
    expect(h.code).toBe(2);
    expect(h.stdout).toMatch(/CRITICAL: SD101 hfi1_0 sdma3 stalled \(chip-not-fetching\)/);
  });

  it('serve stops on SIGTERM with exit 0, leaving a readable tree', async () => {
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const r = await runCli(['--sysroot', dir, 'engines', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).units[0].engines).toHaveLength(4);
  });
});
