import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SEND_DMA_CTRL, SEND_DMA_HEAD, SEND_DMA_LEN_GEN } from '../../src/progress/constants.js';
import { writeBarImage } from '../hw/bar-image.js';
import { writeTree } from '../hw/sysroot.js';
import { runCli } from '../support/cli.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'snap-test-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The engines of a document, without what differs between a live read and its recording: times and provenance. */
function stripTimes(j: {
  backend?: string;
  provenance?: unknown;
  units: { engines: { timeMs: number; sources: string[]; reason?: string }[] }[];
}) {
  // A recording of one instant cannot say warming-up (nothing will move): its reason differs, not its engines. Nor
  // can it confirm a strand (null), where the live read, watching until its engines are judged, can (0).
  for (const u of j.units)
    for (const e of u.engines) Object.assign(e, { timeMs: 0, reason: '', strandedWaiters: null, probablyStrandedWaiters: null });
  // The stamp says when each document was written and of which host: the capture's, the tree's.
  const { backend: _b, provenance: _p, host: _h, time: _t, toolVersion: _v, ...rest } = j as typeof j & Record<string, unknown>;
  return rest;
}

describe('snapshot', () => {
  it('captures a sysroot and reads back the same engines through --sysroot FILE.tar.gz', async () => {
    const root = tmp();
    writeTree(root, {
      engines: 2,
      bar: (p) =>
        writeBarImage(
          p,
          new Map([
            [SEND_DMA_CTRL, 0x9n],
            [SEND_DMA_LEN_GEN, 0x40800n],
            [SEND_DMA_HEAD + 0x100, 0x2an],
          ]),
        ),
    });
    const out = join(tmp(), 'node17.tar.gz');
    const r = await runCli(['--sysroot', root, 'snapshot', '-o', out, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const m = JSON.parse(r.stdout);
    expect(m).toMatchObject({ format: 'hfi1-sdma-snapshot/2', units: [{ name: 'hfi1_0', pci: '0000:05:00.0' }] });
    expect(m.instants).toHaveLength(1);
    expect(m.instants[0].barBlocks).toEqual([
      {
        file: 'sys/bus/pci/devices/0000:05:00.0/resource0.sdma-csr',
        resource0: 'sys/bus/pci/devices/0000:05:00.0/resource0',
        offset: 0x1a00000,
        length: 4096,
      },
    ]);
    expect(m.instants[0].sources.filter((s: { captured: boolean }) => s.captured).map((s: { path: string }) => s.path)).toEqual(
      expect.arrayContaining(['sys/kernel/debug/hfi1/hfi1_0/sdes', 'proc/interrupts', 'sys/class/infiniband/hfi1_0/sdma1/vl']),
    );
    const live = await runCli(['--sysroot', root, '--backend', 'hw', 'engines', '--json']);
    const back = await runCli(['--sysroot', out, '--backend', 'hw', 'engines', '--json']);
    expect(back.code).toBe(0);
    const doc = JSON.parse(back.stdout);
    // The recording says what it is: a snapshot, of which host, captured when, by which version.
    expect(doc.backend).toBe('snapshot');
    expect(doc.provenance).toMatchObject({
      backend: 'snapshot',
      source: out,
      instants: 1,
      emulated: false,
      toolVersion: expect.any(String),
    });
    expect(typeof doc.provenance.host).toBe('string');
    expect(Date.parse(doc.provenance.capturedAt)).toBeGreaterThan(0);
    expect(stripTimes(doc)).toEqual(stripTimes(JSON.parse(live.stdout)));
    const show = await runCli(['--sysroot', out, 'show', '1', '--json']);
    expect(JSON.parse(show.stdout).sources).toContain('bar');
  });

  it('leaves no file behind when there is nothing to capture, and refuses a bad -o', async () => {
    const outDir = tmp();
    const r = await runCli(['--sysroot', tmp(), '--backend', 'hw', 'snapshot', '-o', join(outDir, 'x.tar.gz')]);
    expect(r.code).toBe(66);
    expect(r.stderr).toMatch(/no hfi1 or hfi2 unit/);
    expect(readdirSync(outDir)).toEqual([]);
    expect((await runCli(['snapshot', '-o', 'x.zip'])).code).toBe(64);
  });

  it('an explicit sysroot is never replaced by the emulator, and a snapshot is not captured again', async () => {
    const outDir = tmp();
    const empty = await runCli(['--sysroot', tmp(), 'snapshot', '-o', join(outDir, 'x.tar.gz')]);
    expect(empty.code).toBe(66);
    expect(empty.stderr).toMatch(/no hfi1 or hfi2 unit under .*: nothing to capture/);
    const snap = join(outDir, 'y.tar.gz');
    writeFileSync(snap, '');
    const again = await runCli(['--sysroot', snap, 'snapshot', '-o', join(outDir, 'z.tar.gz')]);
    expect(again.code).toBe(64);
    expect(again.stderr).toContain(`--sysroot ${snap} is a snapshot already`);
    expect(readdirSync(outDir)).toEqual(['y.tar.gz']);
  });

  it('captures the emulator’s host with --backend emu, and reads it back as the emulator’s, not a host’s', async () => {
    const out = join(tmp(), 'emu.tar.gz');
    const r = await runCli(['--backend', 'emu', '--engines', '2', '--at-ms', '10', 'snapshot', '-o', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const back = JSON.parse((await runCli(['--sysroot', out, 'engines', '--json'])).stdout);
    expect(back.backend).toBe('snapshot');
    expect(back.provenance.emulated).toBe(true);
    const text = (await runCli(['--sysroot', out, 'engines'])).stdout;
    expect(text).toMatch(
      /backend snapshot \S+emu\.tar\.gz \(host [^,]+, captured [0-9-]+ [0-9:]+ UTC, 1 instant, by hfi1-sdma [^,]+, emulated: not an adapter\)/,
    );
    expect(back.units[0].engines.map((e: { state: string }) => e.state)).toEqual(['s99_Running', 's99_Running']);
    expect(back.units[0].engines[0].sources).toEqual(expect.arrayContaining(['sdes', 'bar', 'counters']));
  });

  it('refuses a file that is not a snapshot with exit 65', async () => {
    const f = join(tmp(), 'bogus.tar.gz');
    writeFileSync(f, 'not a tarball');
    const r = await runCli(['--sysroot', f, 'engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toMatch(/bogus\.tar\.gz/);
  });
});
