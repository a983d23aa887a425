// debugfs `sdes` (sdma_seqfile_dump_sde, sdma.c): one record per engine, a header line then the descriptors from the
// software head slot to the software tail slot, each FIRST descriptor optionally followed by an
// AHG line. Accepts the upstream (23-field), staging (22-field) and Cornelis (d0/d1) variants.
// Descriptor lines are scanned byte by byte into typed arrays; validation happens in that scan.
import type { RingDescriptor } from '../../backend.js';
import type { ParseError } from '../../errors.js';
import type { ChipName } from '../../progress/chip.js';
import { SDMA_DESCQ_CNT_DEFAULT, TXE_NUM_SDMA_ENGINES } from '../../progress/constants.js';
import { decodeFor } from '../../progress/descriptor-chip.js';
import { isValidDescqCnt } from '../../progress/ring.js';
import { fastLines, type ScanState } from './sdes-fast.js';
import { isHeaderFailure, parseSdesHeader, type SdesHeader } from './sdes-header.js';
import {
  DASH,
  dec,
  FAST_ROOM,
  FLAG_F,
  FLAG_H,
  FLAG_I,
  FLAG_L,
  hex8,
  LIT_ADDR,
  LIT_AHG,
  LIT_AHGMODE,
  LIT_AIDX,
  LIT_ALEN,
  LIT_AMODE,
  LIT_BYTES,
  LIT_D0,
  LIT_D1,
  LIT_DESC,
  LIT_FLAGS,
  LIT_GEN,
  LIT_LEN,
  NL,
  SPACE,
  TAB,
} from './sdes-lex.js';
import { DescriptorTable } from './sdes-table.js';
import { errorAt, matchAt } from './text.js';

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
  /** The cut record's header when its line was complete (only its descriptors are cut). */
  header: SdesHeader | null;
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
  /** The first header with fields after SLC (a newer driver), and how many headers had them. */
  trailing: { line: number; text: string; count: number } | null;
  /** Lines scanned (complete or not). */
  lines: number;
  /**
   * The first line of the newer form (a descriptor line with d0/d1, an `aidx:` AHG line), or null: the Cornelis
   * hfi1 build and hfi2 print them (sdma_seqfile_dump_sde of their sdma.c). Each line's form is read on its own.
   */
  newLine: NewSdesLine | null;
}

/** A line of the newer sdes form: its number and whether it is a descriptor or an AHG line. */
export interface NewSdesLine {
  line: number;
  kind: 'descriptor' | 'ahg';
}

/** Options: the file name for messages and the ring size (sdma_get_descq_cnt, sdma.c) that bounds slots. */
export interface SdesOptions {
  file?: string;
  descqCnt?: number;
  /**
   * Parse the headers and only count the descriptor lines of each record (what a sample needs;
   * `ring` needs them decoded). A garbled descriptor line is then not seen; a count that does not
   * match the header, and a cut line, still are. The dump's descriptor table stays empty.
   */
  headersOnly?: boolean;
}

/** The high half of a 58-bit JKR PHY_ADDR (bits 57:32). */
const JKR_ADDR_HI_MAX = 0x3ff_ffff;

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
  if (!isValidDescqCnt(descqCnt)) throw new RangeError(`descqCnt must be a valid ring size, got ${descqCnt}`);
  const s = new Scanner(buf, descqCnt, opts.headersOnly === true);
  try {
    s.run();
  } catch (e) {
    if (!(e instanceof Fail)) throw e;
    const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1');
    const err = errorAt(file, text, e.offset, e.what);
    // A failure on the unterminated last line is a torn read: keep the complete records (sdma_seqfile_dump_sde, sdma.c).
    if (!e.hard && buf.indexOf(NL, s.lineStart) === -1 && s.lineStart < buf.length) {
      return s.result({ engine: s.openEngine, header: s.open?.header ?? null, line: s.openLine, error: err });
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
        `engine ${last.header.engine}: ${last.count} of ${s.expected} descriptor lines ((T(SW) − H(SW)) mod ${descqCnt})`,
      );
      return s.result({ engine: last.header.engine, header: last.header, line: last.line, error: err });
    }
    s.records.push(last);
  }
  return s.result(null);
}

class Scanner implements ScanState {
  readonly records: SdesRecord[] = [];
  readonly table: DescriptorTable;
  open: SdesRecord | null = null;
  expected = 0;
  lineStart = 0;
  openLine = 0;
  openEngine: number | null = null;
  trailing: SdesDump['trailing'] = null;
  line = 1;
  lastFirst = false; // the previous line was a FIRST descriptor (an AHG line may follow)
  nextSlot = 0; // the slot the next descriptor line must show
  /** Headers-only mode: offset of the next ' d0:0x' at or after the line being skipped; −1 when there is none, −2 before the first search. */
  private nextD0 = -2;
  readonly mask: number;
  readonly dv: DataView;

  constructor(
    readonly buf: Uint8Array,
    private readonly descqCnt: number,
    private readonly headersOnly = false,
  ) {
    this.mask = descqCnt - 1;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.table = new DescriptorTable(headersOnly ? 16 : Math.max(16, Math.ceil(buf.length / 64)));
  }

  newLine: NewSdesLine | null = null;

  result(torn: SdesTorn | null): SdesDump {
    return {
      records: this.records,
      descriptors: this.table,
      torn,
      trailing: this.trailing,
      lines: this.line - 1,
      newLine: this.newLine,
    };
  }

  private sawNew(kind: NewSdesLine['kind']): void {
    this.newLine ??= { line: this.line, kind };
  }

  run(): void {
    const buf = this.buf;
    const n = buf.length;
    let p = 0;
    while (p < n) {
      this.lineStart = p;
      const c = buf[p];
      if (c === TAB && this.headersOnly) {
        p = this.skipLine(p);
      } else if (c === TAB) {
        const q = p + FAST_ROOM <= n ? fastLines(this, p) : p;
        if (q !== p) {
          p = q;
          continue;
        }
        p = buf[p + 1] === TAB ? this.ahg(p) : this.descriptor(p);
      } else if (c === 83 /* S */) {
        p = this.header(p);
      } else {
        throw new Fail(p, 'expected a header line (SDE …) or a descriptor line (a tab, then desc[…])');
      }
      this.line++;
    }
  }

  /** Headers-only mode: count a descriptor line (an AHG line belongs to the one before) without decoding it. */
  private skipLine(p: number): number {
    const rec = this.open;
    if (!rec) throw new Fail(p, 'a descriptor line before the first header');
    const buf = this.buf;
    const eol = buf.indexOf(NL, p);
    if (eol === -1) throw new Fail(p, 'the descriptor line has no newline: the read was cut short');
    if (this.newLine === null) {
      // Which form the line has, for the driver build (flavour.ts); only until the first newer line.
      if (buf[p + 1] === TAB) {
        if (matchAt(buf, p, LIT_AIDX)) this.sawNew('ahg');
      } else {
        // The next ' d0:0x' in the whole input, found natively once and kept until the scan passes it (a dump of
        // the older form has none, so one search answers every line).
        if (this.nextD0 !== -1 && this.nextD0 < p) {
          this.nextD0 = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).indexOf(LIT_D0, p);
        }
        if (this.nextD0 !== -1 && this.nextD0 < eol) this.sawNew('descriptor');
      }
    }
    if (buf[p + 1] !== TAB) {
      if (rec.count >= this.expected) {
        throw new Fail(
          p,
          `engine ${rec.header.engine}: more descriptor lines than (T(SW) − H(SW)) mod ${this.descqCnt} = ${this.expected}`,
        );
      }
      rec.count++;
    }
    return eol + 1;
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
          `engine ${prev.header.engine} lists ${prev.count} descriptors, but (T(SW) − H(SW)) mod ${this.descqCnt} = ${this.expected}`,
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
    // Records come for the engines of the unit's window (first_sdma_engine..last_sdma_engine, absolute indexes), in
    // order: the first may be any engine of the chip, each next one the engine after it.
    const prevEngine = (prev ?? this.records[this.records.length - 1])?.header.engine;
    if (prevEngine !== undefined && prevEngine + 1 >= TXE_NUM_SDMA_ENGINES) {
      throw new Fail(
        p,
        `a record for a ${prevEngine + 2}th engine, but the chip has ${TXE_NUM_SDMA_ENGINES} SDMA engines (0 to ${TXE_NUM_SDMA_ENGINES - 1})`,
        true,
      );
    }
    if (prevEngine !== undefined && h.engine !== prevEngine + 1) {
      throw new Fail(p + 4, `expected the record of engine ${prevEngine + 1} here, got SDE ${h.engine}`);
    }
    if (h.engine >= TXE_NUM_SDMA_ENGINES) {
      throw new Fail(
        p + 4,
        `SDE ${h.engine}: the chip has ${TXE_NUM_SDMA_ENGINES} SDMA engines (0 to ${TXE_NUM_SDMA_ENGINES - 1})`,
      );
    }
    if (h.swTail > this.mask || h.swHead > this.mask) {
      throw new Fail(
        p,
        `T(SW) 0x${h.swTail.toString(16)} or H(SW) 0x${h.swHead.toString(16)} is not a slot of a ${this.descqCnt}-entry ring (sdma_descq_cnt)`,
      );
    }
    // The ring holds at most descq_cnt − 1 descriptors in flight (sdma_descq_freecnt, sdma.h): a tail behind the
    // head, or more in flight than the ring holds, is no state the driver can be in.
    const inFlight = (h.descqTail - h.descqHead) >>> 0;
    if (inFlight > this.mask) {
      const dt = text.indexOf(' DT ');
      throw new Fail(
        dt < 0 ? p : p + dt + 1,
        `DT ${h.descqTail} and DH ${h.descqHead} contradict each other: the tail is behind the head, or ${inFlight} descriptors would be in flight on a ${this.descqCnt}-entry ring (at most ${this.mask} fit); these counters are not taken as facts`,
      );
    }
    if (cut) throw new Fail(eol, 'the header line has no newline: the read was cut short');
    if (h.extra !== undefined) {
      if (this.trailing) this.trailing.count++;
      else this.trailing = { line: this.line, text: h.extra, count: 1 };
    }
    this.openEngine = h.engine;
    this.open = { header: h, line: this.line, first: this.table.length, count: 0 };
    this.expected = (h.swTail - h.swHead) & this.mask;
    this.nextSlot = h.swHead;
    this.lastFirst = false;
    return eol + 1;
  }

  private descriptor(p0: number): number {
    const buf = this.buf;
    const rec = this.open;
    if (!rec) throw new Fail(p0, 'a descriptor line before the first header');
    if (!matchAt(buf, p0, LIT_DESC)) throw new Fail(p0, "expected '\\tdesc['");
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
        `engine ${rec.header.engine}: more descriptor lines than (T(SW) − H(SW)) mod ${this.descqCnt} = ${this.expected}`,
      );
    }
    if (slot !== want) throw new Fail(slotAt, `expected slot ${want} (H(SW) + ${rec.count} mod ${this.descqCnt}), got ${slot}`);
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
      throw new Fail(p, 'flags must be 4 characters in the order I H F L, - where clear');
    }
    const flags = (fi === FLAG_I ? 8 : 0) | (fh === FLAG_H ? 4 : 0) | (ff === FLAG_F ? 2 : 0) | (fl === FLAG_L ? 1 : 0);
    p += 4;
    if (!matchAt(buf, p, LIT_ADDR)) throw new Fail(p, "expected ' addr:0x'");
    p += 8;
    const addrAt = p;
    const addrHi = hex8(buf, p);
    const addrLo = hex8(buf, p + 8);
    if (addrHi < 0 || addrLo < 0) throw new Fail(p, 'addr must be exactly 16 hex digits (0x%016llx)');
    if (addrHi > JKR_ADDR_HI_MAX) throw new Fail(p, 'addr has bits above 57: PHY_ADDR is 48 bits (WFR) or 58 (JKR)');
    p += 16;
    if (!matchAt(buf, p, LIT_GEN)) throw new Fail(p, "expected ' gen:'");
    p += 5;
    const gen = (buf[p] as number) - 48;
    if (!(gen >= 0 && gen <= 3) || buf[p + 1] !== SPACE) throw new Fail(p, 'gen must be 0 to 3');
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
      throw new Fail(lenAt, 'len must be a decimal from 0 to 16383 (BYTE_COUNT)');
    }
    const row = this.table.push(slot, flags, addrHi, addrLo, gen, len);
    if (buf[p + 1] === 98 /* b */) {
      // The upstream line: the address was decoded from a WFR descriptor (48 bits).
      if (addrHi > 0xffff) throw new Fail(addrAt, 'addr has bits above 47: PHY_ADDR is 48 bits');
      if (!matchAt(buf, p, LIT_BYTES)) throw new Fail(p, "expected ' bytes' and the end of the line");
      p += 7;
    } else {
      this.sawNew('descriptor');
      if (!matchAt(buf, p, LIT_D0)) throw new Fail(p, "expected ' bytes' or ' d0:0x'");
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
    if (!this.lastFirst) throw new Fail(p0, 'an AHG line may only follow a descriptor with F set');
    this.lastFirst = false;
    let idx: number;
    let mode: number;
    let p: number;
    if (matchAt(buf, p0, LIT_AHG)) {
      [idx, p] = dec(buf, p0 + LIT_AHG.length, 31);
      if (idx < 0) throw new Fail(p, 'ahgidx must be 0 to 31 (HEADER_INDEX)');
      if (!matchAt(buf, p, LIT_AHGMODE)) throw new Fail(p, "expected ' ahgmode: '");
      [mode, p] = dec(buf, p + LIT_AHGMODE.length, 7);
      if (mode < 0) throw new Fail(p, 'ahgmode must be 0 to 7 (HEADER_MODE)');
    } else if (matchAt(buf, p0, LIT_AIDX)) {
      this.sawNew('ahg');
      [idx, p] = dec(buf, p0 + LIT_AIDX.length, 31);
      if (idx < 0) throw new Fail(p, 'aidx must be 0 to 31 (HEADER_INDEX)');
      if (!matchAt(buf, p, LIT_AMODE)) throw new Fail(p, "expected ' amode:'");
      [mode, p] = dec(buf, p + LIT_AMODE.length, 7);
      if (mode < 0) throw new Fail(p, 'amode must be 0 to 7 (HEADER_MODE)');
      if (!matchAt(buf, p, LIT_ALEN)) throw new Fail(p, "expected ' alen:'");
      let alen: number;
      [alen, p] = dec(buf, p + LIT_ALEN.length, 0xffff_ffff);
      if (alen < 0) throw new Fail(p, 'alen must be an unsigned decimal');
    } else {
      throw new Fail(p0, "expected an AHG line: '\\t\\tahgidx: N ahgmode: N' or '\\t\\taidx:N amode:N alen:N'");
    }
    if (buf[p] !== NL) throw new Fail(p, 'expected the end of the AHG line');
    this.table.setAhg(this.table.length - 1, idx, mode);
    return p + 1;
  }
}

/**
 * The descriptors of one record as RingDescriptor objects (sdma_seqfile_dump_sde, sdma.c; with qw0/qw1 in the
 * d0/d1 variant). Given the chip, a row that carries its raw qwords is decoded from them with the chip's codec
 * (descriptor-chip.ts: FIRST, LAST and BYTE_COUNT in qw1 on JKR), which the printed fields only summarise.
 */
export function recordDescriptors(dump: SdesDump, record: SdesRecord, chip?: ChipName): RingDescriptor[] {
  const out: RingDescriptor[] = [];
  for (let i = record.first; i < record.first + record.count; i++) {
    const d = dump.descriptors.get(i);
    out.push(chip !== undefined && d.qw0 !== undefined && d.qw1 !== undefined ? fromQwords(d, chip) : d);
  }
  return out;
}

/** A printed row re-read from its raw qwords by the chip's codec; the slot and the AHG line stay as printed. */
function fromQwords(d: RingDescriptor, chip: ChipName): RingDescriptor {
  const f = decodeFor(chip, d.qw0 as bigint, d.qw1 as bigint);
  const flags = `${f.intReq ? 'I' : '-'}${f.headToHost ? 'H' : '-'}${f.first ? 'F' : '-'}${f.last ? 'L' : '-'}`;
  return { ...d, flags, addr: f.addr, gen: f.gen, len: f.len };
}
