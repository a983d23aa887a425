// sdma.h ring arithmetic, 2048-entry ring, step by step, on the pure primitives: generations, next_descq_idx, the retirement walk,
// free counts, and the shortage example in both interleavings.
import { describe, expect, it } from 'vitest';
import { generationFromTail } from '../../src/progress/descriptor.js';
import { freeCount, inProcess, sdmaMask, sdmaShift, slot } from '../../src/progress/ring.js';
import { sampleSeq, sdmaProgress, sdmaProgressOutcome } from '../../src/progress/seq.js';

const CNT = 2048;
const MASK = sdmaMask(CNT);
const SHIFT = sdmaShift(CNT);

describe('ring arithmetic worked example (descq_cnt 2048)', () => {
  // A = 3 descriptors (4090–4092), B = 4 (4093–4096), C = 3 (4097–4099).
  const txs = [
    { name: 'A', first: 4090, n: 3 },
    { name: 'B', first: 4093, n: 4 },
    { name: 'C', first: 4097, n: 3 },
  ].map((t) => ({ ...t, next: slot(t.first + t.n, CNT) }));

  it('has the geometry of the example', () => {
    expect(MASK).toBe(0x7ff);
    expect(SHIFT).toBe(11);
    expect(slot(4090, CNT)).toBe(2042);
    expect(slot(4100, CNT)).toBe(4);
    expect(txs.map((t) => t.next)).toEqual([2045, 1, 4]);
    expect(freeCount(CNT, 4090, 4100)).toBe(2037);
    expect(inProcess(CNT, 4090, 4100)).toBe(11);
  });

  it('writes generation 1 for A and the first three of B, 2 for B’s last and C (SDMA_DESC1_GENERATION, sdma.h)', () => {
    const gens = Array.from({ length: 10 }, (_, k) => generationFromTail(4090 + k, SHIFT));
    expect(gens).toEqual([1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
  });

  // The retirement walk of sdma_make_progress (sdma.c) on the primitives: advance descq_head one descriptor at a time
  // until its slot reaches the hardware head; a tx completes when the slot equals its next index.
  function walk(descqHead: number, txHead: number, hwHead: number) {
    const steps: { descqHead: number; slot: number; completed?: string }[] = [];
    let head = descqHead;
    let txh = txHead;
    while (slot(head, CNT) !== hwHead) {
      head += 1;
      const tx = txs[txh - 100];
      const s = slot(head, CNT);
      if (tx && tx.next === s) {
        txh += 1;
        steps.push({ descqHead: head, slot: s, completed: tx.name });
      } else {
        steps.push({ descqHead: head, slot: s });
      }
    }
    return { head, txh, steps };
  }

  it('step 1: HEAD reads 2; descq_head walks 4091…4098, A then B complete, 8 retired, free 2045', () => {
    const r = walk(4090, 100, 2);
    expect(r.steps.map((s) => s.descqHead)).toEqual([4091, 4092, 4093, 4094, 4095, 4096, 4097, 4098]);
    expect(r.steps.filter((s) => s.completed).map((s) => [s.completed, s.descqHead, s.slot])).toEqual([
      ['A', 4093, 2045],
      ['B', 4097, 1],
    ]);
    expect(r.steps).toHaveLength(8);
    expect(r.txh).toBe(102);
    expect(freeCount(CNT, r.head, 4100)).toBe(2045);
  });

  it('step 2: with the idle bit, swtail 4 ≠ hwhead 2 → HEAD re-read 4, C completes', () => {
    const first = walk(4090, 100, 2);
    expect(slot(4100, CNT)).not.toBe(2);
    const second = walk(first.head, first.txh, 4);
    expect(second.steps.filter((s) => s.completed).map((s) => s.completed)).toEqual(['C']);
    expect(second.head).toBe(4100);
    expect(second.txh).toBe(103);
    expect(freeCount(CNT, second.head, 4100)).toBe(2047);
  });
});

describe('ring arithmetic shortage example (descq_cnt 2048)', () => {
  const before = { descqCnt: CNT, descqHead: 10000, descqTail: 12040 };

  it('finds 7 free for a 9-descriptor tx', () => {
    expect(freeCount(CNT, before.descqHead, before.descqTail)).toBe(7);
  });

  it('interleaving 1: no writer since the sample → 0, the sender sleeps; the interrupt later frees 57', () => {
    const seq = sampleSeq(5000);
    expect(seq).toBe(5000);
    expect(sdmaProgress({ ...before, seq: 5000 }, seq, 9)).toBe(0);
    // Interrupt: sequence 5001 while retiring to hardware head slot 10050 & 0x7ff = 1858.
    expect(slot(10050, CNT)).toBe(1858);
    const after = { ...before, descqHead: 10050 };
    expect(freeCount(CNT, after.descqHead, after.descqTail)).toBe(57);
    expect(freeCount(CNT, after.descqHead, after.descqTail)).toBeGreaterThanOrEqual(9); // harvested: 9 ≤ 57
  });

  it('interleaving 2: the interrupt completed between sample and check → 5002 ≠ 5000, desc_avail 57, result 1', () => {
    const seq = sampleSeq(5000);
    const o = sdmaProgressOutcome({ ...before, descqHead: 10050, seq: 5002 }, seq, 9);
    expect(o).toEqual({ result: 1, reason: 'fits', moved: true, descAvail: 57 });
  });

  it('a writer still inside its section at check time (odd 5001) also counts as moved', () => {
    expect(sdmaProgress({ ...before, descqHead: 10050, seq: 5001 }, 5000, 9)).toBe(1);
    expect(sdmaProgressOutcome({ ...before, seq: 5001 }, 5000, 9)).toMatchObject({ result: 0, reason: 'no-room' });
  });
});
