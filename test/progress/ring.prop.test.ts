import { describe, expect } from 'vitest';
import { freeCount, inFlight, inProcess, isEmpty, slot, u16 } from '../../src/progress/ring.js';
import { sampleSeq, sdmaProgress, seqChanged } from '../../src/progress/seq.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';

const U32 = 2n ** 32n;
const U16 = 2n ** 16n;
const mod = (x: bigint, m: bigint) => ((x % m) + m) % m;
const cnts = fc.constantFrom(64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768);
const u32 = fc.integer({ min: 0, max: 0xffff_ffff });

describe('ring arithmetic equals a BigInt model of the C expressions (sdma_descq_freecnt, sdma.h)', () => {
  test.prop([cnts, u32, u32], fcParams(2000, 200_000))('freecnt, inprocess, in flight, empty, slot', (cnt, head, tail) => {
    const b = { cnt: BigInt(cnt), head: BigInt(head), tail: BigInt(tail) };
    const inflightRef = mod(b.tail - b.head, U32);
    // descq_cnt − (tail − head) − 1 evaluated in u32, then returned as u16.
    const freeRef = mod(mod(b.cnt - inflightRef - 1n, U32), U16);
    expect(inFlight(head, tail)).toBe(Number(inflightRef));
    expect(freeCount(cnt, head, tail)).toBe(Number(freeRef));
    expect(inProcess(cnt, head, tail)).toBe(Number(mod(b.cnt - freeRef, U16)));
    expect(isEmpty(head, tail)).toBe(head === tail);
    expect(slot(head, cnt)).toBe(Number(b.head & (b.cnt - 1n)));
  });

  test.prop([fc.integer({ min: -(2 ** 40), max: 2 ** 40 })], fcParams(500, 50_000))('u16 truncates like C', (x) => {
    expect(u16(x)).toBe(Number(mod(BigInt(x), U16)));
  });

  test.prop([cnts, u32, fc.integer({ min: 0, max: 32767 })], fcParams(1000, 100_000))(
    'a consistent ring never shows more than cnt − 1 free, and free + in flight + 1 = cnt',
    (cnt, head, n) => {
      const inflight = n % cnt; // 0 … cnt − 1
      const tail = (head + inflight) >>> 0;
      const free = freeCount(cnt, head, tail);
      expect(free).toBeLessThanOrEqual(cnt - 1);
      expect(free + inflight + 1).toBe(cnt);
    },
  );
});

describe('the progress sequence (the head_lock seqlock, sdma.h) and sdma_progress (sdma_progress, sdma.h)', () => {
  test.prop([u32], fcParams(500, 50_000))('a sample is even and at most one below the sequence', (seq) => {
    const s = sampleSeq(seq);
    expect(s % 2).toBe(0);
    expect(seq - s === 0 || seq - s === 1).toBe(true);
    // An odd sample point (writer inside) always reads as changed afterwards.
    expect(seqChanged(seq, s)).toBe(seq % 2 === 1);
  });

  test.prop([cnts, u32, fc.integer({ min: 0, max: 32767 }), u32, fc.integer({ min: 1, max: 64 })], fcParams(1000, 100_000))(
    'returns 1 exactly when the sequence moved and the request fits',
    (cnt, head, n, seq, numDesc) => {
      const tail = (head + (n % cnt)) >>> 0;
      const sample = sampleSeq(seq);
      const state = { seq, descqCnt: cnt, descqHead: head, descqTail: tail };
      const want = seq !== sample && numDesc <= freeCount(cnt, head, tail) ? 1 : 0;
      expect(sdmaProgress(state, sample, numDesc)).toBe(want);
    },
  );
});
