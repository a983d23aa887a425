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
  /** In the `mixed` variant: this descriptor line and its AHG line in the newer (d0/d1, aidx) form. */
  newLine?: boolean;
  newAhg?: boolean;
  /** Address bits 57:48, printed only on a newer line (a JKR address). */
  wide?: number;
}

/** The variants: whole files of one form, or `mixed`, each line choosing its own form (the parser reads per line). */
export type Variant = 'upstream' | 'staging' | 'cornelis' | 'mixed';

/** The address a descriptor line prints: 58 bits on a newer line, 48 otherwise. */
export function printedAddr(d: GenDescriptor, variant: Variant): bigint {
  const wide = isNewLine(d, variant) ? BigInt(d.wide ?? 0) << 48n : 0n;
  return wide + BigInt(d.addr);
}

/** Whether the descriptor's line is printed in the newer form. */
export function isNewLine(d: GenDescriptor, variant: Variant): boolean {
  return variant === 'cornelis' || (variant === 'mixed' && d.newLine === true);
}

const x = (v: bigint | number) => `0x${v.toString(16)}`;

/** One header line (sdma_seqfile_dump_sde, sdma.c). */
export function headerLine(h: SdesHeader, variant: Variant): string {
  const cpu = variant === 'staging' ? '' : ` CPU ${h.cpu ?? 0}`;
  return `SDE ${h.engine}${cpu} STE ${h.state} C ${x(h.ctrl)} S 0x${h.status.toString(16).padStart(16, '0')} E ${x(h.errStatus)} T(HW) ${x(h.hwTail)} T(SW) ${x(h.swTail)} H(HW) ${x(h.hwHead)} H(SW) ${x(h.swHead)} H(D) ${x(h.headDma)} DM ${x(h.memory)} GL ${x(h.lenGen)} R ${x(h.reloadCnt)} LIS ${x(h.lastStatus)} AHGI ${x(h.ahgBits)} TXT ${h.txTail} TXH ${h.txHead} DT ${h.descqTail} DH ${h.descqHead} FLNE ${h.flushListNonEmpty ? 1 : 0} DQF ${h.descqFullCount} SLC ${x(h.checkSlid)}\n`;
}

/** One descriptor line and, after a FIRST descriptor, its AHG line (sdma_seqfile_dump_sde, sdma.c). */
export function descriptorLines(slot: number, d: GenDescriptor, variant: Variant): string {
  const addr = printedAddr(d, variant);
  const head = `\tdesc[${slot}]: flags:${d.flags} addr:0x${addr.toString(16).padStart(16, '0')} gen:${d.gen} len:${d.len}`;
  const first = d.flags[2] === 'F';
  const newAhg = variant === 'cornelis' || (variant === 'mixed' && d.newAhg === true);
  const ahg = newAhg
    ? `\t\taidx:${d.ahgIdx} amode:${d.ahgMode} alen:${d.ahgIdx + 1}\n`
    : `\t\tahgidx: ${d.ahgIdx} ahgmode: ${d.ahgMode}\n`;
  const line = isNewLine(d, variant)
    ? `${head} d0:0x${d.qw0.toString(16).padStart(16, '0')} d1:0x${d.qw1.toString(16).padStart(16, '0')}\n`
    : `${head} bytes\n`;
  return first ? `${line}${ahg}` : line;
}
