// The built CLI, run as a user would, against the emulator: output, JSON shapes, exit codes. A child process
// where the process is the point (the exit status, standard input and output, a signal, the bin's own answer);
// the same commands' other answers in-process (main() with captured streams, the environment the CLI sees handed
// in), as fast as the code runs.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runChild, startExporterChild } from '../support/child.js';
import { runCli } from '../support/cli.js';

/** The fallback is for a host without hfi1: a live host with a unit shows the unit instead. */
const HOST_HAS_HFI1 =
  existsSync('/sys/class/infiniband') && readdirSync('/sys/class/infiniband').some((n) => n.startsWith('hfi1_'));

const EMU = ['--backend', 'emu', '--engines', '4', '--at-ms', '20'];
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('hfi1-sdma as a child process', () => {
  it('--version (the bin answers it before loading the command line) and --help', async () => {
    const v = runChild(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    const h = await runCli(['--help']);
    expect(h.code).toBe(0);
    for (const c of [
      'engines',
      'show',
      'ring',
      'watch',
      'progress',
      'fit',
      'decode',
      'log',
      'health',
      'doctor',
      'snapshot',
      'export',
    ]) {
      expect(h.stdout).toContain(c);
    }
  });

  it.skipIf(HOST_HAS_HFI1)(
    'engines falls back to the emulator on this host, saying so once on stderr (skipped: this host has an hfi1 unit)',
    async () => {
      const r = await runCli(['--engines', '4', '--at-ms', '20', 'engines', '--json']);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/using the emulator/);
      const j = JSON.parse(r.stdout);
      expect(j.backend).toBe('emu');
      expect(j.units[0].engines).toHaveLength(4);
      expect(j.units[0].engines.every((e: { state: string }) => e.state === 's99_Running')).toBe(true);
    },
  );

  it.skipIf(HOST_HAS_HFI1)(
    'snapshot on a host without a unit captures nothing (exit 66) and never the emulator (skipped: this host has an hfi1 unit)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'e2e-snap-'));
      try {
        const r = await runCli(['snapshot', '-o', join(dir, 'x.tar.gz')]);
        expect(r.code).toBe(66);
        expect(r.stderr).toMatch(/no hfi1 or hfi2 unit under .*: nothing to capture/);
        expect(readdirSync(dir)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('show, ring, fit and decode', async () => {
    const show = await runCli([...EMU, 'show', '2']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/CTRL\s+0x9 ENABLE\|INT_ENABLE/);
    const ring = await runCli([...EMU, 'ring', '2', '--json']);
    expect(ring.code).toBe(0);
    const rj = JSON.parse(ring.stdout);
    expect(rj).toMatchObject({ engine: 2, descqCnt: 2048 });
    for (const d of rj.descriptors) expect(d.flags).toMatch(/^[I-][H-][F-][L-]$/);
    const fit = await runCli([...EMU, 'fit', '1', '--num-desc', '9', '--json']);
    expect(JSON.parse(fit.stdout)).toMatchObject({ descqCnt: 2048, numDesc: 9 });
    const dec = await runCli(['decode', '0xc040000000100000', '0x5', '--json']);
    expect(JSON.parse(dec.stdout)).toMatchObject({ first: true, last: true, len: 64, gen: 1 });
  });

  it('watch --json prints one NDJSON line per engine per sample', async () => {
    const r = await runCli([...EMU, 'watch', '--json', '--count', '3', '--interval-ms', '50']);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(12);
    expect(lines.map((l) => l.verdict)).not.toContain('stalled');
    expect(Object.keys(lines[0])).toEqual(
      expect.arrayContaining(['t', 'engine', 'verdict', 'reason', 'descPerSec', 'txPerSec', 'stallCount', 'stallMaxMs']),
    );
  });

  it('progress exits 0 on a busy engine and 1 on an idle one', async () => {
    const busy = await runCli([
      ...EMU,
      'progress',
      '0',
      '--num-desc',
      '4',
      '--timeout-ms',
      '1000',
      '--interval-ms',
      '10',
      '--json',
    ]);
    expect(busy.code).toBe(0);
    expect(JSON.parse(busy.stdout)).toMatchObject({ satisfied: true, result: 1 });
    const idle = await runCli([
      '--backend',
      'emu',
      '--engines',
      '2',
      '--workload',
      'idle',
      '--at-ms',
      '5',
      'progress',
      '0',
      '--num-desc',
      '4',
      '--timeout-ms',
      '200',
    ]);
    expect(idle.code).toBe(1);
    expect(idle.stdout).toMatch(/no movement/);
  });

  it('health is OK on a healthy emulator and CRITICAL with a stop-fetch fault (the status of the process)', async () => {
    const ok = await runCli([...EMU, '--workload', 'qp:gbps=10', 'health', '--stall-ms', '200']);
    expect(ok.stdout).toMatch(/^HFI1-SDMA OK/);
    expect(ok.code).toBe(0);
    const bad = runChild([
      '--backend',
      'emu',
      '--engines',
      '4',
      '--at-ms',
      '20',
      '--workload',
      'qp:gbps=10',
      '--fault',
      'stop-fetch@30:3',
      'health',
      '--stall-ms',
      '200',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(/^HFI1-SDMA CRITICAL/);
    expect(bad.stdout).toMatch(/CRITICAL: SD101 hfi1_0 sdma3 stalled \(chip-not-fetching\)/);
  });

  it('log reads standard input', () => {
    const text = readFileSync(join(ROOT, 'test/fixtures/kmsg/engine-error.dmesg'), 'utf8');
    const r = runChild(['log', '-', '--json'], { input: text });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).events[0]).toMatchObject({ kind: 'engine-error', engine: 2 });
  });

  it('doctor explains this host (exit 1: no unit is a failed check)', async () => {
    const d = mkdtempSync(join(tmpdir(), 'e2e-'));
    dirs.push(d);
    const r = await runCli(['--sysroot', d, 'doctor']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/no hfi1 or hfi2 unit found/);
    expect(r.stdout).toMatch(/^ {2}FAIL {2}units$/m);
  });

  it('bad input: usage 64 (the status of the process), no such engine 66, missing file 66', async () => {
    expect(runChild(['engines', '--bogus']).code).toBe(64);
    expect((await runCli(['fit', '--descq-cnt', '3000', '--head', '0', '--tail', '0', '--num-desc', '1'])).code).toBe(64);
    const ne = await runCli([...EMU, 'show', '7']);
    expect(ne.code).toBe(66);
    expect(ne.stderr).toMatch(/engines 0-3/);
    expect((await runCli(['log', '/nonexistent'])).code).toBe(66);
    const fault = await runCli(['--backend', 'emu', '--fault', 'melt@5', 'engines']);
    expect(fault.code).toBe(64);
    expect(fault.stderr).toMatch(/stop-fetch/);
  });

  it('completion prints a script', async () => {
    const r = await runCli(['completion']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/hfi1-sdma/);
  });

  it('export serves metrics and exits 0 on SIGTERM', async () => {
    // An idle host: what is served and how the process stops do not depend on the load.
    const x = await startExporterChild([...EMU, '--workload', 'idle', 'export', '--listen', '127.0.0.1:0'], children);
    const body = await x.scrape();
    expect(body).toMatch(/hfi1_sdma_ring_size_descriptors\{unit="hfi1_0"\} 2048/);
    expect(body).toMatch(/hfi1_sdma_free_descriptors\{unit="hfi1_0",engine="3"\} \d+/);
    const exited = new Promise<number | null>((resolve) => x.child.on('exit', (code) => resolve(code)));
    x.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
