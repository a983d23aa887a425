// One contract, every backend: the emulator itself, src/hw reading the emulator's rendered
// sysroot, and (only with HFI1_SDMA_LIVE=1) this host; the suite is the one hfi1-sdma/contract offers.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contractSuite } from '../../src/api/contract.js';
import type { EngineSample } from '../../src/backend.js';
import { engineJson } from '../../src/cli/engine-json.js';
import { createEmuBackend, EmuUnit } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { openHwBackend } from '../../src/hw/index.js';
import { removeTrees } from '../support/temp.js';

const SEED = 7;
const AT_MS = 50;
const ENGINES = 16;
const dirs: string[] = [];
afterAll(() => {
  removeTrees(dirs);
});

async function render(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'contract-'));
  dirs.push(dir);
  const u = new EmuUnit({ seed: SEED, engines: ENGINES });
  u.runUntilMs(AT_MS);
  await writeSysroot(u, dir);
  return dir;
}

/** The emulator's sysroot at AT_MS, rendered once: every backend opened on it is a fresh one, and none writes to it. */
let rendered: Promise<string> | undefined;
function renderedSysroot(): Promise<string> {
  rendered ??= render();
  return rendered;
}

const emuOpts = { seed: SEED, engines: ENGINES, descqCnt: undefined, workload: undefined, atMs: AT_MS, fault: [] };

const runner = { describe, it };
contractSuite('emu', async () => createEmuBackend(emuOpts), runner, { engines: ENGINES, healthy: true });
contractSuite('hw over the emulator’s sysroot', async () => openHwBackend({ sysroot: await renderedSysroot() }), runner, {
  engines: ENGINES,
  healthy: true,
});
describe.runIf(process.env.HFI1_SDMA_LIVE === '1')('live host (runs only with HFI1_SDMA_LIVE=1)', () => {
  contractSuite('hw on this host', async () => openHwBackend({ sysroot: '/' }), runner, { live: true });
});

describe('the contract suite itself', () => {
  it('fails a backend that breaks an obligation (an engine past the ring), naming it', async () => {
    const failures: string[] = [];
    const tests: { name: string; fn: () => Promise<void> }[] = [];
    contractSuite(
      'broken',
      async () => {
        const b = createEmuBackend(emuOpts);
        const unit = await b.unit(0);
        // Engine 0 says more is in flight than its ring holds; everything else is the emulator's.
        const broken = new Proxy(unit, {
          get: (target, key) =>
            key === 'sample'
              ? async (engines?: readonly number[]) =>
                  (await target.sample(engines)).map((x) =>
                    x.sw && x.engine === 0 ? { ...x, sw: { ...x.sw, descqTail: x.sw.descqHead + 5000 } } : x,
                  )
              : Reflect.get(target, key),
        });
        return { ...b, unit: async (n: number | string) => (n === 0 || n === 'hfi1_0' ? broken : b.unit(n)) };
      },
      { describe: (_n, fn) => fn(), it: (name, fn) => tests.push({ name, fn }) },
      { engines: ENGINES },
    );
    for (const t of tests) await t.fn().catch((e: Error) => failures.push(`${t.name}: ${e.message}`));
    expect(failures).toHaveLength(1);
    // The failure names the unit, the engine and the fields, not only the values.
    expect(failures[0]).toMatch(
      /^samples every engine with consistent ring counters: hfi1_0 engine 0: sw\.descqTail − sw\.descqHead is more than the ring holds/,
    );
  });
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
