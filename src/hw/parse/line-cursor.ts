// A cursor over one line of a debugfs text: literals and the printf conversions the driver uses (%u, %d, %x, %p),
// each failing with the offset and what was expected.

/** Where a line failed: offset in the whole text and what was expected. */
export class LineFail {
  constructor(
    readonly offset: number,
    readonly what: string,
  ) {}
}

export const SP = 32;

/** True for a lower-case hex digit (printf %x). */
export function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
}

/** Reads `s` from `p` up to `end` (the line's newline); every method throws LineFail. */
export class LineCursor {
  p = 0;
  end = 0;
  constructor(readonly s: string) {}

  protected lit(l: string, what?: string): void {
    if (!this.s.startsWith(l, this.p)) throw new LineFail(this.p, what ?? `expected '${l}'`);
    this.p += l.length;
  }

  protected isDigit(): boolean {
    const c = this.s.charCodeAt(this.p);
    return c >= 48 && c <= 57 && this.p < this.end;
  }

  /** An unsigned decimal of at most `max` (printf %u), no leading zeros. */
  protected dec(name: string, max = 0xffff_ffff): number {
    const s = this.s;
    const start = this.p;
    const stop = Math.min(this.end, start + 11);
    let p = start;
    let v = 0;
    for (let c = s.charCodeAt(p); c >= 48 && c <= 57 && p < stop; c = s.charCodeAt(++p)) v = v * 10 + (c - 48);
    if (p === start || v > max || (p - start > 1 && s.charCodeAt(start) === 48)) {
      throw new LineFail(start, `${name} must be an unsigned decimal up to ${max}`);
    }
    this.p = p;
    return v;
  }

  protected signed(name: string): number {
    const neg = this.s.charCodeAt(this.p) === 45 && this.p < this.end;
    if (neg) this.p++;
    const v = this.dec(name, 0x7fff_ffff);
    return neg ? -v : v;
  }

  /** Hex digits (printf %x/%lx), 1 to `digits` of them. */
  protected hex(name: string, digits = 8): number {
    const s = this.s;
    const start = this.p;
    const stop = Math.min(this.end, start + digits);
    let p = start;
    let v = 0;
    for (; p < stop; p++) {
      const c = s.charCodeAt(p);
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (d < 0) break;
      v = v * 16 + d;
    }
    if (p === start || isHexDigit(s.charCodeAt(p))) throw new LineFail(start, `${name} must be hex (%x), 1 to ${digits} digits`);
    this.p = p;
    return v;
  }

  /** The pointer of the last ptrIndex call (null for NULL). */
  ptr: string | null = null;

  /** `%p,%u`: a pointer (hash, raw address, or `(null)` padded to 16 columns) into `ptr`; the index, or null for NULL. */
  protected ptrIndex(name: 'SDE' | 'SC'): number | null {
    while (this.s.charCodeAt(this.p) === SP && this.p < this.end) this.p++;
    const at = this.p;
    if (this.s.startsWith('(null)', this.p)) {
      this.p += 6;
      this.ptr = null;
    } else {
      const v = this.hex(name === 'SDE' ? 'the SDE pointer' : 'the SC pointer', 16);
      this.ptr = v === 0 ? null : this.s.slice(at, this.p);
    }
    this.lit(',', name === 'SDE' ? "expected ',' after the SDE pointer" : "expected ',' after the SC pointer");
    const idx = this.dec(name === 'SDE' ? 'the SDE index' : 'the SC index');
    return this.ptr === null ? null : idx;
  }
}
