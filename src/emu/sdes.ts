// The kernel's text and binary formats the sysroot writer produces: the debugfs `sdes` records
// (sdma_seqfile_dump_sde, sdma.c), counter_names / counters (the debugfs counters, debugfs.c) and /proc/interrupts (/proc/interrupts). Pure functions of samples.
import type { DriverBuild, EngineSample, RingDescriptor, RingDump } from '../backend.js';
import {
  COUNTER_DESC_FETCHED,
  COUNTER_ERR,
  COUNTER_IDLE_INT,
  COUNTER_PROGRESS_INT,
  COUNTER_SDMA_INT,
  ENG_ERR_BITS,
  TXE_NUM_SDMA_ENGINES,
} from '../progress/constants.js';
import { hex, hex16 } from '../progress/descriptor.js';

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

/** counter_names entries and values (the debugfs counters, debugfs.c): per-engine 32-bit counters for all 16 chip engines, then the error counters. */
export function counterTable(
  samples: readonly EngineSample[],
  errBitCounts: readonly number[],
): { names: string[]; values: bigint[] } {
  const names: string[] = [];
  const values: bigint[] = [];
  const perEngine: [string, (s: EngineSample) => bigint | undefined][] = [
    [COUNTER_DESC_FETCHED, (s) => s.counters?.descFetched],
    [COUNTER_SDMA_INT, (s) => s.counters?.sdmaInt],
    [COUNTER_ERR, (s) => s.counters?.errCount],
    [COUNTER_IDLE_INT, (s) => s.counters?.idleInt],
    [COUNTER_PROGRESS_INT, (s) => s.counters?.progressInt],
  ];
  const byEngine: (EngineSample | undefined)[] = [];
  for (const s of samples) byEngine[s.engine] = s; // keyed by absolute index: 0 outside the unit's window
  for (const [name, get] of perEngine) {
    for (let i = 0; i < TXE_NUM_SDMA_ENGINES; i++) {
      const s = byEngine[i];
      names.push(`${name}${i},32`);
      values.push(s ? (get(s) ?? 0n) & 0xffff_ffffn : 0n);
    }
  }
  for (const b of ENG_ERR_BITS) {
    if (b.name === 'reserved') continue;
    names.push(b.name);
    values.push(BigInt(errBitCounts[b.bit] ?? 0));
  }
  names.push('SDmaRpyTagErr', 'SDmaCsrParityErr');
  values.push(0n, 0n);
  return { names, values };
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

/** /proc/interrupts with one MSI-X vector per engine named `hfi1_<u> sdma<E>` (`hfi2_…` for hfi2; E absolute) (msix.c). */
export function procInterrupts(
  unit: number,
  pci: string,
  cpus: number,
  engineCpu: readonly number[],
  counts: readonly number[],
  module: 'hfi1' | 'hfi2' = 'hfi1',
  engineIds?: readonly number[],
): string {
  const prec = 3;
  let out = `${' '.repeat(prec + 8)}${Array.from({ length: cpus }, (_, j) => `CPU${j}`.padEnd(11)).join('')}`.trimEnd();
  out += '\n';
  const line = (irq: number, perCpu: number[], chip: string, name: string) =>
    `${String(irq).padStart(prec)}: ${perCpu.map((n) => `${String(n).padStart(10)} `).join('')} ${chip}  ${name}\n`;
  const zeros = () => new Array<number>(cpus).fill(0);
  out += line(0, zeros(), '  IO-APIC    2-edge     ', 'timer');
  out += line(150, zeros(), ` IR-PCI-MSI-${pci}    0-edge     `, `${module}_${unit}`);
  engineCpu.forEach((cpu, i) => {
    const per = zeros();
    per[cpu % cpus] = counts[i] ?? 0;
    const e = engineIds?.[i] ?? i;
    out += line(151 + i, per, ` IR-PCI-MSI-${pci} ${String(i + 1).padStart(4)}-edge     `, `${module}_${unit} sdma${e}`);
  });
  return out;
}
