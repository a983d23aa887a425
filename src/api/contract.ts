// hfi1-sdma/contract: the obligations every backend keeps, as a suite another backend (a remote reader, a future
// driver's) can run against itself. It registers its tests through the `describe` and `it` of any runner
// (vitest, jest, mocha, node:test) and asserts with node:assert, so it brings no test framework with it.
import { strict as assert } from 'node:assert';
import type { Backend } from '../backend.js';
import { isStateName } from '../progress/state.js';

export type * from '../backend.js';

/** The runner's two registration functions. */
export interface ContractRunner {
  describe(name: string, fn: () => void): unknown;
  it(name: string, fn: () => Promise<void>): unknown;
}

/** What the suite may expect of the backend. */
export interface ContractOptions {
  /** A live host: its engines' states, registers and counts are whatever they are. */
  live?: boolean;
  /** Engines every unit has (checked when given). */
  engines?: number;
  /** Every engine runs with the driver's register settings (an emulated or rendered healthy host). */
  healthy?: boolean;
}

const RING_SIZES = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768];

/** Open a backend, run `fn`, close it whatever happens. */
async function withBackend(open: () => Promise<Backend>, fn: (b: Backend) => Promise<void>): Promise<void> {
  const b = await open();
  try {
    await fn(b);
  } finally {
    await b.close();
  }
}

async function firstUnit(b: Backend) {
  const [info] = await b.units();
  assert.ok(info, 'the backend lists no unit');
  return { info, unit: await b.unit(info.name) };
}

/** Register the contract's tests for the backend `open` makes (a fresh one per test), named `name`. */
export function contractSuite(name: string, open: () => Promise<Backend>, t: ContractRunner, o: ContractOptions = {}): void {
  t.describe(`backend contract: ${name}`, () => {
    t.it('lists hfi1 or hfi2 units with engines, ring size and sources', async () => {
      await withBackend(open, async (b) => {
        const units = await b.units();
        assert.ok(units.length > 0, 'no unit');
        for (const u of units) {
          assert.match(u.name, /^hfi[12]_\d+$/, `UnitInfo.name ${JSON.stringify(u.name)} is not hfi1_N or hfi2_N`);
          assert.equal(u.name.endsWith(`_${u.unit}`), true, `UnitInfo.name ${u.name} does not end in its unit number ${u.unit}`);
          assert.ok(u.engines > 0 && u.engines <= 16, `${u.name}: UnitInfo.engines is ${u.engines}, not 1-16`);
          assert.equal(
            u.engineIds.length,
            u.engines,
            `${u.name}: UnitInfo.engineIds has ${u.engineIds.length} engines, engines says ${u.engines}`,
          );
          assert.ok(
            RING_SIZES.includes(u.descqCnt),
            `${u.name}: UnitInfo.descqCnt ${u.descqCnt} is not a ring size (64-32768, a power of two)`,
          );
          assert.ok(
            u.sources.some((s) => s.readable),
            `${u.name}: UnitInfo.sources has no readable source`,
          );
          if (o.engines !== undefined)
            assert.equal(u.engines, o.engines, `${u.name}: UnitInfo.engines is ${u.engines}, expected ${o.engines}`);
        }
      });
    });

    t.it('samples every engine with consistent ring counters', async () => {
      await withBackend(open, async (b) => {
        const { info, unit } = await firstUnit(b);
        const samples = await unit.sample();
        assert.deepEqual(
          samples.map((s) => s.engine),
          info.engineIds,
          `${info.name}: sample() gave engines ${samples.map((s) => s.engine).join(',')}, not UnitInfo.engineIds`,
        );
        const mask = info.descqCnt - 1;
        for (const s of samples) {
          const at = `${info.name} engine ${s.engine}`;
          assert.equal(s.unit, info.unit, `${at}: EngineSample.unit is ${s.unit}, not ${info.unit}`);
          assert.ok(s.sources.length > 0, `${at}: EngineSample.sources names no source`);
          if (s.state !== null)
            assert.ok(isStateName(s.state), `${at}: EngineSample.state ${JSON.stringify(s.state)} is not a state name`);
          if (s.sw && !s.gone) {
            assert.ok(
              (s.sw.descqTail - s.sw.descqHead) >>> 0 <= mask,
              `${at}: sw.descqTail − sw.descqHead is more than the ring holds`,
            );
            assert.equal(
              s.sw.swHead,
              s.sw.descqHead & mask,
              `${at}: sw.swHead ${s.sw.swHead} is not sw.descqHead & (descqCnt − 1)`,
            );
            assert.equal(
              s.sw.swTail,
              s.sw.descqTail & mask,
              `${at}: sw.swTail ${s.sw.swTail} is not sw.descqTail & (descqCnt − 1)`,
            );
          }
          if (s.csr && !s.gone) {
            assert.ok(
              s.csr.hwHead <= BigInt(mask) && s.csr.hwTail <= BigInt(mask),
              `${at}: csr.hwHead or csr.hwTail is a slot past the ring`,
            );
          }
          if (s.seq !== null && s.seqSource !== 'head-lock') {
            assert.equal(
              s.seq % 2,
              0,
              `${at}: EngineSample.seq ${s.seq} from ${s.seqSource} is odd (twice the interrupt passes)`,
            );
          }
        }
        if (o.healthy) {
          for (const s of samples) {
            const at = `${info.name} engine ${s.engine}`;
            assert.equal(s.state, 's99_Running', `${at}: EngineSample.state is ${s.state} on a healthy host`);
            assert.equal(s.csr?.lenGen, 0x40800n, `${at}: csr.lenGen is not the driver's setting`);
            assert.equal(s.csr?.reloadCnt, 0xc9n, `${at}: csr.reloadCnt is not 250 ns`); // init_sdma_regs, sdma.c
          }
        }
      });
    });

    t.it('lists the ring between head and tail', async () => {
      await withBackend(open, async (b) => {
        const { info, unit } = await firstUnit(b);
        for (const e of info.engineIds) {
          const [s] = await unit.sample([e]);
          if (!s?.sw) continue;
          const r = await unit.ring(e);
          const at = `${info.name} ring(${e})`;
          assert.equal(r.engine, e, `${at}: RingDump.engine is ${r.engine}`);
          assert.equal(
            r.descriptors.length,
            (r.tail - r.head) & (info.descqCnt - 1),
            `${at}: ${r.descriptors.length} descriptors between RingDump.head ${r.head} and RingDump.tail ${r.tail}`,
          );
          r.descriptors.forEach((d, k) => {
            assert.equal(d.slot, (r.head + k) & (info.descqCnt - 1), `${at}: descriptors[${k}].slot is ${d.slot}`);
            assert.match(d.flags, /^[I-][H-][F-][L-]$/, `${at}: descriptors[${k}].flags ${JSON.stringify(d.flags)} is not IHFL`);
            assert.ok(d.gen >= 0 && d.gen <= 3, `${at}: descriptors[${k}].gen ${d.gen} is not 0-3`);
          });
        }
      });
    });

    t.it('refuses a unit or engine that does not exist', async () => {
      await withBackend(open, async (b) => {
        await assert.rejects(
          b.unit(200),
          (e: { code?: string }) => e.code === 'E_NO_DEVICE',
          'unit(200) did not reject with E_NO_DEVICE',
        );
        const { info, unit } = await firstUnit(b);
        const past = Math.max(...info.engineIds) + 1;
        await assert.rejects(
          unit.sample([past]),
          (e: { code?: string }) => e.code === 'E_NO_ENGINE',
          `sample([${past}]) did not reject with E_NO_ENGINE`,
        );
      });
    });

    if (!o.live) {
      t.it('gives the same sample twice when no time passes', async () => {
        await withBackend(open, async (b) => {
          const { unit } = await firstUnit(b);
          const strip = (x: Awaited<ReturnType<typeof unit.sample>>) => x.map(({ timeMs: _t, ...rest }) => rest);
          assert.deepEqual(
            strip(await unit.sample()),
            strip(await unit.sample()),
            'two samples with no time between them differ',
          );
        });
      });
    }
  });
}
