// The fast path of the sdes scan (sdma_seqfile_dump_sde, sdma.c): runs of upstream descriptor lines and their AHG lines,
// read with locals straight into the descriptor table. Anything unusual stops it; the careful
// per-line parser then re-reads that line and names the fault.
import type { SdesRecord } from './sdes.js';
import {
  FAST_ROOM,
  FLAG_BITS,
  H_AHG3,
  H_BYTES2,
  H_C_BRACKET,
  hex8fast,
  NL,
  TAB,
  W_ADDR1,
  W_ADDR2,
  W_AHG1,
  W_AHG2,
  W_AHG4,
  W_AHG5,
  W_BYTES1,
  W_FLAGS1,
  W_FLAGS2,
  W_GEN,
  W_LEN,
  W_TAB_DES,
} from './sdes-lex.js';
import type { DescriptorTable } from './sdes-table.js';

/** The scanner state the fast path reads and advances. */
export interface ScanState {
  readonly buf: Uint8Array;
  readonly dv: DataView;
  readonly mask: number;
  readonly table: DescriptorTable;
  open: SdesRecord | null;
  expected: number;
  nextSlot: number;
  lastFirst: boolean;
  line: number;
}

/**
 * The common case: consecutive descriptor lines (each with its optional AHG line) of the
 * upstream format, with at least FAST_ROOM bytes left, scanned with locals and the fixed text
 * compared four bytes at a time. Stops at the first line it does not accept and returns its
 * offset; descriptor() / ahg() then re-parse that line and name the fault.
 */
export function fastLines(s: ScanState, start: number): number {
  const rec = s.open;
  if (rec === null) return start;
  const buf = s.buf;
  const dv = s.dv;
  const limit = buf.length - FAST_ROOM;
  const mask = s.mask;
  const table = s.table;
  table.reserve(s.expected - rec.count);
  const slots = table.slot;
  const flagsCol = table.flags;
  const addrHiCol = table.addrHi;
  const addrLoCol = table.addrLo;
  const genCol = table.gen;
  const lenCol = table.len;
  const ahgCol = table.ahg;
  let row = table.length;
  const endRow = row + (s.expected - rec.count);
  let nextSlot = s.nextSlot;
  let lastFirst = s.lastFirst;
  let lines = 0;
  let p = start;
  let good = start;
  while (p <= limit) {
    if (buf[p + 1] === TAB) {
      // \t\tahgidx: N ahgmode: M\n after a FIRST descriptor
      if (!lastFirst || dv.getUint32(p, true) !== W_AHG1 || dv.getUint32(p + 4, true) !== W_AHG2) break;
      if (dv.getUint16(p + 8, true) !== H_AHG3) break;
      let q = p + 10;
      let idx = (buf[q] as number) - 48;
      if (idx < 0 || idx > 9) break;
      q++;
      const d2 = (buf[q] as number) - 48;
      if (d2 >= 0 && d2 <= 9) {
        if (idx === 0) break;
        idx = idx * 10 + d2;
        q++;
      }
      if (idx > 31 || dv.getUint32(q, true) !== W_AHG4 || dv.getUint32(q + 4, true) !== W_AHG5) break;
      if (dv.getUint16(q + 8, true) !== H_AHG3) break;
      const mode = (buf[q + 10] as number) - 48;
      if (mode < 0 || mode > 7 || buf[q + 11] !== NL) break;
      ahgCol[row - 1] = 1 + (idx | (mode << 5));
      lastFirst = false;
      p = q + 12;
    } else {
      // \tdesc[S]: flags:IHFL addr:0x%016llx gen:G len:L bytes\n
      if (row >= endRow || buf[p] !== TAB) break;
      if (dv.getUint32(p, true) !== W_TAB_DES || dv.getUint16(p + 4, true) !== H_C_BRACKET) break;
      let q = p + 6;
      let slot = (buf[q] as number) - 48;
      if (slot < 0 || slot > 9) break;
      q++;
      if (slot !== 0) {
        for (let d = (buf[q] as number) - 48; d >= 0 && d <= 9 && slot <= mask; d = (buf[q] as number) - 48) {
          slot = slot * 10 + d;
          q++;
        }
      }
      if (slot !== nextSlot) break;
      if (dv.getUint32(q, true) !== W_FLAGS1 || dv.getUint32(q + 4, true) !== W_FLAGS2 || buf[q + 8] !== 58) break;
      q += 9;
      const fi = FLAG_BITS[buf[q] as number] as number;
      const fh = FLAG_BITS[(buf[q + 1] as number) | 0x100] as number;
      const ff = FLAG_BITS[(buf[q + 2] as number) | 0x200] as number;
      const fl = FLAG_BITS[(buf[q + 3] as number) | 0x300] as number;
      if ((fi | fh | ff | fl) < 0) break;
      q += 4;
      if (dv.getUint32(q, true) !== W_ADDR1 || dv.getUint32(q + 4, true) !== W_ADDR2) break;
      q += 8;
      const addrHi = hex8fast(buf, q);
      const addrLo = hex8fast(buf, q + 8);
      if (addrHi < 0 || addrLo < 0 || addrHi > 0xffff) break;
      q += 16;
      if (dv.getUint32(q, true) !== W_GEN || buf[q + 4] !== 58) break;
      const gen = (buf[q + 5] as number) - 48;
      if (gen < 0 || gen > 3) break;
      q += 6;
      if (dv.getUint32(q, true) !== W_LEN || buf[q + 4] !== 58) break;
      q += 5;
      let len = (buf[q] as number) - 48;
      if (len < 0 || len > 9) break;
      q++;
      if (len !== 0) {
        for (let d = (buf[q] as number) - 48; d >= 0 && d <= 9 && len < 1639; d = (buf[q] as number) - 48) {
          len = len * 10 + d;
          q++;
        }
      }
      if (len > 16383 || dv.getUint32(q, true) !== W_BYTES1 || dv.getUint16(q + 4, true) !== H_BYTES2) break;
      if (buf[q + 6] !== NL) break;
      slots[row] = slot;
      flagsCol[row] = fi | fh | ff | fl;
      addrHiCol[row] = addrHi;
      addrLoCol[row] = addrLo;
      genCol[row] = gen;
      lenCol[row] = len;
      row++;
      nextSlot = (slot + 1) & mask;
      lastFirst = ff !== 0;
      p = q + 7;
    }
    lines++;
    good = p;
    if (buf[p] !== TAB) break;
  }
  rec.count += row - table.length;
  table.length = row;
  s.nextSlot = nextSlot;
  s.lastFirst = lastFirst;
  s.line += lines;
  return good;
}
