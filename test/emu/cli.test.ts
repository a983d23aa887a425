// `emu run|write` through the CLI's main() with captured streams.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const LINE_RATE = ['emu', 'run', '--workload', 'line-rate', '--duration-ms', '150', '--json'];

async function runJson(args: string[]) {
  const r = await runCli(args);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe('emu run --json', () => {
  it('is deterministic per seed, conserves txreqs and loses no wake-up', async () => {
    const a = await runJson([...LINE_RATE, '--seed', '7']);
    const b = await runJson([...LINE_RATE, '--seed', '7']);
    const c = await runJson([...LINE_RATE, '--seed', '8']);
    const totals = (j: Record<string, unknown>) => ({ ...j, wallMs: 0, time: '', engines: undefined });
    expect(totals(b)).toEqual(totals(a));
    expect(c.logHash).not.toBe(a.logHash);
    expect(a.logHash).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toMatchObject({ seed: 7, workload: 'line-rate', virtualMs: 150, lostWakeups: 0, invariantViolations: [] });
    expect(a.txSubmitted).toBe(a.txCompleted + a.txAborted + a.txInFlight);
    // 100 Gb/s of 8 KiB packets as 2 descriptors: about 3 M descriptors per second.
    expect(a.descriptors / 0.15).toBeGreaterThan(2.8e6);
    expect(a.descriptors / 0.15).toBeLessThan(3.2e6);
    expect(a.engines).toHaveLength(16);
    expect(a.engines[0]).toMatchObject({ engine: 0, state: 's99_Running', seqSource: 'head-lock', sources: ['model'], vl: 0 });
  });

  it('with engine-error:1@50 aborts txreqs and ends with every engine back in s99_Running', async () => {
    const j = await runJson([...LINE_RATE, '--seed', '7', '--fault', 'engine-error:1@50']);
    expect(j.txAborted).toBeGreaterThan(0);
    expect(j.invariantViolations).toEqual([]);
    expect(j.engines.map((e: { state: string }) => e.state)).toEqual(Array(16).fill('s99_Running'));
    expect(j.engines.every((e: { counters: { errCount: number } }) => e.counters.errCount === 2)).toBe(true);
  });

  it('prints totals, a per-engine table and the invariant report without --json', async () => {
    const r = await runCli(['emu', 'run', '--workload', 'qp', '--engines', '4', '--duration-ms', '20']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^workload\s+qp \(seed 1\)$/m);
    expect(r.stdout).toMatch(/^txreqs\s+\d+ submitted = \d+ completed \+ 0 aborted \+ \d+ in flight$/m);
    expect(r.stdout).toMatch(/^\s+3\s+s99_Running/m);
    expect(r.stdout).toMatch(/invariants: all hold/);
  });

  it('refuses a bad fault or workload with exit 64 and the valid names', async () => {
    const f = await runCli(['emu', 'run', '--fault', 'meltdown@5']);
    expect(f.code).toBe(64);
    expect(f.stderr).toMatch(/unknown fault "meltdown".*stop-fetch, lost-interrupt/);
    const w = await runCli(['emu', 'run', '--workload', 'bogus']);
    expect(w.code).toBe(64);
    expect(w.stderr).toMatch(/unknown workload "bogus".*mixed, line-rate/);
  });
});

describe('emu write', () => {
  it('writes the sysroot once at --at-ms, and needs --sysroot', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hfi1-emu-cli-'));
    try {
      const r = await runCli(['emu', 'write', '--sysroot', dir, '--at-ms', '20', '--engines', '2', '--json']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ sysroot: dir, virtualMs: 20 });
      const sdes = readFileSync(join(dir, 'sys/kernel/debug/hfi1/hfi1_0/sdes'), 'utf8');
      expect(sdes).toMatch(/^SDE 0 CPU 0 STE s99_Running C 0x9 /);
      expect(sdes.match(/^SDE /gm)).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const none = await runCli(['emu', 'write']);
    expect(none.code).toBe(64);
    expect(none.stderr).toMatch(/needs --sysroot DIR/);
  });
});
