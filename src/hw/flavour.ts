// What a unit is: its kernel module, its chip and the driver build, each decided from what the tree shows, with
// one evidence line per decision (UnitFlavour). Pure: discovery reads the files and passes what it found.
//
// The rules (choices where the facts are not settled are marked so):
// - module: the basename of the PCI device's `driver` link when there is one, else the unit name's prefix;
// - chip: the PCI vendor and device (8086:24f0/24f1 WFR, 434e:0001 JKR), else the size of resource0
//   (128 MiB JKR, 64 MiB WFR; the BAR0 sizes of chip_jkr.h and chip.h), else WFR;
// - driver build: module hfi2 is `hfi2`; module hfi1 is `cornelis` when the chip is JKR (upstream hfi1 does not
//   drive it), when sys/module/hfi1/parameters has a parameter only the Cornelis build has, or when sdes prints a
//   line of the newer form (d0/d1 descriptors, aidx AHG lines); else `upstream`;
// - ports: the count of ports/<n> directories of the class device (1 when there are none).
import type { ChipKind, DriverBuild, UnitFlavour } from '../backend.js';
import { chipModel } from '../progress/chip.js';
import { BAR0_SIZE, PCI_DEVICE_HFI1_DISCRETE, PCI_DEVICE_HFI1_INTEGRATED, PCI_VENDOR_INTEL } from '../progress/constants.js';
import type { HfiModule } from './paths.js';

/** PCI_VENDOR_ID_CORNELIS and PCI_DEVICE_ID_CORNELIS_CN5000 (the hfi2 PCI table, pcie.c). */
export const PCI_VENDOR_CORNELIS = 0x434e;
export const PCI_DEVICE_CN5000 = 0x0001;
/** The CN5000 subsystem devices: 0x0002 dual-port, 0x0003 single-port PS, 0x0004 dual-port PS. */
export const CN5000_SUBSYSTEMS: readonly number[] = [0x0002, 0x0003, 0x0004];

/** Module parameters only the Cornelis hfi1 build (and hfi2) has (module_param_named lines of its sdma.c). */
export const CORNELIS_PARAMS: readonly string[] = [
  'pad_sdma_desc',
  'sdma_align',
  'enable_jkr_sdma_mem_init',
  'jkr_sdma_credits_limit',
];

/** A PCI identity read from device/vendor, device/device (and subsystem_device when present). */
export interface PciIdentity {
  vendor: number;
  device: number;
  subsystemDevice?: number | null;
}

/** The chip of a PCI identity, or null when it is not an Omni-Path HFI (an RDMA device of another driver). */
export function chipOfPciId(id: PciIdentity): ChipKind | null {
  if (id.vendor === PCI_VENDOR_INTEL && (id.device === PCI_DEVICE_HFI1_DISCRETE || id.device === PCI_DEVICE_HFI1_INTEGRATED)) {
    return 'wfr';
  }
  if (id.vendor === PCI_VENDOR_CORNELIS && id.device === PCI_DEVICE_CN5000) return 'jkr';
  return null;
}

const hex4 = (n: number) => n.toString(16).padStart(4, '0');

/** What discovery read for a unit. */
export interface FlavourInputs {
  name: string;
  /** The unit name's module prefix. */
  nameModule: HfiModule;
  /** The target of the PCI device's `driver` link, or null when there is none. */
  driverLink: string | null;
  pciId: PciIdentity | null;
  /** The size of resource0 in bytes, or null when it is not there. */
  bar0Bytes: number | null;
  /** The file names in sys/module/<module>/parameters (empty when the directory is absent). */
  params: readonly string[];
  /** The port directories under ports/ (e.g. ['1', '2']). */
  ports: readonly string[];
}

/** The module: the driver link's basename (hfi1/hfi2), else the name's prefix. */
export function decideModule(i: Pick<FlavourInputs, 'nameModule' | 'driverLink'>): { module: HfiModule; evidence: string } {
  const base = i.driverLink?.split('/').filter(Boolean).pop() ?? null;
  if (base === 'hfi1' || base === 'hfi2')
    return { module: base, evidence: `module ${base}: device/driver links to ${i.driverLink}` };
  const why = base === null ? 'no device/driver link' : `device/driver links to ${i.driverLink}, not hfi1 or hfi2`;
  return { module: i.nameModule, evidence: `module ${i.nameModule}: the unit name's prefix (${why})` };
}

/** The chip: the PCI identity, else the BAR0 size, else WFR. */
export function decideChip(i: Pick<FlavourInputs, 'pciId' | 'bar0Bytes'>): { chip: ChipKind; evidence: string } {
  if (i.pciId) {
    const chip = chipOfPciId(i.pciId);
    if (chip !== null) {
      const sub = i.pciId.subsystemDevice != null ? `, subsystem ${hex4(i.pciId.subsystemDevice)}` : '';
      return {
        chip,
        evidence: `chip ${chip}: PCI id ${hex4(i.pciId.vendor)}:${hex4(i.pciId.device)}${sub} (device/vendor, device/device)`,
      };
    }
  }
  const jkrBytes = chipModel('jkr').bar0Size;
  if (i.bar0Bytes === jkrBytes)
    return { chip: 'jkr', evidence: `chip jkr: no PCI id; resource0 is ${jkrBytes >> 20} MiB (the JKR BAR0)` };
  if (i.bar0Bytes === BAR0_SIZE)
    return { chip: 'wfr', evidence: `chip wfr: no PCI id; resource0 is ${BAR0_SIZE >> 20} MiB (the WFR BAR0)` };
  return { chip: 'wfr', evidence: 'chip wfr: neither a PCI id nor a BAR0 of a known size; assumed' };
}

/** The first sdes line of the newer form (d0/d1 descriptor or aidx AHG line), as the sdes parser reports it. */
export interface NewSdesLine {
  line: number;
  kind: 'descriptor' | 'ahg';
}

/** The driver build by the rules above. `sdesLine` is the first newer-form sdes line, when sdes was read. */
export function decideDriver(
  module: HfiModule,
  chip: ChipKind,
  params: readonly string[],
  paramsDir: string,
  sdesLine: NewSdesLine | null,
  sdesFile: string,
): { driver: DriverBuild; evidence: string } {
  if (module === 'hfi2') return { driver: 'hfi2', evidence: 'driver hfi2: the hfi2 module' };
  if (chip === 'jkr')
    return { driver: 'cornelis', evidence: 'driver cornelis: hfi1 on a JKR chip (upstream hfi1 does not drive JKR)' };
  const param = CORNELIS_PARAMS.find((p) => params.includes(p));
  if (param !== undefined) return { driver: 'cornelis', evidence: `driver cornelis: ${paramsDir} has ${param}` };
  if (sdesLine !== null) {
    const what = sdesLine.kind === 'descriptor' ? 'a descriptor line with d0/d1' : 'an aidx/amode/alen AHG line';
    return { driver: 'cornelis', evidence: `driver cornelis: ${sdesFile} line ${sdesLine.line} is ${what}` };
  }
  return { driver: 'upstream', evidence: 'driver upstream: hfi1 on WFR without the Cornelis parameters or sdes lines' };
}

/** The port count: ports/<n> directories, 1 when none. */
export function decidePorts(ports: readonly string[]): { ports: number; evidence: string } {
  const n = ports.filter((p) => /^[1-9][0-9]?$/.test(p)).length;
  if (n === 0) return { ports: 1, evidence: 'ports 1: no ports/<n> directory; assumed' };
  return { ports: n, evidence: `ports ${n}: ${ports.map((p) => `ports/${p}`).join(', ')}` };
}

/** The whole flavour. */
export function decideFlavour(i: FlavourInputs, paramsDir: string, sdesLine: NewSdesLine | null, sdesFile: string): UnitFlavour {
  const m = decideModule(i);
  const c = decideChip(i);
  const d = decideDriver(m.module, c.chip, i.params, paramsDir, sdesLine, sdesFile);
  const p = decidePorts(i.ports);
  return {
    module: m.module,
    chip: c.chip,
    driver: d.driver,
    ports: p.ports,
    evidence: [m.evidence, c.evidence, d.evidence, p.evidence],
  };
}
