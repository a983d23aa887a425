// The contract on every chip × driver build the emulator renders: the emulator's own view and src/hw
// reading the rendered sysroot agree on the unit's flavour, its engine window, every sample and the ring.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, ChipKind, DriverBuild, EngineSample } from '../../src/backend.js';
import { engineJson } from '../../src/cli/engine-json.js';
import { type EmuCliOptions, emuBackendOf, emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import type { EmuUnit } from '../../src/emu/unit.js';
import { openHwBackend } from '../../src/hw/index.js';
import { isHealthyRunningCtrl } from '../../src/progress/chip.js';

const AT_MS = 30;

interface Combo {
  chip: ChipKind;
  driver: DriverBuild;
  ports: number;
  firstEngine: number;
  engines: number;
}

/** Every combination the emulator can render (upstream hfi1 does not drive the CN5000). */
const COMBOS: Combo[] = [
  { chip: 'wfr', driver: 'upstream', ports: 1, firstEngine: 0, engines: 16 },
  { chip: 'wfr', driver: 'cornelis', ports: 1, firstEngine: 0, engines: 16 },
  { chip: 'jkr', driver: 'cornelis', ports: 2, firstEngine: 0, engines: 16 },
  { chip: 'jkr', driver: 'hfi2', ports: 2, firstEngine: 8, engines: 8 },
  { chip: 'jkr', driver: 'hfi2', ports: 1, firstEngine: 0, engines: 16 },
  { chip: 'wfr', driver: 'hfi2', ports: 1, firstEngine: 4, engines: 4 },
];

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function optionsOf(c: Combo, seed: number): EmuCliOptions {
  return {
    seed,
    engines: c.engines,
    firstEngine: c.firstEngine,
    chip: c.chip,
    driver: c.driver,
    ports: c.ports,
    descqCnt: undefined,
    workload: undefined,
    atMs: AT_MS,
    fault: [],
  };
}

/** The unit of `opts` run to AT_MS and its sysroot rendered: the emulator's view and the tree src/hw reads. */
async function renderedUnit(opts: EmuCliOptions): Promise<{ unit: EmuUnit; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'flavour-'));
  dirs.push(dir);
  const unit = emuUnitFromOptions(opts);
  unit.runUntilMs(AT_MS);
  await writeSysroot(unit, dir);
  return { unit, dir };
}

// Fields that differ by construction: when and from where; seq is the head-lock sequence in the emulator
// and 2 × interrupt passes through the counters.
const comparable = (s: EngineSample) => {
  const { timeMs, sources, seq, seqSource, csr, ...rest } = engineJson(s, { name: `hfi1_${s.unit}`, descqCnt: 2048 });
  return { ...rest, csr: csr && { ...csr, descFetchedCnt: null } };
};

/** Descriptors between the software head and tail. */
const inFlightOf = (s: EngineSample) => (s.sw ? (s.sw.descqTail - s.sw.descqHead) >>> 0 : 0);

describe.each(COMBOS)('the contract on $chip × $driver, $ports port(s), engines from $firstEngine', (c) => {
  const opts = optionsOf(c, 11);
  const ids = Array.from({ length: c.engines }, (_, i) => c.firstEngine + i);
  const module = c.driver === 'hfi2' ? 'hfi2' : 'hfi1';
  let emu: Backend;
  let hw: Backend;
  beforeAll(async () => {
    // One run: the emulator's backend over the unit whose state the sysroot renders.
    const { unit, dir } = await renderedUnit(opts);
    emu = emuBackendOf(unit, AT_MS);
    hw = await openHwBackend({ sysroot: dir });
  });
  afterAll(async () => {
    await emu?.close();
    await hw?.close();
  });

  it('both views name the same unit, flavour and engine window', async () => {
    const [a] = await emu.units();
    const [b] = await hw.units();
    if (!a || !b) throw new Error('no unit');
    for (const u of [a, b]) {
      expect(u.name).toBe(`${module}_0`);
      expect(u.engineIds).toEqual(ids);
      expect(u.engines).toBe(ids.length);
      expect({ module: u.flavour.module, chip: u.flavour.chip, driver: u.flavour.driver, ports: u.flavour.ports }).toEqual({
        module,
        chip: c.chip,
        driver: c.driver,
        ports: c.ports,
      });
    }
    expect(b.flavour.evidence.length).toBeGreaterThan(0);
    expect(b.descqCnt).toBe(a.descqCnt);
  });

  it('samples agree engine by engine, keyed by absolute index, running with the CTRL the chip allows', async () => {
    const a = await (await emu.unit(0)).sample();
    const b = await (await hw.unit(0)).sample();
    expect(b.map((s) => s.engine)).toEqual(ids);
    expect(b.map(comparable)).toEqual(a.map(comparable));
    for (const s of b) {
      expect(s.state).toBe('s99_Running');
      const ctrl = s.csr?.ctrl;
      if (ctrl === undefined) throw new Error(`engine ${s.engine} has no CSRs`);
      expect(isHealthyRunningCtrl(c.driver, ctrl)).toBe(true);
    }
  });

  it('the ring of the busiest engine reads the same through the sysroot, descriptors in the chip’s layout', async () => {
    const samples = await (await emu.unit(0)).sample();
    const busiest = samples.reduce((a, b) => (inFlightOf(b) > inFlightOf(a) ? b : a));
    const ra = await (await emu.unit(0)).ring(busiest.engine);
    const rb = await (await hw.unit(0)).ring(busiest.engine);
    expect(rb.engine).toBe(busiest.engine);
    expect(ids).toContain(rb.engine);
    const strip = (r: typeof ra) => r.descriptors.map(({ slot, flags, addr, gen, len }) => ({ slot, flags, addr, gen, len }));
    expect(strip(rb)).toEqual(strip(ra));
    expect(rb.descriptors.length).toBeGreaterThan(0);
  });

  it('refuses an engine outside the window on both views', async () => {
    const outside = c.firstEngine > 0 ? c.firstEngine - 1 : c.firstEngine + c.engines;
    for (const b of [emu, hw]) {
      await expect((await b.unit(0)).sample([outside])).rejects.toMatchObject({ code: 'E_NO_ENGINE' });
    }
  });
});
