// Discovery: hfi1 and hfi2 units under sys/class/infiniband, their PCI device, module, chip, engine directories and ring size.
import { basename, join, relative } from 'node:path';
import type { ChipKind, SourceWarning } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import { SDMA_DESCQ_CNT_DEFAULT, TXE_NUM_SDMA_ENGINES } from '../progress/constants.js';
import { descqCntFromParam } from '../progress/ring.js';
import { chipOfPciId, decideChip, decideModule, type FlavourInputs, type PciIdentity } from './flavour.js';
import { errnoCode, type HwFs, hwFsFor, oddReason, readdirOrNull, readError, readTextOrNull } from './fsio.js';
import { parseSdeWindow, type SdeWindow } from './parse/hw-resources.js';
import { parseUintParam } from './parse/sysfs.js';
import { type HfiModule, infinibandDir, pciDevicesDir, type UnitPaths, unitPaths } from './paths.js';

/** A unit as discovery finds it, before any source is probed. */
export interface FoundUnit {
  unit: number;
  name: string;
  pci: string;
  /** The module driving it (hfi1 or hfi2), from the device's driver link or the name (flavour.ts). */
  module: HfiModule;
  /** The chip, from the PCI id or the BAR0 size (flavour.ts). */
  chip: ChipKind;
  /** What the flavour is decided from (the driver build waits for sdes, index.ts). */
  flavourInputs: FlavourInputs;
  /** The sdma<E> directories found (sdma<N>/vl and cpu_list, sysfs.c), as absolute engine indexes, ascending. */
  engineDirIds: number[];
  /** How many sdma<E> directories there are; 0 when the kernel has none (before v4.8). */
  engineDirs: number;
  /** The `sde a-b` engine window of hw_resources (hfi2), or null when there is none. */
  sdeWindow: SdeWindow | null;
  /** Ring size by the rule of sdma_get_descq_cnt (sdma.c) from sdma_descq_cnt (2048 when the parameter is not there). */
  descqCnt: number;
  /** The raw parameter, when readable. */
  descqCntParam: number | null;
  paths: UnitPaths;
  /** What discovery could not use and did without (e.g. a ring-size parameter that is a directory). */
  warnings: SourceWarning[];
}

const BDF = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;
const UNIT = /^(hfi[12])_([0-9]{1,3})$/;

/** True for the Omni-Path HFI PCI IDs under either module: Intel 8086:24f0/24f1 (WFR) and Cornelis 434e:0001 (JKR). */
export function isHfi1PciId(vendor: number, device: number): boolean {
  return chipOfPciId({ vendor, device }) !== null;
}

async function pciId(fs: HwFs, dir: string): Promise<PciIdentity | null> {
  const v = await readTextOrNull(fs, join(dir, 'vendor')).catch(() => null);
  const d = await readTextOrNull(fs, join(dir, 'device')).catch(() => null);
  if (v === null || d === null) return null;
  const vendor = Number.parseInt(v.trim(), 16);
  const device = Number.parseInt(d.trim(), 16);
  if (Number.isNaN(vendor) || Number.isNaN(device)) return null;
  const sub = await readTextOrNull(fs, join(dir, 'subsystem_device')).catch(() => null);
  const subsystemDevice = sub === null ? null : Number.parseInt(sub.trim(), 16);
  return { vendor, device, subsystemDevice: subsystemDevice === null || Number.isNaN(subsystemDevice) ? null : subsystemDevice };
}

/** The ring size the driver uses, from the module parameter (sdma_get_descq_cnt, sdma.c; the hfi1 module parameters). */
export async function readDescqCnt(
  fs: HwFs,
  params: string,
): Promise<{ descqCnt: number; param: number | null; warning?: SourceWarning }> {
  const file = join(params, 'sdma_descq_cnt');
  let text: string | null;
  try {
    text = await readTextOrNull(fs, file);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'EFBIG') throw readError(e, file); // larger than a parameter can be: malformed
    const why = oddReason(e) ?? `cannot be read (${code || e})`;
    const message = `${file}: ${why}; assuming the driver's default ring size ${SDMA_DESCQ_CNT_DEFAULT}`;
    return {
      descqCnt: SDMA_DESCQ_CNT_DEFAULT,
      param: null,
      warning: { source: 'sysfs', path: file, key: 'sysfs:descq-cnt-param', message },
    };
  }
  if (text === null) {
    // Absent is the driver's default; a link to nothing (never a kernel file) is said, as vl and cpu_list are.
    const dangling = await fs.readlink(file).then(
      () => true,
      () => false,
    );
    if (!dangling) return { descqCnt: SDMA_DESCQ_CNT_DEFAULT, param: null };
    const message = `${file}: a symbolic link to nothing; assuming the driver's default ring size ${SDMA_DESCQ_CNT_DEFAULT}`;
    return {
      descqCnt: SDMA_DESCQ_CNT_DEFAULT,
      param: null,
      warning: { source: 'sysfs', path: file, key: 'sysfs:descq-cnt-param', message },
    };
  }
  const param = parseUintParam(text, file);
  return { descqCnt: descqCntFromParam(param), param };
}

/**
 * The names in sys/class/infiniband; none when it does not exist. A directory on the way that
 * cannot be read is E_PERMISSION naming it: "no unit" would be a lie.
 */
async function listInfiniband(sysroot: string, fs: HwFs): Promise<string[]> {
  const dir = infinibandDir(sysroot);
  try {
    return await fs.readdir(dir);
  } catch (e) {
    const code = errnoCode(e);
    if (code !== 'EACCES' && code !== 'EPERM') return [];
    let blocked = dir;
    let at = sysroot;
    for (const part of relative(sysroot, dir).split('/')) {
      at = join(at, part);
      if ((await readdirOrNull(fs, at)) === null) {
        blocked = at;
        break;
      }
    }
    throw new Hfi1SdmaError(
      'E_PERMISSION',
      `${blocked}: permission denied (${code}): cannot look for hfi1 units under ${dir}; run as a user who can read it (e.g. root)`,
      { cause: e },
    );
  }
}

/** The absolute engine indexes of the sdma<E> directories of a class directory, ascending. */
function engineDirIdsOf(entries: readonly string[], classDir: string): number[] {
  const ids = entries
    .map((n) => /^sdma(0|[1-9][0-9]{0,2})$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const over = ids.find((e) => e >= TXE_NUM_SDMA_ENGINES);
  if (over !== undefined) {
    throw new Hfi1SdmaError(
      'E_PARSE',
      `${join(classDir, `sdma${over}`)}: ${ids.length} sdma<N> directories, but the chip has ${TXE_NUM_SDMA_ENGINES} SDMA engines (sdma0 to sdma${TXE_NUM_SDMA_ENGINES - 1}): not a tree the hfi1 or hfi2 driver wrote; check the tree`,
    );
  }
  return ids;
}

/** The `sde` window of hw_resources; a malformed file is a warning (other sources give the engines). */
async function readSdeWindow(fs: HwFs, file: string): Promise<{ window: SdeWindow | null; warning?: SourceWarning }> {
  try {
    const text = await readTextOrNull(fs, file);
    return { window: text === null ? null : parseSdeWindow(text, file) };
  } catch (e) {
    const message = `${file}: ${(e as Error).message}; the engine window comes from sdes or the BAR instead`;
    return { window: null, warning: { source: 'sysfs', path: file, key: 'sysfs:hw-resources', message } };
  }
}

/**
 * Every hfi1 and hfi2 unit under the sysroot, by module then unit number. With `chipOnly` (a caller that needs
 * only each unit's chip, such as decode) the ring size and engine window are not read: their defaults stand.
 */
export async function discoverUnits(
  sysroot: string,
  fs: HwFs = hwFsFor(sysroot),
  o: { chipOnly?: boolean } = {},
): Promise<FoundUnit[]> {
  const names = await listInfiniband(sysroot, fs);
  const out: FoundUnit[] = [];
  for (const name of names) {
    const m = UNIT.exec(name);
    if (!m) continue;
    const nameModule = m[1] as HfiModule;
    const classDir = join(infinibandDir(sysroot), name);
    let pci = '';
    const link = await fs.readlink(join(classDir, 'device')).catch(() => null);
    if (link !== null && BDF.test(basename(link))) pci = basename(link);
    const probe = unitPaths(sysroot, name, pci, nameModule);
    const id = await pciId(fs, probe.pciDir);
    if (id !== null && chipOfPciId(id) === null) continue; // an RDMA device of another driver, or a chip this tool does not know
    const driverLink = await fs.readlink(probe.driverLink).catch(() => null);
    const { module } = decideModule({ nameModule, driverLink });
    const paths = module === nameModule ? probe : unitPaths(sysroot, name, pci, module);
    const entries = (await readdirOrNull(fs, classDir)) ?? [];
    const engineDirIds = engineDirIdsOf(entries, classDir);
    const params = (await readdirOrNull(fs, paths.params)) ?? [];
    const ports = (await readdirOrNull(fs, join(classDir, 'ports'))) ?? [];
    const bar0Bytes = (await fs.size?.(paths.resource0)) ?? null;
    const flavourInputs: FlavourInputs = { name, nameModule, driverLink, pciId: id, bar0Bytes, params, ports };
    const { chip } = decideChip(flavourInputs);
    const { descqCnt, param, warning } = o.chipOnly
      ? { descqCnt: SDMA_DESCQ_CNT_DEFAULT, param: null, warning: undefined }
      : await readDescqCnt(fs, paths.params);
    const sde = o.chipOnly ? { window: null, warning: undefined } : await readSdeWindow(fs, paths.hwResources);
    const warnings = [warning, sde.warning].filter((w): w is SourceWarning => w !== undefined);
    out.push({
      unit: Number(m[2]),
      name,
      pci,
      module,
      chip,
      flavourInputs,
      engineDirIds,
      engineDirs: engineDirIds.length,
      sdeWindow: sde.window,
      descqCnt,
      descqCntParam: param,
      paths,
      warnings,
    });
  }
  return out.sort((a, b) => a.module.localeCompare(b.module) || a.unit - b.unit);
}

/** A unit name of hfi1 or hfi2 whose device/vendor and device/device name no chip this tool knows: left out. */
export interface UnknownChipUnit {
  name: string;
  /** device/vendor, the file named when telling. */
  vendorFile: string;
  id: PciIdentity;
}

/** The hfi1_N and hfi2_N names discovery leaves out because their PCI id is no chip it knows (a newer chip, or garbled files). */
export async function unknownChipUnits(sysroot: string, fs: HwFs = hwFsFor(sysroot)): Promise<UnknownChipUnit[]> {
  const out: UnknownChipUnit[] = [];
  for (const name of (await readdirOrNull(fs, infinibandDir(sysroot))) ?? []) {
    const m = UNIT.exec(name);
    if (!m) continue;
    const classDir = join(infinibandDir(sysroot), name);
    const link = await fs.readlink(join(classDir, 'device')).catch(() => null);
    const pci = link !== null && BDF.test(basename(link)) ? basename(link) : '';
    const { pciDir } = unitPaths(sysroot, name, pci, m[1] as HfiModule);
    const id = await pciId(fs, pciDir);
    if (id !== null && chipOfPciId(id) === null) out.push({ name, vendorFile: join(pciDir, 'vendor'), id });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Omni-Path HFIs on the PCI bus (8086:24f0/24f1 and 434e:0001), bound or not: for `doctor` to say "driver not bound". */
export async function findHfiPciDevices(sysroot: string, fs: HwFs = hwFsFor(sysroot)): Promise<string[]> {
  const out: string[] = [];
  for (const bdf of (await readdirOrNull(fs, pciDevicesDir(sysroot))) ?? []) {
    const id = await pciId(fs, join(pciDevicesDir(sysroot), bdf));
    if (id && isHfi1PciId(id.vendor, id.device)) out.push(bdf);
  }
  return out.sort();
}
