// Discovery: hfi1 units under sys/class/infiniband, their PCI device, engine count and ring size.
import { basename, join, relative } from 'node:path';
import type { SourceWarning } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import {
  PCI_DEVICE_HFI1_DISCRETE,
  PCI_DEVICE_HFI1_INTEGRATED,
  PCI_VENDOR_INTEL,
  SDMA_DESCQ_CNT_DEFAULT,
  TXE_NUM_SDMA_ENGINES,
} from '../progress/constants.js';
import { descqCntFromParam } from '../progress/ring.js';
import { errnoCode, type HwFs, notRegularReason, readdirOrNull, readError, readTextOrNull, realFs } from './fsio.js';
import { parseUintParam } from './parse/sysfs.js';
import { infinibandDir, pciDevicesDir, type UnitPaths, unitPaths } from './paths.js';

/** A unit as discovery finds it, before any source is probed. */
export interface FoundUnit {
  unit: number;
  name: string;
  pci: string;
  /** sdma<N> directories found (sdma<N>/vl and cpu_list, sysfs.c); 0 when the kernel has none (before v4.8). */
  engineDirs: number;
  /** Ring size by the rule of sdma_get_descq_cnt (sdma.c) from sdma_descq_cnt (2048 when the parameter is not there). */
  descqCnt: number;
  /** The raw parameter, when readable. */
  descqCntParam: number | null;
  paths: UnitPaths;
  /** What discovery could not use and did without (e.g. a ring-size parameter that is a directory). */
  warnings: SourceWarning[];
}

const BDF = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;
const UNIT = /^hfi1_([0-9]{1,3})$/;

/** True for the Omni-Path HFI PCI IDs (num_sdma, chip.c). */
export function isHfi1PciId(vendor: number, device: number): boolean {
  return vendor === PCI_VENDOR_INTEL && (device === PCI_DEVICE_HFI1_DISCRETE || device === PCI_DEVICE_HFI1_INTEGRATED);
}

async function pciId(fs: HwFs, dir: string): Promise<{ vendor: number; device: number } | null> {
  const v = await readTextOrNull(fs, join(dir, 'vendor')).catch(() => null);
  const d = await readTextOrNull(fs, join(dir, 'device')).catch(() => null);
  if (v === null || d === null) return null;
  const vendor = Number.parseInt(v.trim(), 16);
  const device = Number.parseInt(d.trim(), 16);
  return Number.isNaN(vendor) || Number.isNaN(device) ? null : { vendor, device };
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
    const why = code === 'ENOTREG' ? notRegularReason((e as { detail: string }).detail) : `cannot be read (${code || e})`;
    const message = `${file}: ${why}; assuming the driver's default ring size ${SDMA_DESCQ_CNT_DEFAULT}`;
    return {
      descqCnt: SDMA_DESCQ_CNT_DEFAULT,
      param: null,
      warning: { source: 'sysfs', path: file, key: 'sysfs:descq-cnt-param', message },
    };
  }
  if (text === null) return { descqCnt: SDMA_DESCQ_CNT_DEFAULT, param: null };
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

/** Every hfi1 unit under the sysroot, by unit number. */
export async function discoverUnits(sysroot: string, fs: HwFs = realFs): Promise<FoundUnit[]> {
  const names = await listInfiniband(sysroot, fs);
  const out: FoundUnit[] = [];
  for (const name of names) {
    const m = UNIT.exec(name);
    if (!m) continue;
    const classDir = join(infinibandDir(sysroot), name);
    let pci = '';
    const link = await fs.readlink(join(classDir, 'device')).catch(() => null);
    if (link !== null && BDF.test(basename(link))) pci = basename(link);
    const paths = unitPaths(sysroot, name, pci);
    const id = await pciId(fs, paths.pciDir);
    if (id !== null && !isHfi1PciId(id.vendor, id.device)) continue; // an RDMA device of another driver
    const entries = (await readdirOrNull(fs, classDir)) ?? [];
    let engineDirs = 0;
    while (entries.includes(`sdma${engineDirs}`)) engineDirs++;
    if (engineDirs > TXE_NUM_SDMA_ENGINES) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${join(classDir, `sdma${TXE_NUM_SDMA_ENGINES}`)}: ${engineDirs} sdma<N> directories, but the chip has ${TXE_NUM_SDMA_ENGINES} SDMA engines (sdma0 to sdma${TXE_NUM_SDMA_ENGINES - 1}): not a tree the hfi1 driver wrote; check the tree`,
      );
    }
    const { descqCnt, param, warning } = await readDescqCnt(fs, paths.params);
    const warnings = warning ? [warning] : [];
    out.push({ unit: Number(m[1]), name, pci, engineDirs, descqCnt, descqCntParam: param, paths, warnings });
  }
  return out.sort((a, b) => a.unit - b.unit);
}

/** Omni-Path HFIs on the PCI bus (num_sdma, chip.c), bound or not: for `doctor` to say "driver not bound". */
export async function findHfiPciDevices(sysroot: string, fs: HwFs = realFs): Promise<string[]> {
  const out: string[] = [];
  for (const bdf of (await readdirOrNull(fs, pciDevicesDir(sysroot))) ?? []) {
    const id = await pciId(fs, join(pciDevicesDir(sysroot), bdf));
    if (id && isHfi1PciId(id.vendor, id.device)) out.push(bdf);
  }
  return out.sort();
}
