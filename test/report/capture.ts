// Snapshots of emulated hosts for the report's tests: one or more emulated units rendered into one tree,
// captured at N instants while their virtual time runs on between them (as `snapshot --backend emu` does).
import { join } from 'node:path';
import { EmuUnit, type EmuUnitOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';

/** When and how often to capture. */
export interface CapturePlan {
  /** Virtual ms to run before the first instant. */
  fromMs: number;
  samples: number;
  intervalMs: number;
}

export const META = { host: 'node17', toolVersion: '0.0.0-test', now: new Date('2026-01-02T03:04:05.000Z'), emulated: true };

/** Capture `units` (each an emulated unit; unit numbers and PCI addresses must differ) into `dir/name`. */
export async function emulatedCapture(
  dir: string,
  name: string,
  units: readonly EmuUnitOptions[],
  plan: CapturePlan,
): Promise<string> {
  const host = join(dir, `${name}-host`);
  const emus = units.map((o) => new EmuUnit(o));
  const write = async () => {
    for (const u of emus) await writeSysroot(u, host);
  };
  for (const u of emus) u.runUntilMs(plan.fromMs);
  await write();
  const out = join(dir, `${name}.tar.gz`);
  const lead = emus[0] as EmuUnit;
  await captureSnapshot(host, out, META, {
    samples: plan.samples,
    intervalMs: plan.intervalMs,
    clock: { nowMs: () => lead.nowMs },
    sleep: async (ms) => {
      for (const u of emus) u.runUntilMs(u.nowMs + ms);
      await write();
    },
  });
  return out;
}

/**
 * The captures the tests draw: a stall (and an engine error logged during it), a stranded QP, an hfi2 window
 * 8-15 with a stall, a healthy host; each with the `report` options it is read with (a short stall window keeps
 * the captures short).
 */
export const SCENARIOS = {
  stall: {
    units: [{ seed: 3, engines: 4, workload: 'mixed:gbps=10', faults: ['stop-fetch@200:3', 'engine-error:1@450:2'] }],
    plan: { fromMs: 100, samples: 5, intervalMs: 175 },
    args: ['--stall-ms', '300'],
  },
  stranded: {
    units: [{ seed: 5, engines: 8, workload: 'qp:gbps=10', faults: ['lost-wakeup@300:5'] }],
    plan: { fromMs: 200, samples: 5, intervalMs: 175 },
    args: [],
  },
  window: {
    units: [
      // A CN5000 function under hfi2 whose engines are 8-15.
      {
        seed: 3,
        engines: 8,
        firstEngine: 8,
        chip: 'jkr',
        driver: 'hfi2',
        ports: 2,
        workload: 'qp:gbps=10',
        faults: ['stop-fetch@200:8'],
      },
    ],
    plan: { fromMs: 100, samples: 5, intervalMs: 175 },
    args: ['--stall-ms', '300'],
  },
  healthy: {
    units: [{ seed: 1, engines: 4, workload: 'mixed:gbps=10' }],
    plan: { fromMs: 100, samples: 4, intervalMs: 100 },
    args: [],
  },
} satisfies Record<string, { units: EmuUnitOptions[]; plan: CapturePlan; args: string[] }>;

/** Two 16-engine units with a stall, an engine error and a lost wake-up: the 100-instant capture of the size test and the benchmark. */
export const TWO_UNITS: readonly EmuUnitOptions[] = [
  { seed: 1, unit: 0, workload: 'mixed:gbps=10', faults: ['stop-fetch@2000:3', 'engine-error:1@3000:5'] },
  { seed: 2, unit: 1, pci: '0000:06:00.0', workload: 'mixed:gbps=10', faults: ['lost-wakeup@1500:7'] },
];

/** The plan of that capture: 100 instants 50 ms apart, from 500 ms. */
export const TWO_UNITS_PLAN: CapturePlan = { fromMs: 500, samples: 100, intervalMs: 50 };
