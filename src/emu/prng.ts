// A small seeded generator (sfc32) so that a seed fixes every random choice of the emulator.
// Only integer arithmetic: the same seed gives the same sequence on every platform.

/** sfc32 seeded from one u32 (splitmix32 expands the seed into the four state words). */
export class Sfc32 {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** The next unsigned 32-bit value. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A uniform double in [0, 1). */
  unit(): number {
    return this.u32() / 0x1_0000_0000;
  }

  /** A uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.unit() * (hi - lo + 1));
  }

  /** The four state words (the fast model compares generators by them). */
  state(): [number, number, number, number] {
    return [this.a, this.b, this.c, this.d];
  }

  /** An independent generator derived from this one (for a sub-component). */
  fork(): Sfc32 {
    return new Sfc32(this.u32());
  }
}
