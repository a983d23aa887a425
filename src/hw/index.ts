// The live-host backend: hfi1 and hfi2 units found under a sysroot (`/` on a live host), read through
// debugfs, sysfs, procfs and a read-only BAR window. Nothing is opened until a function is called.
import type { Backend, Clock, UnitInfo } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import { chipModel } from '../progress/chip.js';
import { isAllOnes } from '../progress/csr.js';
import { ambiguousUnitMessage, lookupUnit } from '../unit-id.js';
import type { RegisterWindow } from './bar.js';
import { holdContainment } from './contain.js';
import { readUnitContext } from './context.js';
import { discoverUnits, type FoundUnit } from './discover.js';
import { engineSetOf } from './engines.js';
import { decideFlavour } from './flavour.js';
import { type HwFs, hwFsFor, sdesCapBytes } from './fsio.js';
import { readHostName } from './host-name.js';
import { parseSdes, type SdesDump } from './parse/sdes.js';
import { isEmulatedSysroot } from './paths.js';
import { descqCntFromLenGen, openSdmaWindow, readEngineCount, readEngineCsrs } from './regs.js';
import { readUnitSettings } from './settings.js';
import { probeSources, readable } from './sources.js';
import { HwUnit } from './unit.js';
import type { PsmScanOptions } from './waiters-psm.js';

export { openBarWindow, type RegisterWindow } from './bar.js';
export { contextFiles, linkFiles, readLinkState, readUnitContext } from './context.js';
export { discoverUnits, findHfiPciDevices, unknownChipUnits } from './discover.js';
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
  /** LEN_GEN read all-ones: the device is gone, and nothing is compared. */
  allOnes?: boolean;
}

/** The sdes headers for the engine set and the driver build; null when sdes is not readable or unusable. */
async function sdesHeadersOrNull(fs: HwFs, u: FoundUnit, sources: UnitInfo['sources']): Promise<SdesDump | null> {
  if (!readable(sources, 'sdes')) return null;
  try {
    const bytes = await fs.readFile(u.paths.sdes, sdesCapBytes(u.descqCnt));
    return parseSdes(bytes, { file: u.paths.sdes, descqCnt: u.descqCnt, headersOnly: true });
  } catch {
    return null; // a sample reports a bad sdes by the one rule for malformed sources (unit.ts)
  }
}

/** SEND_DMA_ENGINES when the BAR answers; null otherwise. */
function sendDmaEnginesOrNull(win: RegisterWindow | null, u: FoundUnit): number | null {
  if (!win) return null;
  try {
    return readEngineCount(win, u.paths.resource0, chipModel(u.chip));
  } catch {
    return null; // all-ones: a sample says the device is gone
  }
}

/** Cross-check the sdma_get_descq_cnt, sdma.c ring size against the first engine's SEND_DMA_LEN_GEN. */
export function checkDescqCnt(u: FoundUnit, win: RegisterWindow | null, engine = 0): DescqCntCheck {
  if (!win) return { fromParam: u.descqCnt, fromLenGen: null, agree: null };
  const lenGen = readEngineCsrs(win, engine, chipModel(u.chip)).lenGen;
  if (isAllOnes(lenGen)) return { fromParam: u.descqCnt, fromLenGen: null, agree: null, allOnes: true };
  const fromLenGen = descqCntFromLenGen(lenGen);
  return { fromParam: u.descqCnt, fromLenGen, agree: fromLenGen === null ? null : fromLenGen === u.descqCnt };
}

/** Discover and probe every unit: its engine set and flavour are decided here, once. */
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
    const settings = await readUnitSettings(fs, u.paths);
    let win: RegisterWindow | null = null;
    try {
      if (readable(sources, 'bar')) win = openSdmaWindow(u.paths.resource0, chipModel(u.chip), u.paths.sysroot);
      const sdes = await sdesHeadersOrNull(fs, u, sources);
      const set = engineSetOf(u, sdes, sendDmaEnginesOrNull(win, u));
      const flavour = decideFlavour(u.flavourInputs, u.paths.params, sdes?.newLine ?? null, u.paths.sdes);
      flavour.evidence.push(set.evidence);
      let check: DescqCntCheck = { fromParam: u.descqCnt, fromLenGen: null, agree: null };
      try {
        check = checkDescqCnt(u, win, set.engineIds[0] ?? 0);
      } catch {
        // a device that reads all-ones has nothing to compare
      }
      const all = [...u.warnings, ...warnings, ...ctx.warnings, ...settings.warnings];
      const unit = new HwUnit(u, set.engineIds, flavour, sources, clock, fs, all, ctx.context, psmScan);
      unit.info.settings = settings.settings;
      out.push({ unit, check });
    } finally {
      win?.close();
    }
  }
  return out;
}

/** hfi1 and hfi2 units under the sysroot; empty when there are none. */
export async function findUnits(sysroot: string): Promise<UnitInfo[]> {
  return (await openUnits(sysroot, realClock, hwFsFor(sysroot))).map((u) => u.unit.info);
}

/** The units with the ring-size cross-check, for `doctor`. */
export async function inspectUnits(
  sysroot: string,
  fs: HwFs = hwFsFor(sysroot),
): Promise<{ info: UnitInfo; descqCnt: DescqCntCheck }[]> {
  const units = await openUnits(sysroot, realClock, fs);
  return units.map((u) => ({ info: u.unit.info, descqCnt: u.check }));
}

/** Open the live-host backend. Units are found once, at open. */
export async function openHwBackend(opts: HwOptions): Promise<Backend> {
  const clock = opts.clock ?? realClock;
  // The sysroot's directory is opened now and kept while the backend is open: never resolved again.
  const release = holdContainment(opts.sysroot);
  let units: HwUnit[];
  const fs = opts.fs ?? hwFsFor(opts.sysroot);
  try {
    units = (await openUnits(opts.sysroot, clock, fs, opts.psmScan)).map((u) => u.unit);
  } catch (e) {
    release();
    throw e;
  }
  let closed = false;
  const emulated = isEmulatedSysroot(opts.sysroot);
  for (const u of units) u.info.emulated = emulated;
  // A tree other than this host's names its host where it holds the kernel's hostname file.
  const host = opts.sysroot === '/' ? null : await readHostName(fs, opts.sysroot);
  return {
    kind: 'hw',
    emulated,
    ...(emulated || host !== null ? { origin: { host, capturedAtMs: null, toolVersion: null, emulated } } : {}),
    async units() {
      return units.map((u) => u.info);
    },
    async unit(n: number | string) {
      const hit = lookupUnit(
        units.map((x) => x.info),
        n,
      );
      if ('ambiguous' in hit) throw new Hfi1SdmaError('E_NO_DEVICE', ambiguousUnitMessage(n, hit.ambiguous));
      const u = 'found' in hit ? units.find((x) => x.info === hit.found) : undefined;
      if (!u) {
        const have = units.map((x) => x.info.name).join(', ') || 'none';
        const which = typeof n === 'string' ? n : `${n} (hfi1_${n} or hfi2_${n})`;
        throw new Hfi1SdmaError('E_NO_DEVICE', `no unit ${which} under ${opts.sysroot} (units: ${have}); run 'hfi1-sdma doctor'`);
      }
      if (closed) throw new Hfi1SdmaError('E_INTERNAL', 'the backend is closed');
      return u;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const u of units) u.close();
      release();
    },
  };
}
