// The fast path of the qp_stats scan (qp_iter_print, hfi1 qp.c): one line of the current upstream format read
// straight from the bytes in one pass, finding its own newline (no search for it first), with the position kept in
// locals: each helper takes the position and returns the next one (−1: not this format), its value in VALUE[0].
// No string per line, no regex; the middle (PSN, ring pointers, RQP, LID, SL, MTU) checked by a character class.
// It accepts exactly what the careful scanner (qp-stats-line.ts) accepts for that format and yields the same record;
// anything else (another format, a fault, trailing fields) returns null and the careful scanner re-reads the line
// and names the fault.
import { QP_STATE_NAMES } from '../../progress/waiters.js';
import type { QpStatsLine, QpType } from './qp-stats-line.js';
import { NO_FLAGS } from './s-flags.js';

const SP = 32;
const NL = 10;

// Characters the middle may hold: digits, letters, parentheses, space, minus (as the careful scanner): 1, but 2 for
// an S (where ' SDE ' may start); 0 for anything else.
const MIDDLE_OK: Uint8Array = (() => {
  const t = new Uint8Array(256);
  for (let c = 48; c <= 57; c++) t[c] = 1;
  for (let c = 65; c <= 90; c++) t[c] = 1;
  for (let c = 97; c <= 122; c++) t[c] = 1;
  for (const c of '() -') t[c.charCodeAt(0)] = 1;
  t[83] = 2;
  return t;
})();
// Lower-case hex digit values (printf %x); -1 for anything else (the 257th entry: past the end of the bytes).
const HEX: Int8Array = (() => {
  const t = new Int8Array(257).fill(-1);
  for (let i = 0; i < 10; i++) t[48 + i] = i;
  for (let i = 0; i < 6; i++) t[97 + i] = 10 + i;
  return t;
})();

/** The value the last helper read. */
const VALUE = new Float64Array(1);
/** Where the line that fastQpLine read ends (its newline). */
const EOL = new Int32Array(1);

/** The newline ending the line fastQpLine last accepted. */
export function fastQpLineEnd(): number {
  return EOL[0] as number;
}

/** An unsigned decimal up to `max` without a leading zero (printf %u), before `stop`. */
function dec(b: Uint8Array, p: number, stop: number, max: number): number {
  let q = p;
  let v = 0;
  let c = b[q] as number;
  while (c >= 48 && c <= 57 && q < stop) {
    v = v * 10 + (c - 48);
    c = b[++q] as number;
  }
  const n = q - p;
  if (n === 0 || n > 10 || v > max || (n > 1 && b[p] === 48)) return -1;
  VALUE[0] = v;
  return q;
}

/** 1 to `digits` lower-case hex digits not followed by another (printf %x). */
function hex(b: Uint8Array, p: number, stop: number, digits: number): number {
  const lim = Math.min(stop, p + digits);
  let q = p;
  let v = 0;
  for (; q < lim; q++) {
    const d = HEX[b[q] ?? 256] as number;
    if (d < 0) break;
    v = v * 16 + d;
  }
  if (q === p || (HEX[b[q] ?? 256] as number) >= 0) return -1;
  VALUE[0] = v;
  return q;
}

/** Optional minus and a decimal up to 0x7fffffff (printf %d). */
function signed(b: Uint8Array, p: number, stop: number): number {
  const neg = b[p] === 45 && p < stop;
  const q = dec(b, neg ? p + 1 : p, stop, 0x7fff_ffff);
  if (neg && q >= 0) VALUE[0] = -(VALUE[0] as number);
  return q;
}

/** Past `l` when it is at p, else −1. */
function lit(b: Uint8Array, p: number, l: Uint8Array): number {
  if (p < 0) return -1;
  for (let i = 0; i < l.length; i++) if (b[p + i] !== l[i]) return -1;
  return p + l.length;
}

/** Past the space at p, else −1 (also when p is already −1). */
function spaced(b: Uint8Array, p: number): number {
  return p >= 0 && b[p] === SP ? p + 1 : -1;
}

const bytes = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const L_N = bytes('N ');
const L_QP = bytes(' QP ');
const L_R = bytes(' R ');
const L_F = bytes(' f=');
const L_SC = bytes(' SC ');
const L_SCQ = bytes(' SCQ ');
const L_PID = bytes(' PID ');
const L_OS = bytes(' OS ');
const L_E = bytes(' E ');
const L_RNR = bytes(' RNR ');
const L_SRQ = bytes(' SRQ ');
const L_RQ = bytes(' RQ ');
const L_NULL = bytes('(null)');

// Pointers as printed repeat (one per engine and send context): their text is kept in a small table by the index
// printed after them, confirmed by the pointer's value (two 32-bit halves) and digit count.
const PTR_SLOTS = 256;
const ptrHi = new Int32Array(PTR_SLOTS);
const ptrLo = new Int32Array(PTR_SLOTS);
const ptrLen = new Int32Array(PTR_SLOTS); // 0: empty slot
const ptrText: string[] = new Array(PTR_SLOTS).fill('');
/** The pointer text of the last ptrIndex (null for NULL). */
let ptr: string | null = null;
/** The index of the last ptrIndex, or null for a NULL pointer. */
let ptrIdx: number | null = null;

/**
 * `%p,%u` (after optional spaces): the index into `ptrIdx` (null for NULL) and, with `keepText`, the pointer as
 * printed into `ptr`.
 */
function ptrIndex(b: Uint8Array, p: number, stop: number, keepText: boolean): number {
  if (p < 0) return -1;
  while (b[p] === SP && p < stop) p++;
  const at = p;
  const pn = lit(b, p, L_NULL);
  let text: string | null = null;
  if (pn >= 0) p = pn;
  else {
    const lim = Math.min(stop, at + 16);
    let hi = 0;
    let lo = 0;
    for (; p < lim; p++) {
      const d = HEX[b[p] ?? 256] as number;
      if (d < 0) break;
      hi = (hi << 4) | (lo >>> 28);
      lo = (lo << 4) | d;
    }
    const len = p - at;
    if (len === 0 || (HEX[b[p] ?? 256] as number) >= 0) return -1;
    if ((hi | lo) !== 0) text = '';
    if (text !== null && keepText) {
      // Looked up by the index printed after it (one pointer per engine).
      if (b[p] !== 44) return -1;
      const q = dec(b, p + 1, stop, 0xffff_ffff);
      if (q < 0) return -1;
      const slot = (VALUE[0] as number) & (PTR_SLOTS - 1);
      if (ptrLen[slot] === len && ptrLo[slot] === lo && ptrHi[slot] === hi) text = ptrText[slot] as string;
      else {
        text = String.fromCharCode.apply(null, b.subarray(at, p) as unknown as number[]);
        ptrHi[slot] = hi;
        ptrLo[slot] = lo;
        ptrLen[slot] = len;
        ptrText[slot] = text;
      }
      ptr = text;
      ptrIdx = VALUE[0] as number;
      return q;
    }
  }
  if (b[p] !== 44) return -1;
  p = dec(b, p + 1, stop, 0xffff_ffff);
  ptr = text;
  ptrIdx = text === null ? null : (VALUE[0] as number);
  return p;
}

/** The QP type at p (qp_type_str: SMI, GSI, RC, UC, UD) followed by a space, or null. */
function qpType(b: Uint8Array, p: number): QpType | null {
  const c0 = b[p];
  const c1 = b[p + 1];
  let t: QpType | null = null;
  if (c0 === 82 && c1 === 67) t = 'RC';
  else if (c0 === 85 && c1 === 68) t = 'UD';
  else if (c0 === 85 && c1 === 67) t = 'UC';
  else if (c0 === 83 && c1 === 77 && b[p + 2] === 73) t = 'SMI';
  else if (c0 === 71 && c1 === 83 && b[p + 2] === 73) t = 'GSI';
  if (t === null) return null;
  return b[p + t.length] === SP ? t : null;
}

/**
 * One line from `start` in the current format, ending at its first newline, which must come no later than `stop`
 * (fastQpLineEnd tells where it is); null to let the careful scanner read it. Every step stops at a newline, so
 * `stop` may be the end of the bytes.
 */
export function fastQpLine(b: Uint8Array, start: number, stop: number): QpStatsLine | null {
  let p = dec(b, lit(b, start, L_N), stop, 0x7fff_ffff);
  if (p < 0 || b[p] !== SP) return null;
  const slot = VALUE[0] as number;
  const ib = b[p + 1];
  if ((ib !== 73 && ib !== 66) || p + 1 >= stop) return null;
  p = hex(b, lit(b, p + 2, L_QP), stop, 6);
  if (p < 0) return null;
  const qpn = VALUE[0] as number;
  p = dec(b, lit(b, p, L_R), stop, 0xffff_ffff);
  if (p < 0 || b[p] !== SP) return null;
  const refcount = VALUE[0] as number;
  const type = qpType(b, p + 1);
  if (type === null) return null;
  p = dec(b, p + 2 + type.length, stop, 0xffff_ffff);
  if (p < 0) return null;
  const state = VALUE[0] as number;
  p = dec(b, spaced(b, p), stop, 0xffff_ffff);
  if (p < 0) return null;
  p = hex(b, lit(b, p, L_F), stop, 8);
  if (p < 0) return null;
  const sFlags = VALUE[0] as number;
  // Six counters: sdma pending, pio pending, on list, timeout, ssn, lsn; a seventh is another format.
  // (Loops rather than repeated calls: fewer call sites, so the helpers are inlined.)
  let c0 = 0;
  let c1 = 0;
  let c2 = 0;
  for (let k = 0; k < 6 && p >= 0; k++) {
    p = dec(b, spaced(b, p), stop, 0xffff_ffff);
    if (k === 0) c0 = VALUE[0] as number;
    else if (k === 1) c1 = VALUE[0] as number;
    else if (k === 2) c2 = VALUE[0] as number;
  }
  if (p < 0 || c2 > 1 || p >= stop || b[p] !== SP) return null;
  const next = b[p + 1] as number;
  if (next >= 48 && next <= 57) return null;
  // The middle up to ' SDE ', by character class only (a newline is not in it).
  let i = p;
  for (;;) {
    // Characters of the class up to an S; then ' SDE ' ends the middle, anything else outside the class fails.
    while (MIDDLE_OK[b[i] as number] === 1) i++;
    if (MIDDLE_OK[b[i] as number] !== 2 || i >= stop) return null;
    if (b[i - 1] === SP && b[i + 1] === 68 && b[i + 2] === 69 && b[i + 3] === SP) break;
    i++;
  }
  p = ptrIndex(b, i + 4, stop, true);
  const engine = ptrIdx;
  const enginePtr = ptr;
  p = ptrIndex(b, lit(b, p, L_SC), stop, false);
  const sendContext = ptrIdx;
  p = dec(b, spaced(b, dec(b, lit(b, p, L_SCQ), stop, 0xffff_ffff)), stop, 0xffff_ffff);
  p = signed(b, lit(b, p, L_PID), stop);
  if (p < 0) return null;
  const pid = VALUE[0] as number;
  // OS: two hex fields; E: three.
  const os = lit(b, p, L_OS);
  for (let k = 0; k < 2 && os >= 0 && p >= 0; k++) p = hex(b, k === 0 ? os : spaced(b, p), stop, 8);
  const e = p < 0 ? -1 : lit(b, p, L_E);
  for (let k = 0; k < 3 && e >= 0 && p >= 0; k++) p = hex(b, k === 0 ? e : spaced(b, p), stop, 8);
  const rnr = p < 0 ? -1 : lit(b, p, L_RNR);
  if (rnr >= 0) {
    p = signed(b, rnr, stop);
    const srq = lit(b, p, L_SRQ);
    p = signed(b, srq >= 0 ? srq : lit(b, p, L_RQ), stop);
  }
  if (p < 0 || p > stop || b[p] !== NL) return null;
  EOL[0] = p;
  return {
    format: 'current',
    slot,
    idle: ib === 73,
    qpn,
    refcount,
    type,
    state,
    stateName: QP_STATE_NAMES[state] ?? null,
    sFlags,
    iowaitFlags: null,
    sdmaPending: c0,
    pioPending: c1,
    onList: c2 === 1,
    ibTxQueued: null,
    engine,
    enginePtr,
    sendContext,
    pid,
    extra: null,
    line: 0,
    layout: 'C',
    flags: NO_FLAGS,
  };
}
