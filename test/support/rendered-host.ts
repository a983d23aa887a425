// An emulated host read as a live one: the emulator renders its sysroot, the live backend (src/hw) reads it on the
// emulator's virtual clock, and advancing the backend runs the emulator and renders again. A command or the
// exporter given this backend sees what it would see on a host whose tree `emu serve` keeps live, with no wall
// time and no second process.
import type { Backend } from '../../src/backend.js';
import { type EmuCliOptions, emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import type { EmuUnit } from '../../src/emu/unit.js';
import { startExporter } from '../../src/export/server.js';
import { openHwBackend } from '../../src/hw/index.js';

/** The emulator's options, every one defaulted (WFR, upstream, 16 engines, mixed, seed 1). */
export function emuOptions(over: Partial<EmuCliOptions> = {}): EmuCliOptions {
  return {
    seed: 1,
    engines: undefined,
    firstEngine: undefined,
    chip: undefined,
    driver: undefined,
    ports: undefined,
    descqCnt: undefined,
    workload: undefined,
    atMs: undefined,
    fault: [],
    ...over,
  };
}

/** A backend over the rendered tree of `u` (run to `atMs` first), advancing the emulator with time. */
export async function renderedHost(
  root: string,
  opts: Partial<EmuCliOptions>,
  atMs: number,
): Promise<Backend & { advanceMs(ms: number): Promise<void>; emu: EmuUnit }> {
  const u = emuUnitFromOptions(emuOptions(opts));
  u.runUntilMs(atMs);
  await writeSysroot(u, root);
  const hw = await openHwBackend({ sysroot: root, clock: { nowMs: () => u.nowMs } });
  return {
    kind: hw.kind,
    ...(hw.origin ? { origin: hw.origin } : {}),
    emu: u,
    units: () => hw.units(),
    unit: (id) => hw.unit(id),
    close: () => hw.close(),
    async advanceMs(ms: number) {
      u.runUntilMs(u.nowMs + ms);
      await writeSysroot(u, root);
    },
  };
}

/**
 * A backend over the tree already rendered under `root`, which nothing moves: a command's rounds read it on a
 * virtual clock that only advanceMs moves (from `startMs`), as readers on a host whose tree stands still would,
 * without waiting.
 */
export async function stillHost(root: string, startMs = 0): Promise<Backend & { advanceMs(ms: number): void }> {
  let now = startMs;
  const hw = await openHwBackend({ sysroot: root, clock: { nowMs: () => now } });
  return {
    kind: hw.kind,
    ...(hw.origin ? { origin: hw.origin } : {}),
    units: () => hw.units(),
    unit: (id) => hw.unit(id),
    close: () => hw.close(),
    advanceMs(ms: number) {
      now += ms;
    },
  };
}

/** A 4-engine QP host (10 Gb/s) whose QP on engine 1 a lost wake-up strands at 50 ms, run to 400 ms and rendered under `root`. */
export async function strandedQpTree(root: string): Promise<EmuUnit> {
  const u = emuUnitFromOptions(emuOptions({ engines: 4, workload: 'qp:gbps=10', fault: ['lost-wakeup:qp@50:1'] }));
  u.runUntilMs(400);
  await writeSysroot(u, root);
  return u;
}

/**
 * The exporter over a rendered host on loopback (an ephemeral port): each scrape is one round, 200 ms of the
 * emulator's time after the last, so what Prometheus sees does not depend on how fast the machine runs.
 */
export function exportRendered(host: Awaited<ReturnType<typeof renderedHost>>) {
  return startExporter(
    {
      backend: host,
      buildInfo: { version: '0.0.0-test', backend: 'hw', emulated: true },
      minIntervalMs: 0,
      stallMs: 400,
      strandMs: 200,
      nowMs: () => host.emu.nowMs,
      log: () => {},
      beforeSample: () => host.advanceMs(200),
    },
    '127.0.0.1',
    0,
  );
}
