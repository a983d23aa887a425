// Rendering sdes text (sdma_seqfile_dump_sde, sdma.c) from values, in the three variants, for property tests.
import type { SdesHeader } from '../../src/hw/parse/sdes.js';

/** A descriptor as a test generates it. */
export interface GenDescriptor {
  flags: string;
  addr: number;
  gen: number;
  len: number;
  ahgIdx: number;
  ahgMode: number;
  qw0: bigint;
  qw1: bigint;
}

export type Variant = 'upstream' | 'staging' | 'cornelis';

const x = (v: bigint | number) => `0x${v.toString(16)}`;

/** One header line (sdma_seqfile_dump_sde, sdma.c). */
export function headerLine(h: SdesHeader, variant: Variant): string {
  const cpu = variant === 'staging' ? '' : ` CPU ${h.cpu ?? 0}`;
  return `SDE ${h.engine}${cpu} STE ${h.state} C ${x(h.ctrl)} S 0x${h.status.toString(16).padStart(16, '0')} E ${x(h.errStatus)} T(HW) ${x(h.hwTail)} T(SW) ${x(h.swTail)} H(HW) ${x(h.hwHead)} H(SW) ${x(h.swHead)} H(D) ${x(h.headDma)} DM ${x(h.memory)} GL ${x(h.lenGen)} R ${x(h.reloadCnt)} LIS ${x(h.lastStatus)} AHGI ${x(h.ahgBits)} TXT ${h.txTail} TXH ${h.txHead} DT ${h.descqTail} DH ${h.descqHead} FLNE ${h.flushListNonEmpty ? 1 : 0} DQF ${h.descqFullCount} SLC ${x(h.checkSlid)}\n`;
}

/** One descriptor line and, after a FIRST descriptor, its AHG line (sdma_seqfile_dump_sde, sdma.c). */
export function descriptorLines(slot: number, d: GenDescriptor, variant: Variant): string {
  const head = `\tdesc[${slot}]: flags:${d.flags} addr:0x${d.addr.toString(16).padStart(16, '0')} gen:${d.gen} len:${d.len}`;
  const first = d.flags[2] === 'F';
  if (variant === 'cornelis') {
    const line = `${head} d0:0x${d.qw0.toString(16).padStart(16, '0')} d1:0x${d.qw1.toString(16).padStart(16, '0')}\n`;
    return first ? `${line}\t\taidx:${d.ahgIdx} amode:${d.ahgMode} alen:${d.ahgIdx + 1}\n` : line;
  }
  return first ? `${head} bytes\n\t\tahgidx: ${d.ahgIdx} ahgmode: ${d.ahgMode}\n` : `${head} bytes\n`;
}
