// Snapshots as recordings: N instants captured from an emulated host at successive virtual times
// are played back instant by instant with their recorded times; version-1 snapshots still read
// as one frozen instant; errors inside a snapshot name the archive and the entry.
import {
  closeSync,
  copyFileSync,
  cpSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineSample } from '../../src/backend.js';
import { emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { ParseError } from '../../src/errors.js';
import { openHwBackend } from '../../src/hw/index.js';
import { SDMA_CSR_BLOCK_SIZE, SDMA_CSR_BLOCK_START, SEND_DMA_CTRL, SEND_DMA_LEN_GEN } from '../../src/progress/constants.js';
import { openSnapshotBackend } from '../../src/snapshot/backend.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';
import { openSnapshot } from '../../src/snapshot/open.js';
import { writeBarImage } from '../hw/bar-image.js';
import { BDF, writeTree } from '../hw/sysroot.js';
import { runCli } from '../support/cli.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'snap-rec-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const META = { host: 'node17', toolVersion: '0.0.0-test', now: new Date('2026-01-02T03:04:05.000Z') };
const untimed = (s: EngineSample[]) => s.map((e) => ({ ...e, timeMs: 0 }));

describe('a snapshot of several instants is a recording', () => {
  it('plays back each instant with its recorded time, the same samples the host gave then', async () => {
    const host = tmp();
    const u = emuUnitFromOptions({ seed: 5, engines: 4, fault: [], descqCnt: undefined, workload: undefined, atMs: undefined });
    u.runUntilMs(20);
    await writeSysroot(u, host);
    const live: EngineSample[][] = [];
    const record = async () => {
      const b = await openHwBackend({ sysroot: host });
      live.push(await (await b.unit(0)).sample());
      await b.close();
    };
    await record();
    const out = join(tmp(), 'node17.tar.gz');
    const m = await captureSnapshot(host, out, META, {
      samples: 3,
      intervalMs: 50,
      clock: { nowMs: () => u.nowMs },
      sleep: async (ms) => {
        u.runUntilMs(u.nowMs + ms);
        await writeSysroot(u, host);
        await record();
      },
    });
    expect(m.format).toBe('hfi1-sdma-snapshot/2');
    expect(m.instants.map((i) => i.timeMs)).toEqual([0, 50, 100]);
    expect(m.instants.map((i) => i.time)).toEqual([
      '2026-01-02T03:04:05.000Z',
      '2026-01-02T03:04:05.050Z',
      '2026-01-02T03:04:05.100Z',
    ]);
    // Module parameters and the PCI identity are stored once.
    expect(m.once).toEqual(
      expect.arrayContaining(['sys/module/hfi1/parameters/sdma_descq_cnt', `sys/bus/pci/devices/${u.info.pci}/vendor`]),
    );
    expect(m.instants[1]?.sources.map((s) => s.path)).not.toContain('sys/module/hfi1/parameters/sdma_descq_cnt');
    // The instants differ, so playing back the wrong one would show.
    expect(live[1]?.map((e) => e.sw?.descqHead)).not.toEqual(live[0]?.map((e) => e.sw?.descqHead));

    const scratch = tmp();
    const b = await openSnapshotBackend(out, { tmpDir: scratch });
    const rec = b.recording;
    expect(rec?.source).toBe(out);
    expect(rec?.timesMs).toEqual([0, 50, 100]);
    const unit = await b.unit(0);
    for (let k = 0; k < 3; k++) {
      expect(rec?.position()).toBe(k);
      const got = await unit.sample();
      // Sample times are the recorded ones: the capture's start (its manifest time) plus the instant's offset.
      expect(got.every((e) => e.timeMs === Date.parse('2026-01-02T03:04:05.000Z') + k * 50)).toBe(true);
      expect(b.origin?.capturedAtMs).toBe(Date.parse('2026-01-02T03:04:05.000Z'));
      expect(untimed(got)).toEqual(untimed(live[k] as EngineSample[]));
      expect((await unit.ring(2)).head).toBe(live[k]?.[2]?.sw?.swHead);
      expect(await rec?.advance()).toBe(k < 2);
    }
    expect(rec?.position()).toBe(2);
    expect(await rec?.advance()).toBe(false);
    expect(unit.info.name).toBe('hfi1_0');
    await b.close();
    await b.close();
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('a one-instant snapshot has one time: a frozen capture', async () => {
    const host = tmp();
    writeTree(host, { engines: 2 });
    const out = join(tmp(), 'one.tar.gz');
    expect((await runCli(['--sysroot', host, '--backend', 'hw', 'snapshot', '-o', out])).code).toBe(0);
    const b = await openSnapshotBackend(out, { tmpDir: tmp() });
    expect(b.recording?.timesMs).toEqual([0]);
    expect(await b.recording?.advance()).toBe(false);
    const at = b.origin?.capturedAtMs as number;
    expect(at).toBeGreaterThan(0);
    expect((await (await b.unit(0)).sample()).map((e) => e.timeMs)).toEqual([at, at]);
    await b.close();
  });
});

/**
 * A version-1 snapshot as the earlier tool wrote it (files at the root, the device link, barBlocks at the top) of a
 * two-engine host; `block` changes the SDMA CSR block it stores. Returns the archive and the host's tree.
 */
async function versionOneSnapshot(block?: (bar: Buffer) => void): Promise<{ out: string; host: string }> {
  const host = tmp();
  writeTree(host, {
    engines: 2,
    bar: (p) =>
      writeBarImage(
        p,
        new Map([
          [SEND_DMA_CTRL, 0x9n],
          [SEND_DMA_LEN_GEN, 0x40800n],
        ]),
      ),
  });
  const stage = tmp();
  const r0 = `sys/bus/pci/devices/${BDF}/resource0`;
  // The tree without its BAR image (64 MiB, mostly holes), which the capture replaces by the SDMA CSR block alone.
  cpSync(host, stage, { recursive: true, verbatimSymlinks: true, filter: (src) => src !== join(host, r0) });
  const bar = Buffer.alloc(SDMA_CSR_BLOCK_SIZE);
  const fd = openSync(join(host, r0), 'r');
  try {
    readSync(fd, bar, 0, bar.length, SDMA_CSR_BLOCK_START);
  } finally {
    closeSync(fd);
  }
  block?.(bar);
  writeFileSync(join(stage, `${r0}.sdma-csr`), bar);
  copyFileSync(join(host, 'proc/interrupts'), join(stage, 'proc/interrupts'));
  const manifest = {
    format: 'hfi1-sdma-snapshot/1',
    time: '2025-06-01T00:00:00.000Z',
    host: 'old',
    toolVersion: '0.0.9',
    sysroot: '/',
    units: [{ name: 'hfi1_0', pci: BDF }],
    sources: [
      { path: 'sys/kernel/debug/hfi1/hfi1_0/sdes', captured: true },
      { path: r0, captured: true },
      { path: 'sys/kernel/debug/hfi1/hfi1_0/sdma_cpu_list', captured: false, reason: 'ENOENT' },
    ],
    barBlocks: [{ file: `${r0}.sdma-csr`, resource0: r0, offset: SDMA_CSR_BLOCK_START, length: SDMA_CSR_BLOCK_SIZE }],
  };
  writeFileSync(join(stage, 'snapshot.json'), JSON.stringify(manifest));
  const out = join(tmp(), 'old.tar.gz');
  await tar.c({ gzip: true, file: out, cwd: stage, portable: true }, readdirSync(stage).sort());
  return { out, host };
}

describe('version-1 snapshots still read', () => {
  it('as written by the earlier tool (files at the root, the device link, barBlocks at the top)', async () => {
    const { out, host } = await versionOneSnapshot();
    const b = await openSnapshotBackend(out, { tmpDir: tmp() });
    expect(b.recording?.timesMs).toEqual([0]);
    const liveB = await openHwBackend({ sysroot: host });
    const want = await (await liveB.unit(0)).sample();
    await liveB.close();
    const got = await (await b.unit(0)).sample();
    expect(got[1]?.sources).toContain('bar');
    expect(untimed(got)).toEqual(untimed(want));
    await b.close();
  });
});

describe('the BAR image rebuilt from a snapshot', () => {
  it("holds a CN5000's SDMA window byte for byte at its offset, the window's all-zero pages left as holes", async () => {
    const out = join(tmp(), 'jkr.tar.gz');
    const r = await runCli([
      '--backend',
      'emu',
      '--chip',
      'jkr',
      '--driver',
      'cornelis',
      '--engines',
      '2',
      'snapshot',
      '-o',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const s = await openSnapshot(out, { tmpDir: tmp() });
    try {
      const inst = s.plan.instants[0];
      const blk = inst?.barBlocks[0];
      if (!inst || !blk) throw new Error('no BAR block in the snapshot');
      const stored = readFileSync(join(s.tree, inst.dir, blk.file));
      expect(stored.length).toBe(blk.length);
      const r0 = join(s.instants[0]?.sysroot ?? '', blk.resource0);
      const back = Buffer.alloc(blk.length + 8192, 0xff);
      const fd = openSync(r0, 'r');
      try {
        // The window with a page of the BAR on either side.
        expect(readSync(fd, back, 0, back.length, blk.offset - 4096)).toBe(back.length);
      } finally {
        closeSync(fd);
      }
      expect(back.subarray(4096, 4096 + blk.length).equals(stored)).toBe(true);
      expect(back.subarray(0, 4096).equals(Buffer.alloc(4096))).toBe(true);
      expect(back.subarray(4096 + blk.length).equals(Buffer.alloc(4096))).toBe(true);
      // Only the window's pages that hold something take room (the 1 MiB window is mostly zeros).
      const pages = new Set<number>();
      for (let at = 0; at < stored.length; at++) if (stored[at] !== 0) pages.add(at >> 12);
      expect(pages.size).toBeGreaterThan(0);
      expect(pages.size).toBeLessThan(blk.length / 4096 / 2);
      expect(statSync(r0).blocks * 512).toBeLessThanOrEqual(pages.size * 4096);
    } finally {
      await s.close();
    }
  });
});

describe('errors inside a snapshot name the archive and the entry', () => {
  it('a malformed sdes is reported as ARCHIVE:ENTRY:LINE:COLUMN, never the temporary path', async () => {
    const host = tmp();
    writeTree(host, { engines: 2, sdes: 'this is not an sdes dump\n' });
    const out = join(tmp(), 'node17.tar.gz');
    expect((await runCli(['--sysroot', host, '--backend', 'hw', 'snapshot', '-o', out])).code).toBe(0);
    const scratch = tmp();
    const b = await openSnapshotBackend(out, { tmpDir: scratch });
    const err = await (await b.unit(0)).sample().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParseError);
    const entry = `${out}:instants/0/sys/kernel/debug/hfi1/hfi1_0/sdes`;
    expect((err as ParseError).file).toBe(entry);
    expect((err as Error).message.startsWith(`${entry}:1:`)).toBe(true);
    expect((err as Error).message).not.toContain(scratch);
    await b.close();
    const r = await runCli(['--sysroot', out, 'engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${entry}:1:`);
    const none = await runCli(['--sysroot', out, '--unit', '7', 'engines']);
    expect(none.stderr).not.toMatch(/snapshot-|\/tree/);
  });
});

describe('snapshot --samples and --interval-ms', () => {
  it('records the emulator at its own virtual times, and reads back', async () => {
    const out = join(tmp(), 'emu.tar.gz');
    const r = await runCli([
      '--backend',
      'emu',
      '--engines',
      '2',
      'snapshot',
      '-o',
      out,
      '--samples',
      '3',
      '--interval-ms',
      '100',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).instants.map((i: { timeMs: number }) => i.timeMs)).toEqual([0, 100, 200]);
    const text = await runCli([
      '--backend',
      'emu',
      '--engines',
      '2',
      'snapshot',
      '-o',
      out,
      '--samples',
      '2',
      '--interval-ms',
      '100',
    ]);
    expect(text.stdout).toMatch(/^wrote .*emu\.tar\.gz: hfi1_0, 2 instants over 0\.1 s, \d+ files captured\n$/);
    expect((await runCli(['--sysroot', out, 'engines', '--json'])).code).toBe(0);
  });

  it('bad values are usage errors and write nothing', async () => {
    const dir = tmp();
    for (const bad of [
      ['--samples', '0'],
      ['--samples', '101'],
      ['--samples', 'many'],
      ['--interval-ms', '5'],
      ['--interval-ms', '600001'],
      ['--interval-ms', '-1'],
    ]) {
      const r = await runCli(['--backend', 'emu', 'snapshot', '-o', join(dir, 'x.tar.gz'), ...bad]);
      expect(r.code).toBe(64);
      expect(r.stderr).toContain(bad[0]);
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});
