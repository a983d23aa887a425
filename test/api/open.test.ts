// openBackend never passes the emulator off as a host: `auto` with no unit refuses (E_NO_DEVICE) unless the caller
// opts in with fallback 'emu', whose backend and units then say emulated; options that contradict each other are
// E_USAGE before anything is opened. captureSnapshot takes back what the library opened.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEmuBackend } from '../../src/api/emulator.js';
import { captureSnapshot, createMonitor, type OpenBackendOptions, openBackend } from '../../src/api/index.js';
import { tempDirs } from '../support/temp.js';

const temp = tempDirs('hfi1-sdma-open-');

/** The code and message an async call rejects with. */
async function rejection(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('it resolved');
}

const light = { engines: 2, workload: 'idle' } as const;

/** This host lists an hfi1 or hfi2 unit (then `auto` reads it). */
const hostHasUnit =
  existsSync('/sys/class/infiniband') && readdirSync('/sys/class/infiniband').some((n) => /^hfi[12]_\d+$/.test(n));

describe('openBackend', () => {
  it('auto on a host with no unit refuses with E_NO_DEVICE, naming the three ways on', async () => {
    const e = await rejection(openBackend({ sysroot: temp() }));
    expect(e.code).toBe('E_NO_DEVICE');
    expect(e.message).toMatch(/^openBackend: no hfi1 or hfi2 unit under \S+\/sys\/class\/infiniband/);
    expect(e.message).toMatch(/backend: 'hw'.*backend: 'emu'.*fallback: 'emu'/);
  });

  it.runIf(!hostHasUnit)(
    "fallback 'emu' runs the emulator on a host with no unit, and the backend and every unit say emulated (skipped: this host has an hfi1 or hfi2 unit, which is read instead)",
    async () => {
      const b = await openBackend({ fallback: 'emu', emulator: light });
      try {
        expect(b.kind).toBe('emu');
        expect(b.emulated).toBe(true);
        expect((await b.units()).map((u) => u.emulated)).toEqual([true]);
      } finally {
        await b.close();
      }
    },
  );

  it("backend 'emu' says emulated on the backend, its origin and its unit", async () => {
    const b = await openBackend({ backend: 'emu', emulator: light });
    try {
      expect(b.emulated).toBe(true);
      expect(b.origin?.emulated).toBe(true);
      expect((await b.units()).map((u) => u.emulated)).toEqual([true]);
      expect((await b.unit(0)).info.emulated).toBe(true);
    } finally {
      await b.close();
    }
  });

  it("backend 'hw' opens a host with no unit all the same: its rounds say SD304, never healthy", async () => {
    const b = await openBackend({ backend: 'hw', sysroot: temp() });
    try {
      expect(b.emulated).toBe(false);
      expect(await b.units()).toEqual([]);
      const round = await createMonitor(b).round();
      expect(round.noUnit).toBe(true);
      expect(round.findings.map((f) => [f.code, f.severity])).toEqual([['SD304', 'unknown']]);
    } finally {
      await b.close();
    }
  });

  it.each<[string, OpenBackendOptions, RegExp]>([
    [
      "backend 'emu' with a sysroot",
      { backend: 'emu', sysroot: 'node.tar.gz' },
      /backend 'emu' runs the emulator, which reads no sysroot/,
    ],
    ["fallback 'emu' with backend 'hw'", { backend: 'hw', fallback: 'emu' }, /fallback 'emu' goes with backend 'auto'/],
    ["fallback 'emu' with a sysroot", { fallback: 'emu', sysroot: '/tmp' }, /a sysroot never falls back/],
    ['emulator options the host would ignore', { emulator: { engines: 1 } }, /emulator options are used only with/],
    ['a misspelt option', { backed: 'emu' } as OpenBackendOptions, /there is no option "backed"/],
    [
      'an unknown backend',
      { backend: 'sim' } as unknown as OpenBackendOptions,
      /backend must be one of "auto", "hw", "emu"; got "sim"/,
    ],
    ['an empty sysroot', { sysroot: '' }, /sysroot must be a directory or a snapshot file/],
    ['a unit that is no number', { unit: -1 }, /unit must be a unit number/],
  ])('%s is E_USAGE, before anything is opened', async (_what, o, message) => {
    const e = await rejection(openBackend(o));
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toMatch(message);
    expect(e.message).not.toMatch(/(^|\s)--[a-z]/);
  });

  it('disposing of a backend closes it (await using)', async () => {
    const b = await openBackend({ backend: 'emu', emulator: light });
    await b[Symbol.asyncDispose]();
    expect((await rejection(b.units())).message).toMatch(/the emulator was closed/);
  });

  it('a unit that is not there is E_NO_DEVICE naming the units there are', async () => {
    const e = await rejection(openBackend({ backend: 'emu', emulator: light, unit: 3 }));
    expect(e).toMatchObject({ code: 'E_NO_DEVICE', message: 'openBackend: no unit hfi1_3 or hfi2_3: the units are hfi1_0' });
  });
});

describe('captureSnapshot', () => {
  it('captures an emulated sysroot the library opened, and the capture reads back as emulated', async () => {
    const emu = await createEmuBackend(light);
    const root = join(temp(), 'host');
    await emu.writeSysroot(root);
    await emu.close();
    const host = await openBackend({ sysroot: root });
    const file = join(temp(), 'host.tar.gz');
    try {
      expect(host.emulated).toBe(true);
      const s = await captureSnapshot(host, { output: file, samples: 2, intervalMs: 10 });
      expect(s).toMatchObject({ file, units: ['hfi1_0'], emulated: true, notCaptured: [] });
      expect(s.timesMs).toHaveLength(2);
    } finally {
      await host.close();
    }
    const back = await openBackend({ sysroot: file });
    try {
      expect(back.recording?.timesMs).toHaveLength(2);
      expect((await back.units()).map((u) => u.emulated)).toEqual([true]);
      expect((await rejection(captureSnapshot(back, { output: join(temp(), 'again.tar.gz') }))).message).toMatch(
        /plays back a snapshot already/,
      );
    } finally {
      await back.close();
    }
  });

  it('refuses a backend it did not open, an output that is no .tar.gz, and a bad count, naming each', async () => {
    const emu = await createEmuBackend(light);
    try {
      const { kind, units, unit, close } = emu;
      const foreign = { kind, units, unit, close };
      const out = join(temp(), 'x.tar.gz');
      expect((await rejection(captureSnapshot(foreign, { output: out }))).message).toMatch(/backend must come from openBackend/);
      expect((await rejection(captureSnapshot(emu, { output: 'x.zip' }))).message).toMatch(/output must name a \.tar\.gz/);
      expect((await rejection(captureSnapshot(emu, { output: out, samples: 0 }))).message).toMatch(/samples must be a count/);
      expect(existsSync(out)).toBe(false);
    } finally {
      await emu.close();
    }
  });
});
