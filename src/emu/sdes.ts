// The kernel's text and binary formats the sysroot writer produces: the debugfs `sdes` records
// (sdma_seqfile_dump_sde, sdma.c), counter_names / counters (the debugfs counters, debugfs.c) and /proc/interrupts
// (show_interrupts, kernel/irq/proc.c). Pure functions of samples.
import type { DriverBuild, EngineSample, RingDescriptor, RingDump } from '../backend.js';
import {
  COUNTER_DESC_FETCHED,
  COUNTER_ERR,
  COUNTER_IDLE_INT,
  COUNTER_PROGRESS_INT,
  COUNTER_SDMA_INT,
  ENG_ERR_BITS,
} from '../progress/constants.js';
import { hex, hex16 } from '../progress/descriptor.js';
import { DEV_COUNTER_NAMES } from './dev-counters.js';

const ONES = 0xffffffffffffffffn;

/** The 23-field header line of one engine's `sdes` record (sdma_seqfile_dump_sde, sdma.c). */
export function sdesHeader(s: EngineSample): string {
  const c = s.csr;
  const w = s.sw;
  if (!c || !w) throw new Error(`engine ${s.engine}: an sdes record needs the CSRs and the software state`);
  return (
    `SDE ${s.engine} CPU ${s.cpu ?? -1} STE ${s.state ?? 's00_HwDown'} C ${hex(c.ctrl)} S ${hex16(c.status)} E ${hex(c.errStatus)}` +
    ` T(HW) ${hex(c.hwTail)} T(SW) ${hex(w.swTail)} H(HW) ${hex(c.hwHead)} H(SW) ${hex(w.swHead)} H(D) ${hex(c.headDma ?? 0n)}` +
    ` DM ${hex(c.memory)} GL ${hex(c.lenGen)} R ${hex(c.reloadCnt)} LIS ${hex(w.lastStatus)} AHGI ${hex(w.ahgBits)}` +
    ` TXT ${w.txTail} TXH ${w.txHead} DT ${w.descqTail >>> 0} DH ${w.descqHead >>> 0} FLNE ${w.flushListNonEmpty ? 1 : 0}` +
    ` DQF ${w.descqFullCount >>> 0} SLC ${hex(c.checkSlid)}\n`
  );
}

/**
 * The line (two for a FIRST descriptor) one descriptor gets in an `sdes` record (sdma_seqfile_dump_sde, sdma.c):
 * upstream `… len:%u bytes` / `ahgidx: ahgmode:`, cornelis and hfi2 `… len:%u d0:0x… d1:0x…` / `aidx: amode: alen:`.
 */
export function descriptorLines(d: RingDescriptor, driver: DriverBuild = 'upstream'): string {
  const head = `\tdesc[${d.slot}]: flags:${d.flags} addr:${hex16(d.addr)} gen:${d.gen} len:${d.len}`;
  if (driver === 'upstream') {
    const line = `${head} bytes\n`;
    return d.flags[2] === 'F' ? `${line}\t\tahgidx: ${d.ahgIdx ?? 0} ahgmode: ${d.ahgMode ?? 0}\n` : line;
  }
  const line = `${head} d0:${hex16(d.qw0 ?? 0n)} d1:${hex16(d.qw1 ?? 0n)}\n`;
  const alen = Number(((d.qw1 ?? 0n) >> 4n) & 0xfn);
  return d.flags[2] === 'F' ? `${line}\t\taidx:${d.ahgIdx ?? 0} amode:${d.ahgMode ?? 0} alen:${alen}\n` : line;
}

/** One engine's `sdes` record: the 23-field header, then one line per descriptor (sdma_seqfile_dump_sde, sdma.c). */
export function sdesRecord(s: EngineSample, ring: RingDump, driver: DriverBuild = 'upstream'): string {
  let body = '';
  for (const d of ring.descriptors) body += descriptorLines(d, driver);
  return sdesHeader(s) + body;
}

/** The whole `sdes` file: every engine's record in order. */
export function sdesText(samples: readonly EngineSample[], rings: readonly RingDump[], driver: DriverBuild = 'upstream'): string {
  return samples.map((s, i) => sdesRecord(s, rings[i] as RingDump, driver)).join('');
}

/**
 * counter_names entries and values (the debugfs counters, debugfs.c; init_cntrs, chip.c): every device counter in
 * dev_cntrs[] order (dev-counters.ts). The model moves the per-engine 32-bit counters (keyed by absolute engine index;
 * 0 outside the unit's window), the SDMA error counters and the port's flit and packet counts (`extra`, by name); the
 * others read 0.
 */
export function counterTable(
  samples: readonly EngineSample[],
  errBitCounts: readonly number[],
  extra: ReadonlyMap<string, bigint> = new Map(),
): { names: readonly string[]; values: bigint[] } {
  const known = new Map<string, bigint>(extra);
  const perEngine: [string, (s: EngineSample) => bigint | undefined][] = [
    [COUNTER_DESC_FETCHED, (s) => s.counters?.descFetched],
    [COUNTER_SDMA_INT, (s) => s.counters?.sdmaInt],
    [COUNTER_ERR, (s) => s.counters?.errCount],
    [COUNTER_IDLE_INT, (s) => s.counters?.idleInt],
    [COUNTER_PROGRESS_INT, (s) => s.counters?.progressInt],
  ];
  for (const s of samples) {
    for (const [name, get] of perEngine) known.set(`${name}${s.engine},32`, (get(s) ?? 0n) & 0xffff_ffffn);
  }
  for (const b of ENG_ERR_BITS) if (b.name !== 'reserved') known.set(b.name, BigInt(errBitCounts[b.bit] ?? 0));
  return { names: DEV_COUNTER_NAMES, values: DEV_COUNTER_NAMES.map((n) => known.get(n) ?? 0n) };
}

/** The binary `counters` file: native-endian u64 per name (the debugfs counters, debugfs.c). */
export function countersBinary(values: readonly bigint[], littleEndian: boolean): Buffer {
  const b = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => {
    if (littleEndian) b.writeBigUInt64LE(v & ONES, i * 8);
    else b.writeBigUInt64BE(v & ONES, i * 8);
  });
  return b;
}

/** The IRQ column's width (show_interrupts, kernel/irq/proc.c: 3 while nr_irqs ≤ 1000, as on a 16-CPU host with one I/O APIC). */
const IRQ_PREC = 3;

/**
 * hwirq of MSI-X entry `entry` of PCI function `pci` in the PCI-MSI domain of a 5.14 kernel (pci_msi_domain_calc_hwirq,
 * drivers/pci/msi.c): the entry, the requester ID (bus << 8 | devfn) from bit 11, the PCI domain from bit 27.
 */
export function pciMsiHwirq(pci: string, entry: number): number {
  const m = /^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/i.exec(pci);
  if (!m) throw new Error(`${pci}: not a PCI address (dddd:bb:dd.f)`);
  const [domain, bus, dev, fn] = [m[1], m[2], m[3], m[4]].map((x) => Number.parseInt(x as string, 16)) as number[];
  const rid = ((bus as number) << 8) | ((dev as number) << 3) | (fn as number);
  return entry + rid * 2 ** 11 + (domain as number) * 2 ** 27;
}

/**
 * /proc/interrupts as show_interrupts (kernel/irq/proc.c) prints it on the emulated 5.14 host: a header of `%*s`
 * (IRQ_PREC + 8) and `CPU%-8d` per CPU; per IRQ `%*d: `, `%10u ` per CPU, the chip name ` %8s`, the hwirq ` %*lu`, the
 * flow handler's name `-%-8s` and `  %s` the action. The unit's MSI-X vectors (pci_alloc_irq_vectors with PCI_IRQ_MSIX,
 * msix.c) are in the interrupt-remapped PCI-MSI domain of that kernel, `IR-PCI-MSI` with pciMsiHwirq numbers (kernels
 * from 6.2 name a per-device domain `IR-PCI-MSIX-<bdf>` with the entry as hwirq): entry 0 the general vector
 * `hfi1_<u>`, then one per engine, `hfi1_<u> sdma<E>` (`hfi2_…` for hfi2; E absolute).
 */
export function procInterrupts(
  unit: number,
  pci: string,
  cpus: number,
  engineCpu: readonly number[],
  counts: readonly number[],
  module: 'hfi1' | 'hfi2' = 'hfi1',
  engineIds?: readonly number[],
): string {
  let out = ' '.repeat(IRQ_PREC + 8);
  for (let j = 0; j < cpus; j++) out += `CPU${String(j).padEnd(8)}`;
  out += '\n';
  const line = (irq: number, perCpu: number[], chip: string, hwirq: number, name: string) =>
    `${String(irq).padStart(IRQ_PREC)}: ${perCpu.map((n) => `${String(n).padStart(10)} `).join('')}` +
    ` ${chip.padStart(8)} ${String(hwirq).padStart(IRQ_PREC)}-${'edge'.padEnd(8)}  ${name}\n`;
  const zeros = () => new Array<number>(cpus).fill(0);
  out += line(0, zeros(), 'IO-APIC', 2, 'timer');
  out += line(150, zeros(), 'IR-PCI-MSI', pciMsiHwirq(pci, 0), `${module}_${unit}`);
  engineCpu.forEach((cpu, i) => {
    const per = zeros();
    per[cpu % cpus] = counts[i] ?? 0;
    const e = engineIds?.[i] ?? i;
    out += line(151 + i, per, 'IR-PCI-MSI', pciMsiHwirq(pci, i + 1), `${module}_${unit} sdma${e}`);
  });
  return out;
}
