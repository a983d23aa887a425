// The fast path of the qp_stats scan (qp_iter_print, hfi1 qp.c): one line of the current upstream format read
// straight from the bytes with locals, no string per line, no regex; the middle (PSN, ring pointers, RQP, LID, SL,
// MTU) checked by a character class in one pass. It accepts exactly what the careful scanner (qp-stats-line.ts)
// accepts for that format and yields the same record; anything else (another format, a fault, trailing fields)
// returns null and the careful scanner re-reads the line and names the fault.
import { QP_STATE_NAMES } from '../../progress/waiters.js';
import type { QpStatsLine, QpType } from './qp-stats-line.js';
import { NO_FLAGS } from './s-flags.js';

const SP = 32;
const NL = 10;
const S_ = 83;

// Characters the middle may hold: digits, letters, parentheses, space, minus (as the careful scanner).
const MIDDLE_OK: Uint8Array = (() => {
  const t = new Uint8Array(256);
  for (let c = 48; c <= 57; c++) t[c] = 1;
  for (let c = 65; c <= 90; c++) t[c] = 1;
  for (let c = 97; c <= 122; c++) t[c] = 1;
  for (const c of '() -') t[c.charCodeAt(0)] = 1;
  return t;
})();
// Lower-case hex digit values (printf %x); -1 for anything else.
const HEX: Int8Array = (() => {
  const t = new Int8Array(256).fill(-1);
  for (let i = 0; i < 10; i++) t[48 + i] = i;
  for (let i = 0; i < 6; i++) t[97 + i] = 10 + i;
  return t;
})();

// The scan position and the end of the line (its newline); module state, so the helpers allocate nothing.
let b: Uint8Array = Buffer.alloc(0);
let p = 0;
let end = 0;
let bad = false;

/** An unsigned decimal up to `max` without a leading zero (printf %u); sets `bad` when there is none. */
function dec(max: number): number {
  const buf = b;
  const start = p;
  const stop = end;
  let q = start;
  let v = 0;
  let c = buf[q] as number;
  while (c >= 48 && c <= 57 && q < stop) {
    v = v * 10 + (c - 48);
    c = buf[++q] as number;
  }
  const n = q - start;
  if (n === 0 || n > 10 || v > max || (n > 1 && buf[start] === 48)) bad = true;
  p = q;
  return v;
}

/** 1 to `digits` lower-case hex digits not followed by another (printf %x). */
function hex(digits: number): number {
  const buf = b;
  const start = p;
  const stop = Math.min(end, start + digits);
  let q = start;
  let v = 0;
  for (; q < stop; q++) {
    const d = HEX[buf[q] as number] as number;
    if (d < 0) break;
    v = v * 16 + d;
  }
  if (q === start || (HEX[buf[q] as number] as number) >= 0) bad = true;
  p = q;
  return v;
}

/** Optional minus and a decimal up to 0x7fffffff (printf %d). */
function signed(): number {
  const neg = b[p] === 45 && p < end;
  if (neg) p++;
  const v = dec(0x7fff_ffff);
  return neg ? -v : v;
}

/** The bytes of `lit` at p (advancing past them), else `bad`. */
function lit(l: Uint8Array): void {
  for (let i = 0; i < l.length; i++) {
    if (b[p + i] !== l[i]) {
      bad = true;
      return;
    }
  }
  p += l.length;
}

/** True (and advanced) when `l` is at p. */
function opt(l: Uint8Array): boolean {
  for (let i = 0; i < l.length; i++) if (b[p + i] !== l[i]) return false;
  p += l.length;
  return true;
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

// Pointers as printed repeat (one per engine and send context): their text is kept in a small direct-mapped table,
// found by a hash of the digits and confirmed byte by byte.
const PTR_SLOTS = 256;
const ptrBytes: (Uint8Array | null)[] = new Array(PTR_SLOTS).fill(null);
const ptrText: string[] = new Array(PTR_SLOTS).fill('');
let ptr: string | null = null;

/** `%p,%u` (after optional spaces): the pointer into `ptr` (null for NULL), the index, or null for NULL. */
function ptrIndex(): number | null {
  while (b[p] === SP && p < end) p++;
  const at = p;
  if (opt(L_NULL)) ptr = null;
  else {
    const stop = Math.min(end, at + 16);
    let h = 0;
    let nonZero = 0;
    for (; p < stop; p++) {
      const d = HEX[b[p] as number] as number;
      if (d < 0) break;
      h = (Math.imul(h, 31) + d) | 0;
      nonZero |= d;
    }
    const len = p - at;
    if (len === 0 || (HEX[b[p] as number] as number) >= 0) {
      bad = true;
      return null;
    }
    if (nonZero === 0) ptr = null;
    else {
      const slot = (h ^ (h >>> 8) ^ len) & (PTR_SLOTS - 1);
      const known = ptrBytes[slot];
      let same = known !== null && known !== undefined && known.length === len;
      for (let i = 0; same && i < len; i++) same = (known as Uint8Array)[i] === b[at + i];
      if (same) ptr = ptrText[slot] as string;
      else {
        const copy = b.slice(at, p);
        ptr = String.fromCharCode.apply(null, copy as unknown as number[]);
        ptrBytes[slot] = copy;
        ptrText[slot] = ptr;
      }
    }
  }
  if (b[p] !== 44) {
    bad = true;
    return null;
  }
  p++;
  const idx = dec(0xffff_ffff);
  return ptr === null ? null : idx;
}

/** The QP type at p (qp_type_str: SMI, GSI, RC, UC, UD) followed by a space, or null. */
function qpType(): QpType | null {
  const c0 = b[p];
  const c1 = b[p + 1];
  let t: QpType | null = null;
  if (c0 === 82 && c1 === 67) t = 'RC';
  else if (c0 === 85 && c1 === 68) t = 'UD';
  else if (c0 === 85 && c1 === 67) t = 'UC';
  else if (c0 === 83 && c1 === 77 && b[p + 2] === 73) t = 'SMI';
  else if (c0 === 71 && c1 === 83 && b[p + 2] === 73) t = 'GSI';
  if (t === null) return null;
  p += t.length;
  return b[p] === SP ? t : null;
}

/** One line from `start` to `stop` (its newline) in the current format, or null to let the careful scanner read it. */
export function fastQpLine(buf: Uint8Array, start: number, stop: number): QpStatsLine | null {
  b = buf;
  p = start;
  end = stop;
  bad = false;
  lit(L_N);
  const slot = dec(0x7fff_ffff);
  if (bad || b[p] !== SP) return null;
  const ib = b[p + 1];
  if ((ib !== 73 && ib !== 66) || p + 1 >= end) return null;
  p += 2;
  lit(L_QP);
  const qpn = hex(6);
  lit(L_R);
  const refcount = dec(0xffff_ffff);
  if (bad || b[p] !== SP) return null;
  p++;
  const type = qpType();
  if (type === null) return null;
  p++;
  const state = dec(0xffff_ffff);
  if (b[p] !== SP) return null;
  p++;
  dec(0xffff_ffff);
  lit(L_F);
  const sFlags = hex(8);
  if (bad) return null;
  // Six counters: sdma pending, pio pending, on list, timeout, ssn, lsn; a seventh is another format.
  let c0 = 0;
  let c1 = 0;
  let c2 = 0;
  for (let i = 0; i < 6; i++) {
    if (b[p] !== SP) return null;
    p++;
    const v = dec(0xffff_ffff);
    if (i === 0) c0 = v;
    else if (i === 1) c1 = v;
    else if (i === 2) c2 = v;
  }
  if (bad || c2 > 1 || p >= end || b[p] !== SP) return null;
  const next = b[p + 1] as number;
  if (next >= 48 && next <= 57) return null;
  // The middle up to ' SDE ', by character class only.
  let i = p;
  for (; i < end; i++) {
    const c = b[i] as number;
    if (c === S_ && b[i - 1] === SP && b[i + 1] === 68 && b[i + 2] === 69 && b[i + 3] === SP) break;
    if (MIDDLE_OK[c] !== 1) return null;
  }
  if (i >= end) return null;
  p = i + 4;
  const engine = ptrIndex();
  const enginePtr = ptr;
  lit(L_SC);
  if (bad) return null;
  const sendContext = ptrIndex();
  lit(L_SCQ);
  dec(0xffff_ffff);
  if (b[p] !== SP) return null;
  p++;
  dec(0xffff_ffff);
  lit(L_PID);
  if (bad) return null;
  const pid = signed();
  if (opt(L_OS)) {
    hex(8);
    if (b[p] !== SP) return null;
    p++;
    hex(8);
  }
  if (opt(L_E)) {
    hex(8);
    if (b[p] !== SP) return null;
    p++;
    hex(8);
    if (b[p] !== SP) return null;
    p++;
    hex(8);
  }
  if (opt(L_RNR)) {
    signed();
    if (!opt(L_SRQ)) lit(L_RQ);
    signed();
  }
  if (bad || p !== end || b[p] !== NL) return null;
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
