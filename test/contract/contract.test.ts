// One contract, every backend: the emulator itself, src/hw reading the emulator's rendered
// sysroot, and (only with HFI1_SDMA_LIVE=1) this host.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Backend, EngineSample } from '../../src/backend.js';
import { engineJson } from '../../src/cli/engine-json.js';
import { createEmuBackend, EmuUnit } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { openHwBackend } from '../../src/hw/index.js';
import { isStateName } from '../../src/progress/state.js';

const SEED = 7;
const AT_MS = 50;
const ENGINES = 16;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function renderedSysroot(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'contract-'));
  dirs.push(dir);
  const u = new EmuUnit({ seed: SEED, engines: ENGINES });
  u.runUntilMs(AT_MS);
  await writeSysroot(u, dir);
  return dir;
}

const emuOpts = { seed: SEED, engines: ENGINES, descqCnt: undefined, workload: undefined, atMs: AT_MS, fault: [] };

/** Open a backend, run `fn`, close it whatever happens. */
async function withBackend(open: () => Promise<Backend>, fn: (b: Backend) => Promise<void>): Promise<void> {
  const b = await open();
  try {
    await fn(b);
  } finally {
    await b.close();
  }
}

/** The contract's assertions, run against one backend. */
function contract(name: string, open: () => Promise<Backend>, live = false) {
  describe(`backend contract: ${name}`, () => {
    it('lists hfi1 units with engines, ring size and sources', async () => {
      await withBackend(open, async (b) => {
        const units = await b.units();
        expect(units.length).toBeGreaterThan(0);
        for (const u of units) {
          expect(u.name).toBe(`hfi1_${u.unit}`);
          expect(u.engines).toBeGreaterThan(0);
          expect(u.engines).toBeLessThanOrEqual(16);
          expect([64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]).toContain(u.descqCnt);
          expect(u.sources.some((s) => s.readable)).toBe(true);
          if (!live) expect(u.engines).toBe(ENGINES);
        }
      });
    });

    it('samples every engine with consistent ring counters', async () => {
      await withBackend(open, async (b) => {
        const [info] = await b.units();
        if (!info) throw new Error('no unit');
        const unit = await b.unit(info.unit);
        const samples = await unit.sample();
        expect(samples.map((s) => s.engine)).toEqual(Array.from({ length: info.engines }, (_, i) => i));
        const mask = info.descqCnt - 1;
        for (const s of samples) {
          expect(s.unit).toBe(info.unit);
          expect(s.sources.length).toBeGreaterThan(0);
          if (s.state !== null) expect(isStateName(s.state)).toBe(true);
          if (s.sw && !s.gone) {
            expect((s.sw.descqTail - s.sw.descqHead) >>> 0 <= mask).toBe(true);
            expect(s.sw.swHead).toBe(s.sw.descqHead & mask);
            expect(s.sw.swTail).toBe(s.sw.descqTail & mask);
          }
          if (s.csr && !s.gone) {
            expect(s.csr.hwHead <= BigInt(mask)).toBe(true);
            expect(s.csr.hwTail <= BigInt(mask)).toBe(true);
          }
          if (s.seq !== null && s.seqSource !== 'head-lock') expect(s.seq % 2).toBe(0);
        }
        if (!live) {
          expect(samples.every((s) => s.state === 's99_Running' && s.csr?.ctrl === 0x9n && s.csr.lenGen === 0x40800n)).toBe(true);
          expect(samples.every((s) => s.csr?.reloadCnt === 0xc9n)).toBe(true); // 250 ns (init_sdma_regs, sdma.c)
        }
      });
    });

    it('lists the ring between head and tail', async () => {
      await withBackend(open, async (b) => {
        const [info] = await b.units();
        if (!info) throw new Error('no unit');
        const unit = await b.unit(info.unit);
        for (let e = 0; e < info.engines; e++) {
          const [s] = await unit.sample([e]);
          if (!s?.sw) continue;
          const r = await unit.ring(e);
          expect(r.engine).toBe(e);
          expect(r.descriptors.length).toBe((r.tail - r.head) & (info.descqCnt - 1));
          r.descriptors.forEach((d, k) => {
            expect(d.slot).toBe((r.head + k) & (info.descqCnt - 1));
            expect(d.flags).toMatch(/^[I-][H-][F-][L-]$/);
            expect(d.gen).toBeGreaterThanOrEqual(0);
            expect(d.gen).toBeLessThanOrEqual(3);
          });
        }
      });
    });

    it('refuses a unit or engine that does not exist', async () => {
      await withBackend(open, async (b) => {
        await expect(b.unit(200)).rejects.toMatchObject({ code: 'E_NO_DEVICE' });
        const [info] = await b.units();
        if (!info) throw new Error('no unit');
        const unit = await b.unit(info.unit);
        await expect(unit.sample([info.engines])).rejects.toMatchObject({ code: 'E_NO_ENGINE' });
      });
    });
  });
}

contract('emu', async () => createEmuBackend(emuOpts));
contract('hw over the emulator’s sysroot', async () => openHwBackend({ sysroot: await renderedSysroot() }));
describe.runIf(process.env.HFI1_SDMA_LIVE === '1')('live host (runs only with HFI1_SDMA_LIVE=1)', () => {
  contract('hw on this host', async () => openHwBackend({ sysroot: '/' }), true);
});

describe('the two emulator views agree', () => {
  // Fields that differ by construction: when and from where; seq is the head-lock sequence in
  // the emulator and 2 × interrupt passes through the counters.
  const comparable = (s: EngineSample) => {
    const { timeMs, sources, seq, seqSource, csr, ...rest } = engineJson(s, { name: `hfi1_${s.unit}`, descqCnt: 2048 });
    return { ...rest, csr: csr && { ...csr, descFetchedCnt: null } };
  };

  it('same units, engines and values for the same seed and time', async () => {
    const emu = createEmuBackend(emuOpts);
    const hw = await openHwBackend({ sysroot: await renderedSysroot() });
    try {
      expect((await hw.units()).map((u) => [u.name, u.engines, u.descqCnt])).toEqual(
        (await emu.units()).map((u) => [u.name, u.engines, u.descqCnt]),
      );
      const a = await (await emu.unit(0)).sample();
      const b = await (await hw.unit(0)).sample();
      expect(b.map(comparable)).toEqual(a.map(comparable));
      const ra = await (await emu.unit(0)).ring(5);
      const rb = await (await hw.unit(0)).ring(5);
      const strip = (r: typeof ra) => r.descriptors.map(({ slot, flags, addr, gen, len }) => ({ slot, flags, addr, gen, len }));
      expect(strip(rb)).toEqual(strip(ra));
      expect((await hw.units())[0]?.context).toEqual((await emu.units())[0]?.context);
      expect(await (await hw.unit(0)).link?.()).toEqual(await (await emu.unit(0)).link?.());
    } finally {
      await emu.close();
      await hw.close();
    }
  });
});
