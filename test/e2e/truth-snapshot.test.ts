// A snapshot of an hfi2 window (engines 8-11 of a CN5000) with a QP stranded on engine 11, replayed:
// every command names the same absolute engine and says how long the QP has waited, as it did live.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExporterChild } from '../support/child.js';
import { runCli } from '../support/cli.js';

const HOST = ['--backend', 'emu', '--chip', 'jkr', '--driver', 'hfi2', '--engines', '8-11', '--ports', '2'];
const FAULT = ['--workload', 'qp:gbps=10', '--fault', 'lost-wakeup@300:11', '--at-ms', '600'];
// Five instants 200 ms apart: the QP sleeps through all of them.
const SPAN_MS = 800;
let dir = '';
let snap = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'truth-snapshot-'));
  snap = join(dir, 'h.tar.gz');
  const r = await runCli([...HOST, ...FAULT, 'snapshot', '-o', snap, '--samples', '5', '--interval-ms', '200']);
  expect(r.code, r.stderr).toBe(0);
});
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const STRANDED_11 = /^hfi1_sdma_stranded_waiters\{unit="hfi2_0",engine="11"\} 1$/m;

describe('a replayed snapshot of an hfi2 window tells what the host showed', () => {
  it('waiters: the stranded QP on engine 11 has waited the whole recording, not 0 ms', async () => {
    const r = await runCli(['--sysroot', snap, 'waiters', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const unit = JSON.parse(r.stdout).units[0];
    const stranded = unit.waiters.filter((w: { verdict: string }) => w.verdict === 'stranded');
    expect(stranded.map((w: { engine: number; kind: string }) => `${w.kind}@${w.engine}`)).toEqual(['qp@11']);
    expect(stranded[0].ageMs).toBeGreaterThanOrEqual(SPAN_MS);
    for (const w of unit.waiters) expect(w.engine === null || (w.engine >= 8 && w.engine <= 11)).toBe(true);
    const text = await runCli(['--sysroot', snap, 'waiters']);
    expect(text.stdout).toMatch(/^hfi2_0\/11 +qp .*dma-desc \((?!0ms)[^)]+\) +STRANDED/m);
  });

  it('health and engines name engine 11 of the window, never a position 0..3', async () => {
    const h = await runCli(['--sysroot', snap, 'health', '--stall-ms', '500']);
    expect(h.code, h.stdout).toBe(2);
    expect(h.stdout).toMatch(
      /^CRITICAL: SD201 hfi2_0 sdma11 QP 0x[0-9a-f]+ RTS \(pid \d+ verbs_rank_\d+, user hpcuser\) stranded \(lost-wakeup\)/m,
    );
    expect(h.stdout).not.toMatch(/sdma[0-7][^0-9]/);
    const e = await runCli(['--sysroot', snap, 'engines', '--json']);
    const engines = JSON.parse(e.stdout).units[0].engines;
    expect(engines.map((x: { engine: number }) => x.engine)).toEqual([8, 9, 10, 11]);
    expect(engines.find((x: { engine: number }) => x.engine === 11)).toMatchObject({ waiters: 1, strandedWaiters: 1 });
  });

  it('export --textfile replays every instant: the strand on engine 11 is served as recorded, not as 0', async () => {
    const out = join(dir, 'snap.prom');
    const r = await runCli(['--sysroot', snap, 'export', '--textfile', out]);
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(STRANDED_11);
    expect(text.match(/^hfi1_sdma_stranded_waiters\{[^}]*\} 1$/gm)).toHaveLength(1);
    // A snapshot of the emulator is said to be one.
    expect(text).toMatch(/^hfi1_sdma_build_info\{version="[^"]+",backend="snapshot",emulated="true"\} 1$/m);
    // --strand-ms is the rule's, also for the textfile: 800 ms of recording cannot hold 1000 ms.
    const longer = join(dir, 'longer.prom');
    expect((await runCli(['--sysroot', snap, 'export', '--textfile', longer, '--strand-ms', '1000'])).code).toBe(0);
    expect(readFileSync(longer, 'utf8')).toMatch(/^hfi1_sdma_stranded_waiters\{unit="hfi2_0",engine="11"\} 0$/m);
  });

  it('export serving the snapshot reads its next instant each scrape and serves the strand from the third on', async () => {
    const x = await startExporterChild(
      ['--sysroot', snap, 'export', '--listen', '127.0.0.1:0', '--min-interval-ms', '0'],
      children,
    );
    const bodies: string[] = [];
    for (let i = 0; i < 6; i++) bodies.push(await x.scrape());
    // Five instants: the third and later scrapes can confirm it; past the last, the last instant stays.
    for (const b of bodies.slice(0, 2)) expect(b).not.toMatch(/^hfi1_sdma_stranded_waiters/m);
    for (const b of bodies.slice(2)) expect(b).toMatch(STRANDED_11);
    x.child.kill('SIGTERM');
  });

  it('health on a capture of 2 instants is UNKNOWN, not OK: the QP on engine 11 cannot be confirmed stranded yet', async () => {
    const two = join(dir, 'two.tar.gz');
    const c = await runCli([...HOST, ...FAULT, 'snapshot', '-o', two, '--samples', '2', '--interval-ms', '200']);
    expect(c.code, c.stderr).toBe(0);
    const w = await runCli(['--sysroot', two, 'waiters', '--json']);
    const qp = JSON.parse(w.stdout).units[0].waiters.find((x: { engine: number }) => x.engine === 11);
    expect(qp).toMatchObject({ kind: 'qp', verdict: 'waiting', reason: 'confirming' });
    const h = await runCli(['--sysroot', two, 'health', '--stall-ms', '500']);
    expect(h.code, h.stdout).toBe(3);
    expect(h.stdout).toMatch(
      /^HFI1-SDMA UNKNOWN - snapshot .*a capture of 2 instants cannot confirm a stall or a stranded waiter/,
    );
  });
});
