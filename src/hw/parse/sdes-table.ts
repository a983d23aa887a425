// The descriptor lines of an sdes file held column-wise in typed arrays (one row per line), so a
// full 16 × 2047 dump costs a few arrays rather than 32,000 objects.
import type { RingDescriptor } from '../../backend.js';

const TWO_32 = 0x1_0000_0000;
const FLAG_CHARS = [
  '----',
  '---L',
  '--F-',
  '--FL',
  '-H--',
  '-H-L',
  '-HF-',
  '-HFL',
  'I---',
  'I--L',
  'I-F-',
  'I-FL',
  'IH--',
  'IH-L',
  'IHF-',
  'IHFL',
];

/** Growable columns: slot, flags (I=8 H=4 F=2 L=1), addr (up to 58 bits as hi/lo32), gen, len, AHG, raw qwords. */
export class DescriptorTable {
  length = 0;
  slot: Uint16Array;
  flags: Uint8Array;
  /** PHY_ADDR bits 57:32 (16 on WFR, 26 on JKR). */
  addrHi: Uint32Array;
  addrLo: Uint32Array;
  gen: Uint8Array;
  len: Uint16Array;
  /** 1 + (HEADER_INDEX | HEADER_MODE << 5), or 0 when no AHG line followed. */
  ahg: Uint16Array;
  /** qw0 lo, qw0 hi, qw1 lo, qw1 hi per row (the d0/d1 variant); null until the first such line. */
  qwords: Uint32Array | null = null;
  /** 1 where the row carries raw qwords. */
  hasQwords: Uint8Array | null = null;

  constructor(capacity: number) {
    this.slot = new Uint16Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.addrHi = new Uint32Array(capacity);
    this.addrLo = new Uint32Array(capacity);
    this.gen = new Uint8Array(capacity);
    this.len = new Uint16Array(capacity);
    this.ahg = new Uint16Array(capacity);
  }

  /** Make room for `more` rows beyond the current length. */
  reserve(more: number): void {
    while (this.length + more > this.slot.length) this.grow();
  }

  /** Append a row; returns its index. */
  push(slot: number, flags: number, addrHi: number, addrLo: number, gen: number, len: number): number {
    const i = this.length;
    if (i === this.slot.length) this.grow();
    this.slot[i] = slot;
    this.flags[i] = flags;
    this.addrHi[i] = addrHi;
    this.addrLo[i] = addrLo;
    this.gen[i] = gen;
    this.len[i] = len;
    this.length = i + 1;
    return i;
  }

  /** Record the AHG index and mode of row i. */
  setAhg(i: number, idx: number, mode: number): void {
    this.ahg[i] = 1 + (idx | (mode << 5));
  }

  /** Record the raw qwords of row i as 32-bit halves. */
  setQwords(i: number, qw0Lo: number, qw0Hi: number, qw1Lo: number, qw1Hi: number): void {
    if (!this.qwords || !this.hasQwords) {
      this.qwords = new Uint32Array(this.slot.length * 4);
      this.hasQwords = new Uint8Array(this.slot.length);
    }
    this.qwords.set([qw0Lo, qw0Hi, qw1Lo, qw1Hi], i * 4);
    this.hasQwords[i] = 1;
  }

  /** PHY_ADDR of row i as a number (exact below 2^53: every WFR address; a JKR one may round, get() is exact). */
  addr(i: number): number {
    return (this.addrHi[i] ?? 0) * TWO_32 + (this.addrLo[i] ?? 0);
  }

  /** Row i as a RingDescriptor. */
  get(i: number): RingDescriptor {
    const f = this.flags[i] ?? 0;
    const d: RingDescriptor = {
      slot: this.slot[i] ?? 0,
      flags: FLAG_CHARS[f] ?? '----',
      addr: (BigInt(this.addrHi[i] ?? 0) << 32n) | BigInt(this.addrLo[i] ?? 0),
      gen: this.gen[i] ?? 0,
      len: this.len[i] ?? 0,
    };
    const a = (this.ahg[i] ?? 0) - 1;
    if (a >= 0) {
      d.ahgIdx = a & 0x1f;
      d.ahgMode = a >> 5;
    }
    if (this.qwords && this.hasQwords?.[i] === 1) {
      const q = this.qwords;
      const w = i * 4;
      d.qw0 = (BigInt(q[w + 1] ?? 0) << 32n) | BigInt(q[w] ?? 0);
      d.qw1 = (BigInt(q[w + 3] ?? 0) << 32n) | BigInt(q[w + 2] ?? 0);
    }
    return d;
  }

  private grow(): void {
    const cap = this.slot.length * 2;
    const g = <T extends Uint16Array | Uint8Array | Uint32Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a as never);
      return b;
    };
    this.slot = g(this.slot, (n) => new Uint16Array(n));
    this.flags = g(this.flags, (n) => new Uint8Array(n));
    this.addrHi = g(this.addrHi, (n) => new Uint32Array(n));
    this.addrLo = g(this.addrLo, (n) => new Uint32Array(n));
    this.gen = g(this.gen, (n) => new Uint8Array(n));
    this.len = g(this.len, (n) => new Uint16Array(n));
    this.ahg = g(this.ahg, (n) => new Uint16Array(n));
    if (this.qwords && this.hasQwords) {
      const q = new Uint32Array(cap * 4);
      q.set(this.qwords);
      this.qwords = q;
      const h = new Uint8Array(cap);
      h.set(this.hasQwords);
      this.hasQwords = h;
    }
  }
}
