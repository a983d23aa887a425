// core.*: the pure progress logic against trivial baselines.
import { decodeWords, emptyDescriptor } from '../src/progress/descriptor.js';
import { type ProgressState, sdmaProgress } from '../src/progress/seq.js';
import { type BenchSuite, nsPerOp, ratioResult } from './harness.js';

export const coreSuite: BenchSuite = {
  name: 'core',
  run() {
    // sdmaProgress per call vs an empty function of the same arity.
    const states: ProgressState[] = Array.from({ length: 1024 }, (_, i) => ({
      seq: i * 2,
      descqCnt: 2048,
      descqHead: i * 7,
      descqTail: i * 7 + (i % 2047),
    }));
    const empty = (_s: ProgressState, _q: number, _n: number): number => 0;
    const base = nsPerOp((i) => empty(states[i & 1023] as ProgressState, i & ~1, 9));
    const prog = nsPerOp((i) => sdmaProgress(states[i & 1023] as ProgressState, i & ~1, 9));
    // decode per descriptor vs two BigUint64Array loads of the same descriptor.
    const ring = new BigUint64Array(2 * 2048);
    for (let i = 0; i < ring.length; i++) ring[i] = (BigInt(i) * 0x9e3779b97f4a7c15n) & 0xffff_ffff_ffff_ffffn;
    const words = new Uint32Array(ring.buffer);
    const out = emptyDescriptor();
    const loads = nsPerOp((i) => {
      const k = (i & 2047) * 2;
      return (ring[k] as bigint) ^ (ring[k + 1] as bigint);
    });
    const dec = nsPerOp((i) => {
      const w = (i & 2047) * 4;
      return decodeWords(words[w] as number, words[w + 1] as number, words[w + 2] as number, words[w + 3] as number, out).len;
    });
    return [ratioResult('core.sdmaProgress', prog, base, 'ns/call'), ratioResult('core.decode', dec, loads, 'ns/descriptor')];
  },
};
