// A host where no kind of waiter can be seen (no qp_stats, no /proc to find PSM writers in, no sys/class/net to find
// IPoIB netdevs in):
// no command and no metric may say "0 waiters" or "0 stranded" there; with qp_stats it may.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seriesOf, sysrootMetrics } from '../export/harness.js';
import { runCli } from '../support/cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A rendered host of 2 engines with QP senders only; without qp_stats, /proc and sys/class/net when `blind`. */
async function host(blind: boolean): Promise<string> {
  const root = join(mkdtempSync(join(tmpdir(), 'truth-visibility-')), 'root');
  dirs.push(join(root, '..'));
  const w = await runCli(['emu', 'write', '--sysroot', root, '--engines', '2', '--workload', 'qp:gbps=10', '--at-ms', '100']);
  expect(w.code, w.stderr).toBe(0);
  if (blind) {
    rmSync(join(root, 'sys/kernel/debug/hfi1/hfi1_0/qp_stats'));
    // The emulator lists every process it runs; a tree without /proc shows none, so no PSM writer can be seen.
    rmSync(join(root, 'proc'), { recursive: true });
    // IPoIB queues are found from their netdevs: without sys/class/net none can be seen.
    rmSync(join(root, 'sys/class/net'), { recursive: true });
  }
  return root;
}

/** The exporter's metrics after four rounds (enough to confirm a strand) over the rendered host. */
const exported = (root: string): Promise<string> => sysrootMetrics(root, 4, 150);

describe('no kind of waiter visible', () => {
  it('engines shows - and null, not 0 waiters', async () => {
    const root = await host(true);
    const j = await runCli(['--sysroot', root, 'engines', '--json']);
    expect(j.code, j.stderr).toBe(0);
    for (const e of JSON.parse(j.stdout).units[0].engines) expect(e).toMatchObject({ waiters: null, strandedWaiters: null });
    const t = await runCli(['--sysroot', root, 'engines']);
    const rows = t.stdout.split('\n').filter((l) => l.startsWith('hfi1_0/'));
    expect(rows).toHaveLength(2);
    const waitColumn =
      t.stdout
        .split('\n')
        .find((l) => l.startsWith('engine'))
        ?.split(/\s+/)
        .indexOf('wait') ?? -1;
    for (const r of rows) expect(r.split(/\s+/)[waitColumn]).toBe('-');
  });

  it('waiters says no kind can be seen (not "no waiters") and exits 69', async () => {
    const root = await host(true);
    const r = await runCli(['--sysroot', root, 'waiters', '--count', '1']);
    expect(r.code).toBe(69);
    expect(r.stdout).not.toMatch(/no waiters/);
    expect(r.stdout).toMatch(/no kind of waiter can be seen here/);
    expect(r.stdout).toMatch(/note: hfi1_0: qp waiters not visible: no qp_stats/);
    expect(r.stderr).toMatch(/no kind of waiter can be seen on the selected units/);
  });

  it('the exporter serves no waiter or stranded series, only that no kind is visible', async () => {
    const text = await exported(await host(true));
    expect(seriesOf(text, 'hfi1_sdma_waiters')).toEqual([]);
    expect(seriesOf(text, 'hfi1_sdma_stranded_waiters')).toEqual([]);
    expect(seriesOf(text, 'hfi1_sdma_probably_stranded_waiters')).toEqual([]);
    expect(seriesOf(text, 'hfi1_sdma_waiters_visible')).toEqual([
      'hfi1_sdma_waiters_visible{unit="hfi1_0",kind="qp"} 0',
      'hfi1_sdma_waiters_visible{unit="hfi1_0",kind="psm"} 0',
      'hfi1_sdma_waiters_visible{unit="hfi1_0",kind="ipoib"} 0',
    ]);
  });

  it('with qp_stats the same host counts its QP waiters and serves stranded counts', async () => {
    const root = await host(false);
    const text = await exported(root);
    expect(seriesOf(text, 'hfi1_sdma_stranded_waiters')).toEqual([
      'hfi1_sdma_stranded_waiters{unit="hfi1_0",engine="0"} 0',
      'hfi1_sdma_stranded_waiters{unit="hfi1_0",engine="1"} 0',
    ]);
    const j = await runCli(['--sysroot', root, 'engines', '--json']);
    for (const e of JSON.parse(j.stdout).units[0].engines) expect(typeof e.waiters).toBe('number');
    expect((await runCli(['--sysroot', root, 'waiters', '--count', '1'])).code).toBe(0);
  });
});
