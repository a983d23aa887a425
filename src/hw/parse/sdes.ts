// debugfs `sdes` (§g.2): one record per engine, a header line then the descriptors from the
// software head slot to the software tail slot, each FIRST descriptor optionally followed by an
// AHG line. Accepts the upstream (23-field), staging (22-field) and Cornelis (d0/d1) variants.
// Descriptor lines are scanned byte by byte into typed arrays; validation happens in that scan.
import type { RingDescriptor } from '../../backend.js';
import type { ParseError } from '../../errors.js';
import { SDMA_DESCQ_CNT_DEFAULT } from '../../progress/constants.js';
import { isValidDescqCnt } from '../../progress/ring.js';
import { isHeaderFailure, parseSdesHeader, type SdesHeader } from './sdes-header.js';
import { DescriptorTable } from './sdes-table.js';
import { ascii, errorAt, HEX_VALUE, matchAt } from './text.js';

export type { SdesHeader } from './sdes-header.js';
export { DescriptorTable } from './sdes-table.js';

/** One engine's record: its header and its descriptors, rows [first, first + count) of the table. */
export interface SdesRecord {
  header: SdesHeader;
  /** Line number of the header (1-based). */
  line: number;
  first: number;
  count: number;
}

/** A record cut short at the end of the input (a torn read): it is left out of `records`. */
export interface SdesTorn {
  /** The engine of the cut record, when its header was complete. */
  engine: number | null;
  /** Line where the cut record starts. */
  line: number;
  /** The error a strict parse would have raised. */
  error: ParseError;
}

/** The whole file. */
export interface SdesDump {
  records: SdesRecord[];
  descriptors: DescriptorTable;
  torn: SdesTorn | null;
}

/** Options: the file name for messages and the ring size (§a.1) that bounds slots. */
export interface SdesOptions {
  file?: string;
  descqCnt?: number;
}

const NL = 10;
const TAB = 9;
const SPACE = 32;
const LIT_DESC = ascii('\tdesc[');
const LIT_FLAGS = ascii(']: flags:');
const LIT_ADDR = ascii(' addr:0x');
const LIT_GEN = ascii(' gen:');
const LIT_LEN = ascii(' len:');
const LIT_BYTES = ascii(' bytes\n');
const LIT_D0 = ascii(' d0:0x');
const LIT_D1 = ascii(' d1:0x');
const LIT_AHG = ascii('\t\tahgidx: ');
const LIT_AHGMODE = ascii(' ahgmode: ');
const LIT_AIDX = ascii('\t\taidx:');
const LIT_AMODE = ascii(' amode:');
const LIT_ALEN = ascii(' alen:');
const FLAG_I = 73;
const FLAG_H = 72;
const FLAG_F = 70;
const FLAG_L = 76;
const DASH = 45;
/** Bytes a descriptor line may need before the fast path is safe to try (the d0/d1 form is ~110). */
const FAST_ROOM = 128;
/** Little-endian words of the fixed text of a descriptor line (§g.2). */
function le(s: string): number {
  let v = 0;
  for (let i = s.length - 1; i >= 0; i--) v = v * 256 + s.charCodeAt(i);
  return v;
}
const W_TAB_DES = le('\tdes');
const H_C_BRACKET = le('c[');
const W_FLAGS1 = le(']: f');
const W_FLAGS2 = le('lags');
const W_ADDR1 = le(' add');
const W_ADDR2 = le('r:0x');
const W_GEN = le(' gen');
const W_LEN = le(' len');
const W_BYTES1 = le(' byt');
const W_AHG1 = le('\t\tah');
const W_AHG2 = le('gidx');
const H_AHG3 = le(': ');
const W_AHG4 = le(' ahg');
const W_AHG5 = le('mode');
const H_BYTES2 = le('es');
/** Flag bits by (position << 8 | byte): I=8 H=4 F=2 L=1 in the order I H F L, 0 for '-', −1 otherwise. */
const FLAG_BITS: Int8Array = (() => {
  const t = new Int8Array(0x400).fill(-1);
  ['I', 'H', 'F', 'L'].forEach((c, pos) => {
    t[(pos << 8) | c.charCodeAt(0)] = 8 >> pos;
    t[(pos << 8) | DASH] = 0;
  });
  return t;
})();

class Fail {
  constructor(
    readonly offset: number,
    readonly what: string,
    /** A fault in a complete, earlier record: never a torn read. */
    readonly hard = false,
  ) {}
}

/** Parse a whole `sdes` file. Throws ParseError on malformed input; a cut last record is `torn`. */
export function parseSdes(input: Uint8Array | string, opts: SdesOptions = {}): SdesDump {
  const buf = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const file = opts.file ?? 'sdes';
  const descqCnt = opts.descqCnt ?? SDMA_DESCQ_CNT_DEFAULT;
  if (!isValidDescqCnt(descqCnt)) throw new RangeError(`descqCnt must be a valid ring size (§a.1), got ${descqCnt}`);
  const s = new Scanner(buf, descqCnt);
  try {
    s.run();
  } catch (e) {
    if (!(e instanceof Fail)) throw e;
    const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1');
    const err = errorAt(file, text, e.offset, e.what);
    // A failure on the unterminated last line is a torn read: keep the complete records (§g.2).
    if (!e.hard && buf.indexOf(NL, s.lineStart) === -1 && s.lineStart < buf.length) {
      return s.result({ engine: s.openEngine, line: s.openLine, error: err });
    }
    throw err;
  }
  const last = s.open;
  if (last) {
    if (last.count < s.expected) {
      const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1');
      const err = errorAt(
        file,
        text,
        buf.length,
        `engine ${last.header.engine}: ${last.count} of ${s.expected} descriptor lines ((T(SW) − H(SW)) mod ${descqCnt}, §g.2)`,
      );
      return s.result({ engine: last.header.engine, line: last.line, error: err });
    }
    s.records.push(last);
  }
  return s.result(null);
}

class Scanner {
  readonly records: SdesRecord[] = [];
  readonly table: DescriptorTable;
  open: SdesRecord | null = null;
  expected = 0;
  lineStart = 0;
  openLine = 0;
  openEngine: number | null = null;
  private line = 1;
  private lastFirst = false; // the previous line was a FIRST descriptor (an AHG line may follow)
  private nextSlot = 0; // the slot the next descriptor line must show
  private readonly mask: number;
  private readonly dv: DataView;

  constructor(
    private readonly buf: Uint8Array,
    private readonly descqCnt: number,
  ) {
    this.mask = descqCnt - 1;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.table = new DescriptorTable(Math.max(16, Math.ceil(buf.length / 64)));
  }

  result(torn: SdesTorn | null): SdesDump {
    return { records: this.records, descriptors: this.table, torn };
  }

  run(): void {
    const buf = this.buf;
    const n = buf.length;
    let p = 0;
    while (p < n) {
      this.lineStart = p;
      const c = buf[p];
      if (c === TAB) {
        const q = p + FAST_ROOM <= n ? this.fastLines(p) : p;
        if (q !== p) {
          p = q;
          continue;
        }
        p = buf[p + 1] === TAB ? this.ahg(p) : this.descriptor(p);
      } else if (c === 83 /* S */) {
        p = this.header(p);
      } else {
        throw new Fail(p, 'expected a header line (SDE …) or a descriptor line (a tab, then desc[…]) (§g.2)');
      }
      this.line++;
    }
  }

  private header(p: number): number {
    const buf = this.buf;
    let eol = buf.indexOf(NL, p);
    const cut = eol === -1;
    if (cut) eol = buf.length;
    const prev = this.open;
    if (prev) {
      if (prev.count !== this.expected) {
        throw new Fail(
          p,
          `engine ${prev.header.engine} lists ${prev.count} descriptors, but (T(SW) − H(SW)) mod ${this.descqCnt} = ${this.expected} (§g.2)`,
          true,
        );
      }
      this.records.push(prev);
      this.open = null;
    }
    this.openLine = this.line;
    this.openEngine = null;
    const text = Buffer.from(buf.buffer, buf.byteOffset + p, eol - p).toString('latin1');
    const h = parseSdesHeader(text);
    if (isHeaderFailure(h)) throw new Fail(p + h.column - 1, h.what);
    const want = this.records.length;
    if (h.engine !== want) throw new Fail(p + 4, `expected the record of engine ${want} here, got SDE ${h.engine} (§g.2)`);
    if (h.swTail > this.mask || h.swHead > this.mask) {
      throw new Fail(
        p,
        `T(SW) 0x${h.swTail.toString(16)} or H(SW) 0x${h.swHead.toString(16)} is not a slot of a ${this.descqCnt}-entry ring (sdma_descq_cnt, §a.1)`,
      );
    }
    if (cut) throw new Fail(eol, 'the header line has no newline: the read was cut short');
    this.openEngine = h.engine;
    this.open = { header: h, line: this.line, first: this.table.length, count: 0 };
    this.expected = (h.swTail - h.swHead) & this.mask;
    this.nextSlot = h.swHead;
    this.lastFirst = false;
    return eol + 1;
  }

  /**
   * The common case: consecutive descriptor lines (each with its optional AHG line) of the
   * upstream format, with at least FAST_ROOM bytes left, scanned with locals and the fixed text
   * compared four bytes at a time. Stops at the first line it does not accept and returns its
   * offset; descriptor() / ahg() then re-parse that line and name the fault.
   */
  private fastLines(start: number): number {
    const rec = this.open;
    if (rec === null) return start;
    const buf = this.buf;
    const dv = this.dv;
    const limit = buf.length - FAST_ROOM;
    const mask = this.mask;
    const table = this.table;
    table.reserve(this.expected - rec.count);
    const slots = table.slot;
    const flagsCol = table.flags;
    const addrHiCol = table.addrHi;
    const addrLoCol = table.addrLo;
    const genCol = table.gen;
    const lenCol = table.len;
    const ahgCol = table.ahg;
    let row = table.length;
    const endRow = row + (this.expected - rec.count);
    let nextSlot = this.nextSlot;
    let lastFirst = this.lastFirst;
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
    this.nextSlot = nextSlot;
    this.lastFirst = lastFirst;
    this.line += lines;
    return good;
  }

  private descriptor(p0: number): number {
    const buf = this.buf;
    const rec = this.open;
    if (!rec) throw new Fail(p0, 'a descriptor line before the first header (§g.2)');
    if (!matchAt(buf, p0, LIT_DESC)) throw new Fail(p0, "expected '\\tdesc[' (§g.2)");
    let p = p0 + 6;
    const slotAt = p;
    let slot = 0;
    for (let d = (buf[p] as number) - 48; d >= 0 && d <= 9 && p - slotAt < 6; d = (buf[p] as number) - 48) {
      slot = slot * 10 + d;
      p++;
    }
    if (p === slotAt || (buf[slotAt] === 48 && p - slotAt > 1)) throw new Fail(slotAt, 'expected the slot number (%u)');
    const want = (rec.header.swHead + rec.count) & this.mask;
    if (rec.count >= this.expected) {
      throw new Fail(
        p0,
        `engine ${rec.header.engine}: more descriptor lines than (T(SW) − H(SW)) mod ${this.descqCnt} = ${this.expected} (§g.2)`,
      );
    }
    if (slot !== want)
      throw new Fail(slotAt, `expected slot ${want} (H(SW) + ${rec.count} mod ${this.descqCnt}), got ${slot} (§g.2)`);
    if (!matchAt(buf, p, LIT_FLAGS)) throw new Fail(p, "expected ']: flags:'");
    p += 9;
    const fi = buf[p];
    const fh = buf[p + 1];
    const ff = buf[p + 2];
    const fl = buf[p + 3];
    if (
      (fi !== FLAG_I && fi !== DASH) ||
      (fh !== FLAG_H && fh !== DASH) ||
      (ff !== FLAG_F && ff !== DASH) ||
      (fl !== FLAG_L && fl !== DASH)
    ) {
      throw new Fail(p, 'flags must be 4 characters in the order I H F L, - where clear (§g.2)');
    }
    const flags = (fi === FLAG_I ? 8 : 0) | (fh === FLAG_H ? 4 : 0) | (ff === FLAG_F ? 2 : 0) | (fl === FLAG_L ? 1 : 0);
    p += 4;
    if (!matchAt(buf, p, LIT_ADDR)) throw new Fail(p, "expected ' addr:0x'");
    p += 8;
    const addrHi = hex8(buf, p);
    const addrLo = hex8(buf, p + 8);
    if (addrHi < 0 || addrLo < 0) throw new Fail(p, 'addr must be exactly 16 hex digits (0x%016llx)');
    if (addrHi > 0xffff) throw new Fail(p, 'addr has bits above 47: PHY_ADDR is 48 bits (§e.1)');
    p += 16;
    if (!matchAt(buf, p, LIT_GEN)) throw new Fail(p, "expected ' gen:'");
    p += 5;
    const gen = (buf[p] as number) - 48;
    if (!(gen >= 0 && gen <= 3) || buf[p + 1] !== SPACE) throw new Fail(p, 'gen must be 0 to 3 (§e.1)');
    p += 1;
    if (!matchAt(buf, p, LIT_LEN)) throw new Fail(p, "expected ' len:'");
    p += 5;
    const lenAt = p;
    let len = 0;
    for (let d = (buf[p] as number) - 48; d >= 0 && d <= 9 && p - lenAt < 5; d = (buf[p] as number) - 48) {
      len = len * 10 + d;
      p++;
    }
    if (p === lenAt || len > 16383 || (buf[lenAt] === 48 && p - lenAt > 1)) {
      throw new Fail(lenAt, 'len must be a decimal from 0 to 16383 (BYTE_COUNT, §e.1)');
    }
    const row = this.table.push(slot, flags, addrHi, addrLo, gen, len);
    if (buf[p + 1] === 98 /* b */) {
      if (!matchAt(buf, p, LIT_BYTES)) throw new Fail(p, "expected ' bytes' and the end of the line");
      p += 7;
    } else {
      if (!matchAt(buf, p, LIT_D0)) throw new Fail(p, "expected ' bytes' or ' d0:0x' (§g.2)");
      p += 6;
      const a = hex8(buf, p);
      const b = hex8(buf, p + 8);
      if (a < 0 || b < 0) throw new Fail(p, 'd0 must be exactly 16 hex digits');
      p += 16;
      if (!matchAt(buf, p, LIT_D1)) throw new Fail(p, "expected ' d1:0x'");
      p += 6;
      const c = hex8(buf, p);
      const d = hex8(buf, p + 8);
      if (c < 0 || d < 0) throw new Fail(p, 'd1 must be exactly 16 hex digits');
      p += 16;
      if (buf[p] !== NL) throw new Fail(p, 'expected the end of the line after d1');
      p += 1;
      this.table.setQwords(row, b, a, d, c);
    }
    rec.count++;
    this.nextSlot = (slot + 1) & this.mask;
    this.lastFirst = (flags & 2) !== 0;
    return p;
  }

  private ahg(p0: number): number {
    const buf = this.buf;
    if (!this.lastFirst) throw new Fail(p0, 'an AHG line may only follow a descriptor with F set (§g.2)');
    this.lastFirst = false;
    let idx: number;
    let mode: number;
    let p: number;
    if (matchAt(buf, p0, LIT_AHG)) {
      [idx, p] = dec(buf, p0 + LIT_AHG.length, 31);
      if (idx < 0) throw new Fail(p, 'ahgidx must be 0 to 31 (HEADER_INDEX, §e.1)');
      if (!matchAt(buf, p, LIT_AHGMODE)) throw new Fail(p, "expected ' ahgmode: '");
      [mode, p] = dec(buf, p + LIT_AHGMODE.length, 7);
      if (mode < 0) throw new Fail(p, 'ahgmode must be 0 to 7 (HEADER_MODE, §e.1)');
    } else if (matchAt(buf, p0, LIT_AIDX)) {
      [idx, p] = dec(buf, p0 + LIT_AIDX.length, 31);
      if (idx < 0) throw new Fail(p, 'aidx must be 0 to 31 (HEADER_INDEX, §e.1)');
      if (!matchAt(buf, p, LIT_AMODE)) throw new Fail(p, "expected ' amode:'");
      [mode, p] = dec(buf, p + LIT_AMODE.length, 7);
      if (mode < 0) throw new Fail(p, 'amode must be 0 to 7 (HEADER_MODE, §e.1)');
      if (!matchAt(buf, p, LIT_ALEN)) throw new Fail(p, "expected ' alen:'");
      let alen: number;
      [alen, p] = dec(buf, p + LIT_ALEN.length, 0xffff_ffff);
      if (alen < 0) throw new Fail(p, 'alen must be an unsigned decimal');
    } else {
      throw new Fail(p0, "expected an AHG line: '\\t\\tahgidx: N ahgmode: N' or '\\t\\taidx:N amode:N alen:N' (§g.2)");
    }
    if (buf[p] !== NL) throw new Fail(p, 'expected the end of the AHG line');
    this.table.setAhg(this.table.length - 1, idx, mode);
    return p + 1;
  }
}

/** Eight hex digits at p as a u32, or −1; needs 8 bytes of room. */
function hex8fast(buf: Uint8Array, p: number): number {
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
function hex8(buf: Uint8Array, p: number): number {
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
function dec(buf: Uint8Array, p: number, max: number): [number, number] {
  const start = p;
  let v = 0;
  for (let d = (buf[p] as number) - 48; d >= 0 && d <= 9 && p - start < 11; d = (buf[p] as number) - 48) {
    v = v * 10 + d;
    p++;
  }
  if (p === start || v > max || (buf[start] === 48 && p - start > 1)) return [-1, start];
  return [v, p];
}

/** The descriptors of one record as RingDescriptor objects (§g.2, with qw0/qw1 in the d0/d1 variant). */
export function recordDescriptors(dump: SdesDump, record: SdesRecord): RingDescriptor[] {
  const out: RingDescriptor[] = [];
  for (let i = record.first; i < record.first + record.count; i++) out.push(dump.descriptors.get(i));
  return out;
}
