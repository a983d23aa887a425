// The `sdes` file of a served tree, rendered pass after pass: a descriptor's line is formatted
// once (as descriptorLines in sdes.ts prints it) and reused while the four words in its slot stay the same, and the file is assembled in
// one reused buffer, so a refresh costs little more than the headers and the descriptors written
// since the last one.
import type { DriverBuild, EngineSample } from '../backend.js';
import { decodeAt, emptyDescriptor, flagString, hex16 } from '../progress/descriptor.js';
import type { Engine } from './engine.js';
import { decodeSlot, sdesDescriptorLines } from './ring-lines.js';
import { sampleEngine } from './sample.js';
import { sdesHeader } from './sdes.js';
import type { EmuUnit } from './unit.js';

/** Per engine: the words each slot's cached line was made from, and the line. */
interface SlotCache {
  words: Uint32Array;
  lines: (string | undefined)[];
}

/** Renders one unit's `sdes` file, byte for byte what sdesText gives for the same state. */
export class SdesRenderer {
  private readonly caches = new Map<Engine, SlotCache>();
  private readonly scratch = emptyDescriptor();
  private out = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  /** The unit's chip layout and build (ring-lines.ts prints the cornelis/hfi2 lines). */
  private jkr = false;
  private driver: DriverBuild = 'upstream';

  /**
   * The whole file as the driver prints it (its software state beside all-ones registers once
   * gone); `samples`, when given, are that view of every engine already taken. The bytes are
   * valid until the next call.
   */
  render(u: EmuUnit, samples?: readonly EngineSample[]): Buffer {
    this.used = 0;
    this.jkr = u.host.cfg.jkr;
    this.driver = u.host.cfg.flavour.driver;
    for (const e of u.engines) {
      this.text(sdesHeader(samples?.[e.pos] ?? sampleEngine(u, e, true)));
      this.body(e);
    }
    return this.out.subarray(0, this.used);
  }

  /** descriptorLines for slot `s`, from the decoded fields (no bigint on the way). */
  private lines(w: Uint32Array, s: number): string {
    if (this.jkr || this.driver !== 'upstream') {
      return sdesDescriptorLines(this.driver, w, s, decodeSlot(this.jkr, w, s, this.scratch));
    }
    const f = decodeAt(w, s, this.scratch);
    const line = `\tdesc[${s}]: flags:${flagString(f)} addr:${hex16(f.addr)} gen:${f.gen} len:${f.len} bytes\n`;
    return f.first ? `${line}\t\tahgidx: ${f.ahgIdx} ahgmode: ${f.ahgMode}\n` : line;
  }

  private room(n: number): void {
    if (this.used + n <= this.out.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.used + n));
    this.out.copy(bigger, 0, 0, this.used);
    this.out = bigger;
  }

  private text(s: string): void {
    this.room(s.length);
    this.used += this.out.write(s, this.used, 'latin1');
  }

  private body(e: Engine): void {
    let c = this.caches.get(e);
    if (!c || c.words.length !== e.descq.length) {
      c = { words: new Uint32Array(e.descq.length), lines: new Array(e.descqCnt) };
      this.caches.set(e, c);
    }
    const w = e.descq;
    const cw = c.words;
    const tail = e.descqTail & e.mask;
    for (let s = e.descqHead & e.mask; s !== tail; s = (s + 1) & e.mask) {
      const i = s * 4;
      let line = c.lines[s];
      if (line === undefined || cw[i] !== w[i] || cw[i + 1] !== w[i + 1] || cw[i + 2] !== w[i + 2] || cw[i + 3] !== w[i + 3]) {
        line = this.lines(w, s);
        c.lines[s] = line;
        cw[i] = w[i] ?? 0;
        cw[i + 1] = w[i + 1] ?? 0;
        cw[i + 2] = w[i + 2] ?? 0;
        cw[i + 3] = w[i + 3] ?? 0;
      }
      this.text(line);
    }
  }
}
