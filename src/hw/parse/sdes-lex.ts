// Byte-level pieces of the sdes scan (sdma_seqfile_dump_sde, sdma.c): literals, little-endian words of the fixed text,
// flag and hex lookup tables, and small number readers.
import { ascii, HEX_VALUE } from './text.js';

export const NL = 10;
export const TAB = 9;
export const SPACE = 32;
export const LIT_DESC = ascii('\tdesc[');
export const LIT_FLAGS = ascii(']: flags:');
export const LIT_ADDR = ascii(' addr:0x');
export const LIT_GEN = ascii(' gen:');
export const LIT_LEN = ascii(' len:');
export const LIT_BYTES = ascii(' bytes\n');
export const LIT_D0 = ascii(' d0:0x');
export const LIT_D1 = ascii(' d1:0x');
export const LIT_AHG = ascii('\t\tahgidx: ');
export const LIT_AHGMODE = ascii(' ahgmode: ');
export const LIT_AIDX = ascii('\t\taidx:');
export const LIT_AMODE = ascii(' amode:');
export const LIT_ALEN = ascii(' alen:');
export const FLAG_I = 73;
export const FLAG_H = 72;
export const FLAG_F = 70;
export const FLAG_L = 76;
export const DASH = 45;
/** Bytes a descriptor line may need before the fast path is safe to try (the d0/d1 form is ~110). */
export const FAST_ROOM = 128;
/** Little-endian words of the fixed text of a descriptor line (sdma_seqfile_dump_sde, sdma.c). */
export function le(s: string): number {
  let v = 0;
  for (let i = s.length - 1; i >= 0; i--) v = v * 256 + s.charCodeAt(i);
  return v;
}
export const W_TAB_DES = le('\tdes');
export const H_C_BRACKET = le('c[');
export const W_FLAGS1 = le(']: f');
export const W_FLAGS2 = le('lags');
export const W_ADDR1 = le(' add');
export const W_ADDR2 = le('r:0x');
export const W_GEN = le(' gen');
export const W_LEN = le(' len');
export const W_BYTES1 = le(' byt');
export const W_AHG1 = le('\t\tah');
export const W_AHG2 = le('gidx');
export const H_AHG3 = le(': ');
export const W_AHG4 = le(' ahg');
export const W_AHG5 = le('mode');
export const H_BYTES2 = le('es');
/** Flag bits by (position << 8 | byte): I=8 H=4 F=2 L=1 in the order I H F L, 0 for '-', −1 otherwise. */
export const FLAG_BITS: Int8Array = (() => {
  const t = new Int8Array(0x400).fill(-1);
  ['I', 'H', 'F', 'L'].forEach((c, pos) => {
    t[(pos << 8) | c.charCodeAt(0)] = 8 >> pos;
    t[(pos << 8) | DASH] = 0;
  });
  return t;
})();

/** Eight hex digits at p as a u32, or −1; needs 8 bytes of room. */
export function hex8fast(buf: Uint8Array, p: number): number {
  const a = HEX_VALUE[buf[p] as number] as number;
  const b = HEX_VALUE[buf[p + 1] as number] as number;
  const c = HEX_VALUE[buf[p + 2] as number] as number;
  const d = HEX_VALUE[buf[p + 3] as number] as number;
  const e = HEX_VALUE[buf[p + 4] as number] as number;
  const f = HEX_VALUE[buf[p + 5] as number] as number;
  const g = HEX_VALUE[buf[p + 6] as number] as number;
  const h = HEX_VALUE[buf[p + 7] as number] as number;
  if ((a | b | c | d | e | f | g | h) < 0) return -1;
  return ((a << 28) | (b << 24) | (c << 20) | (d << 16) | (e << 12) | (f << 8) | (g << 4) | h) >>> 0;
}

/** Eight hex digits at p as a u32, or −1. */
export function hex8(buf: Uint8Array, p: number): number {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const b = buf[p + i];
    if (b === undefined) return -1;
    const h = HEX_VALUE[b] as number;
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

/** A decimal at p no larger than max (no leading zeros): [value or −1, position after it]. */
export function dec(buf: Uint8Array, p: number, max: number): [number, number] {
  const start = p;
  let v = 0;
  for (let d = (buf[p] as number) - 48; d >= 0 && d <= 9 && p - start < 11; d = (buf[p] as number) - 48) {
    v = v * 10 + d;
    p++;
  }
  if (p === start || v > max || (buf[start] === 48 && p - start > 1)) return [-1, start];
  return [v, p];
}
