// The `sdes` file of a served tree, rendered pass after pass: a descriptor's line is formatted
// once and reused while the four words in its slot stay the same, so a refresh costs little more
// than the headers and the descriptors written since the last one.
import { emptyDescriptor } from '../progress/descriptor.js';
import type { Engine } from './engine.js';
import { descriptorAt, sampleEngine } from './sample.js';
import { descriptorLines, sdesHeader } from './sdes.js';
import type { EmuUnit } from './unit.js';

/** Per engine: the words each slot's cached line was made from, and the line. */
interface SlotCache {
  words: Uint32Array;
  lines: (string | undefined)[];
}

/** Renders one unit's `sdes` text, byte for byte what sdesText gives for the same state. */
export class SdesRenderer {
  private readonly caches = new Map<Engine, SlotCache>();
  private readonly scratch = emptyDescriptor();

  /** The whole file as the driver prints it (its software state beside all-ones registers once gone). */
  render(u: EmuUnit): string {
    let out = '';
    for (const e of u.engines) out += sdesHeader(sampleEngine(u, e, true)) + this.body(e);
    return out;
  }

  private body(e: Engine): string {
    let c = this.caches.get(e);
    if (!c || c.words.length !== e.descq.length) {
      c = { words: new Uint32Array(e.descq.length), lines: new Array(e.descqCnt) };
      this.caches.set(e, c);
    }
    const w = e.descq;
    const cw = c.words;
    const tail = e.descqTail & e.mask;
    let body = '';
    for (let s = e.descqHead & e.mask; s !== tail; s = (s + 1) & e.mask) {
      const i = s * 4;
      let line = c.lines[s];
      if (line === undefined || cw[i] !== w[i] || cw[i + 1] !== w[i + 1] || cw[i + 2] !== w[i + 2] || cw[i + 3] !== w[i + 3]) {
        line = descriptorLines(descriptorAt(w, s, this.scratch));
        c.lines[s] = line;
        cw[i] = w[i] ?? 0;
        cw[i + 1] = w[i + 1] ?? 0;
        cw[i + 2] = w[i + 2] ?? 0;
        cw[i + 3] = w[i + 3] ?? 0;
      }
      body += line;
    }
    return body;
  }
}
