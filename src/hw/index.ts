// The live-host backend: hfi1 units found under a sysroot (`/` on a live host), read through
// debugfs, sysfs, procfs and a read-only BAR window. Nothing is opened until a function is called.
import type { Backend, Clock, UnitInfo } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import { TXE_NUM_SDMA_ENGINES } from '../progress/constants.js';
import type { RegisterWindow } from './bar.js';
import { readUnitContext } from './context.js';
import { discoverUnits, type FoundUnit } from './discover.js';
import { type HwFs, realFs, sdesCapBytes } from './fsio.js';
import { parseSdes } from './parse/sdes.js';
import { descqCntFromLenGen, openSdmaWindow, readEngineCount, readEngineCsrs } from './regs.js';
import { probeSources, readable } from './sources.js';
import { HwUnit } from './unit.js';
import type { PsmScanOptions } from './waiters-psm.js';

export { openBarWindow, type RegisterWindow } from './bar.js';
export { contextFiles, linkFiles, readLinkState, readUnitContext } from './context.js';
export { discoverUnits, findHfiPciDevices } from './discover.js';
export { HwUnit } from './unit.js';

/** Options of the live-host backend. */
export interface HwOptions {
  /** Prefix under which sys/, proc/ and sys/kernel/debug are read; `/` on a live host. */
  sysroot: string;
  /** Clock for sample times (real time by default). */
  clock?: Clock;
  /** File access (the real file system by default). */
  fs?: HwFs;
  /** Bounds of the /proc scan for PSM writers (tests pass their own real-time source). */
  psmScan?: PsmScanOptions;
}

/** Real time in milliseconds. */
export const realClock: Clock = { nowMs: () => Date.now() };

/** What the unit's ring size checks against: the rule of sdma_get_descq_cnt (sdma.c) and, when the BAR is readable, LEN_GEN. */
export interface DescqCntCheck {
  fromParam: number;
  fromLenGen: number | null;
  agree: boolean | null;
}

/** The engine count: sdma<N> directories (sdma<N>/vl and cpu_list, sysfs.c), else sdes records, else SEND_DMA_ENGINES (SEND_DMA device registers, chip_registers.h), else 16. */
async function engineCount(fs: HwFs, u: FoundUnit, sources: UnitInfo['sources'], win: RegisterWindow | null): Promise<number> {
  if (u.engineDirs > 0) return u.engineDirs;
  if (readable(sources, 'sdes')) {
    const bytes = await fs.readFile(u.paths.sdes, sdesCapBytes(u.descqCnt));
    const dump = parseSdes(bytes, { file: u.paths.sdes, descqCnt: u.descqCnt });
    const n = dump.records.length + (dump.torn?.header ? 1 : 0);
    if (n > 0) return n;
  }
  if (win) {
    const n = readEngineCount(win, u.paths.resource0);
    if (n >= 1 && n <= TXE_NUM_SDMA_ENGINES) return n;
  }
  return TXE_NUM_SDMA_ENGINES;
}

/** Cross-check the sdma_get_descq_cnt, sdma.c ring size against engine 0's SEND_DMA_LEN_GEN (SEND_DMA_* per-engine CSRs, chip_registers.h). */
export function checkDescqCnt(u: FoundUnit, win: RegisterWindow | null): DescqCntCheck {
  if (!win) return { fromParam: u.descqCnt, fromLenGen: null, agree: null };
  const fromLenGen = descqCntFromLenGen(readEngineCsrs(win, 0).lenGen);
  return { fromParam: u.descqCnt, fromLenGen, agree: fromLenGen === null ? null : fromLenGen === u.descqCnt };
}

/** Discover and probe every unit. */
async function openUnits(
  sysroot: string,
  clock: Clock,
  fs: HwFs,
  psmScan: PsmScanOptions = {},
): Promise<{ unit: HwUnit; check: DescqCntCheck }[]> {
  const out: { unit: HwUnit; check: DescqCntCheck }[] = [];
  for (const u of await discoverUnits(sysroot, fs)) {
    const { sources, warnings } = await probeSources(fs, u);
    const ctx = await readUnitContext(fs, u.paths);
    let win: RegisterWindow | null = null;
    try {
      if (readable(sources, 'bar')) win = openSdmaWindow(u.paths.resource0);
      const engines = await engineCount(fs, u, sources, win).catch(() => u.engineDirs || TXE_NUM_SDMA_ENGINES);
      let check: DescqCntCheck = { fromParam: u.descqCnt, fromLenGen: null, agree: null };
      try {
        check = checkDescqCnt(u, win);
      } catch {
        // a device that reads all-ones has nothing to compare
      }
      out.push({
        unit: new HwUnit(u, engines, sources, clock, fs, [...u.warnings, ...warnings, ...ctx.warnings], ctx.context, psmScan),
        check,
      });
    } finally {
      win?.close();
    }
  }
  return out;
}

/** hfi1 units under the sysroot; empty when there are none. */
export async function findUnits(sysroot: string): Promise<UnitInfo[]> {
  return (await openUnits(sysroot, realClock, realFs)).map((u) => u.unit.info);
}

/** The units with the ring-size cross-check, for `doctor`. */
export async function inspectUnits(sysroot: string, fs: HwFs = realFs): Promise<{ info: UnitInfo; descqCnt: DescqCntCheck }[]> {
  const units = await openUnits(sysroot, realClock, fs);
  return units.map((u) => ({ info: u.unit.info, descqCnt: u.check }));
}

/** Open the live-host backend. Units are found once, at open. */
export async function openHwBackend(opts: HwOptions): Promise<Backend> {
  const clock = opts.clock ?? realClock;
  const fs = opts.fs ?? realFs;
  const units = (await openUnits(opts.sysroot, clock, fs, opts.psmScan)).map((u) => u.unit);
  let closed = false;
  return {
    kind: 'hw',
    async units() {
      return units.map((u) => u.info);
    },
    async unit(n: number) {
      const u = units.find((x) => x.info.unit === n);
      if (!u) {
        const have = units.map((x) => x.info.name).join(', ') || 'none';
        throw new Hfi1SdmaError(
          'E_NO_DEVICE',
          `no unit hfi1_${n} under ${opts.sysroot} (units: ${have}); run 'hfi1-sdma doctor'`,
        );
      }
      if (closed) throw new Hfi1SdmaError('E_INTERNAL', 'the backend is closed');
      return u;
    },
    async close() {
      closed = true;
      for (const u of units) u.close();
    },
  };
}
