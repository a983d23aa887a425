// The exporter as a node runs it (the built CLI, a child process) while units come and go under its
// sysroot: a unit that appears after it started is served, one that vanishes is said gone, and one
// that comes back under another driver build is labelled and read as it now is.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Sampler } from '../../src/export/sampler.js';
import { openHwBackend } from '../../src/hw/index.js';
import { value } from '../export/harness.js';
import { startExporterChild } from '../support/child.js';
import { runCli } from '../support/cli.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const startExport = (args: string[]) => startExporterChild(args, children);

describe('export while units come and go', () => {
  it('serves a unit that appears after it started, says it gone when it vanishes, and its new flavour when it is back', async () => {
    const root = mkdtempSync(join(tmpdir(), 'truth-units-'));
    dirs.push(root);
    const x = await startExport(['--sysroot', root, 'export', '--listen', '127.0.0.1:0', '--min-interval-ms', '0']);
    expect(value(await x.scrape(), 'hfi1_sdma_units')).toBe(0);

    // The driver loads: the unit appears.
    let w = await runCli(['emu', 'write', '--sysroot', root, '--engines', '2', '--at-ms', '50']);
    expect(w.code, w.stderr).toBe(0);
    let body = await x.scrape();
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}'), body).toBe(1);
    expect(value(body, 'hfi1_sdma_units')).toBe(1);
    expect(body).toMatch(/^hfi1_sdma_unit_info\{unit="hfi1_0",name="Omni-Path 100",[^}]*driver="upstream",ports="1"\} 1$/m);

    // The driver unloads: the unit and its debugfs vanish (the PCI device stays); said gone, with no engine series.
    rmSync(join(root, 'sys/class/infiniband/hfi1_0'), { recursive: true });
    rmSync(join(root, 'sys/kernel/debug/hfi1'), { recursive: true });
    body = await x.scrape();
    // Listed afresh, the unit is no longer there: still gone, not forgotten.
    body = await x.scrape();
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(0);
    expect(value(body, 'hfi1_sdma_device_gone{unit="hfi1_0"}')).toBe(1);
    expect(body).not.toMatch(/engine="/);

    // The Cornelis build loads on a CN5000 with two ports: the same name, another unit.
    w = await runCli([
      'emu',
      'write',
      '--sysroot',
      root,
      '--chip',
      'jkr',
      '--driver',
      'cornelis',
      '--ports',
      '2',
      '--engines',
      '3',
    ]);
    expect(w.code, w.stderr).toBe(0);
    body = await x.scrape();
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}'), body).toBe(1);
    expect(value(body, 'hfi1_sdma_device_gone{unit="hfi1_0"}')).toBe(0);
    expect(body).toMatch(
      /^hfi1_sdma_unit_info\{unit="hfi1_0",name="CN5000",module="hfi1",chip="jkr",driver="cornelis",ports="2"\} 1$/m,
    );
    expect(body.match(/^hfi1_sdma_unit_info\{/gm)).toHaveLength(1);
    expect(new Set([...body.matchAll(/engine="(\d+)"/g)].map((m) => m[1]))).toEqual(new Set(['0', '1', '2']));
    x.child.kill('SIGTERM');
  });

  /** A Sampler over `root` that lists units afresh as the exporter does; `info()` runs a round. */
  async function sampled(root: string) {
    const clock = { now: 0 };
    const opened = await openHwBackend({ sysroot: root });
    const sampler = new Sampler({
      backend: opened,
      buildInfo: { version: '0.0.0', backend: 'hw' },
      minIntervalMs: 0,
      stallMs: 500,
      nowMs: () => clock.now,
      log: () => {},
      reopen: () => openHwBackend({ sysroot: root }),
      rediscoverMs: 30_000,
    });
    const round = async () => {
      await sampler.refresh();
      const text = await sampler.metrics.text.metrics();
      return { info: text.match(/^hfi1_sdma_unit_info\{.*$/gm) ?? [], up: text.match(/^hfi1_sdma_up\{.*$/gm) ?? [] };
    };
    const close = async () => {
      await sampler.close();
      await opened.close();
    };
    return { clock, round, close };
  }

  it('a driver reloaded between two rounds is seen by the periodic listing, within its period', async () => {
    const root = mkdtempSync(join(tmpdir(), 'truth-units-'));
    dirs.push(root);
    let w = await runCli(['emu', 'write', '--sysroot', root, '--engines', '2']);
    expect(w.code, w.stderr).toBe(0);
    const s = await sampled(root);
    try {
      expect((await s.round()).info).toEqual([
        'hfi1_sdma_unit_info{unit="hfi1_0",name="Omni-Path 100",module="hfi1",chip="wfr",driver="upstream",ports="1"} 1',
      ]);
      // The Cornelis build replaces upstream hfi1 between two rounds: same unit, same files, every read answers.
      w = await runCli(['emu', 'write', '--sysroot', root, '--driver', 'cornelis', '--engines', '2']);
      expect(w.code, w.stderr).toBe(0);
      s.clock.now += 30_000;
      const r = await s.round();
      expect(r.info).toEqual([
        'hfi1_sdma_unit_info{unit="hfi1_0",name="Omni-Path 100",module="hfi1",chip="wfr",driver="cornelis",ports="1"} 1',
      ]);
      expect(r.up).toEqual(['hfi1_sdma_up{unit="hfi1_0"} 1']);
    } finally {
      await s.close();
    }
  });

  it('a unit renamed on the same PCI device (hfi1 unloaded, hfi2 loaded) is not said gone', async () => {
    const root = mkdtempSync(join(tmpdir(), 'truth-units-'));
    dirs.push(root);
    let w = await runCli(['emu', 'write', '--sysroot', root, '--chip', 'jkr', '--driver', 'cornelis', '--engines', '2']);
    expect(w.code, w.stderr).toBe(0);
    const s = await sampled(root);
    try {
      expect((await s.round()).up).toEqual(['hfi1_sdma_up{unit="hfi1_0"} 1']);
      rmSync(join(root, 'sys/class/infiniband/hfi1_0'), { recursive: true });
      rmSync(join(root, 'sys/kernel/debug/hfi1'), { recursive: true });
      w = await runCli(['emu', 'write', '--sysroot', root, '--chip', 'jkr', '--driver', 'hfi2', '--engines', '8-9']);
      expect(w.code, w.stderr).toBe(0);
      // The old unit's reads fail (its files are gone); the round after lists the units afresh.
      await s.round();
      const r = await s.round();
      expect(r.info).toEqual([
        'hfi1_sdma_unit_info{unit="hfi2_0",name="CN5000",module="hfi2",chip="jkr",driver="hfi2",ports="1"} 1',
      ]);
      expect(r.up).toEqual(['hfi1_sdma_up{unit="hfi2_0"} 1']);
    } finally {
      await s.close();
    }
  });
});
