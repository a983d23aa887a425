// The worked examples of the ring arithmetic (sdma.h; a 2048-entry ring) replayed on the emulator, field by field.
import { describe, expect, it } from 'vitest';
import { engineInterrupt } from '../../src/emu/retire.js';
import { EBUSY } from '../../src/emu/tx.js';
import { freeCount, inProcess } from '../../src/progress/ring.js';
import { INT_IDLE, INT_PROGRESS, quietUnit, Recorder, txOf, Waiter } from './support.js';

/** sdma.h ring arithmetic, 2048-entry ring state: head 4090 (slot 2042), tail 4100 (slot 4), tx_head 100, tx_tail 103; A=3, B=4, C=3. */
function exampleState(capMask?: number) {
  const u = quietUnit(capMask === undefined ? {} : { capMask });
  u.presetCounters(0, 4090, 100);
  const rec = new Recorder();
  const [a, b, c] = [rec.tx(txOf(3)), rec.tx(txOf(4)), rec.tx(txOf(3))];
  for (const t of [a, b, c]) expect(u.submit(0, t)).toBe(0);
  return { u, e: u.engineAt(0), rec, a, b, c };
}

describe('ring arithmetic worked example (descq_cnt 2048)', () => {
  it('places A, B and C with the next_descq_idx, generations and counts of the example', () => {
    const { e, a, b, c } = exampleState();
    expect([e.descqHead, e.descqTail, e.txHead, e.txTail]).toEqual([4090, 4100, 100, 103]);
    expect([a.nextDescqIdx, b.nextDescqIdx, c.nextDescqIdx]).toEqual([2045, 1, 4]);
    const gen = (raw: number) => ((e.descq[(raw & 0x7ff) * 4 + 2] as number) >>> 2) & 3;
    expect([4090, 4091, 4092, 4093, 4094, 4095].map(gen)).toEqual([1, 1, 1, 1, 1, 1]);
    expect([4096, 4097, 4098, 4099].map(gen)).toEqual([2, 2, 2, 2]);
    expect(freeCount(2048, e.descqHead, e.descqTail)).toBe(2037);
    expect(inProcess(2048, e.descqHead, e.descqTail)).toBe(11);
  });

  it('step 1: a progress interrupt with HEAD 2 retires to 4098, completing A then B', () => {
    const { e, rec, a, b } = exampleState();
    e.chip.hwHead = 2;
    const seq = e.headSeq;
    const progressBefore = e.progressIntCnt;
    engineInterrupt(e, INT_PROGRESS);
    expect(e.descqHead).toBe(4098);
    expect(e.descqHead & 0x7ff).toBe(2);
    expect(e.txHead).toBe(102);
    expect(rec.done.map((d) => [d.tx, d.status])).toEqual([
      [a, 0],
      [b, 0],
    ]);
    expect(e.freecnt()).toBe(2045);
    expect(e.headSeq).toBe(seq + 2);
    expect(e.progressIntCnt).toBe(progressBefore + 1);
    expect(e.lastStatus).toBe(2 ** 16);
  });

  it('step 2: with the idle bit and swtail 4 ≠ hwhead 2, HEAD is re-read (4) and C completes', () => {
    // USE_SDMA_HEAD (cap bit 6) makes the first read come from head_dma (2); the CSR reads 4.
    const { e, rec, c } = exampleState(0x2 | (1 << 6));
    e.chip.headDma = 2;
    e.chip.hwHead = 4;
    const idleBefore = e.idleIntCnt;
    engineInterrupt(e, INT_PROGRESS | INT_IDLE);
    expect(e.descqHead).toBe(4100);
    expect(e.txHead).toBe(103);
    expect(rec.done.map((d) => d.status)).toEqual([0, 0, 0]);
    expect(rec.done[2]?.tx).toBe(c);
    expect(e.idleIntCnt).toBe(idleBefore + 1);
  });

  it('without the idle bit the same head_dma value stops at 2 (no re-read)', () => {
    const { e } = exampleState(0x2 | (1 << 6));
    e.chip.headDma = 2;
    e.chip.hwHead = 4;
    engineInterrupt(e, INT_PROGRESS);
    expect(e.descqHead).toBe(4098);
  });
});

/** Shortage example: head 10000, tail 12040 (free 7), sequence 5000, a 9-descriptor tx. */
function shortage() {
  const u = quietUnit();
  u.presetCounters(0, 10000, 0);
  const rec = new Recorder();
  for (let i = 0; i < 255; i++) expect(u.submit(0, rec.tx(txOf(8)))).toBe(0);
  const e = u.engineAt(0);
  expect([e.descqHead, e.descqTail, e.freecnt()]).toEqual([10000, 12040, 7]);
  e.headSeq = 5000;
  const w = new Waiter('qp');
  w.seqAtWake = () => e.headSeq;
  return { u, e, rec, w, tx: rec.tx(txOf(9)) };
}

describe('ring arithmetic shortage example (descq_cnt 2048)', () => {
  it('sleeps on dmawait with -EBUSY and DQF + 1; the interrupt at 5001 wakes it, 5002 after', () => {
    const { u, e, w, tx } = shortage();
    expect(u.submit(0, tx, { wait: w.wait, pktsSent: true })).toBe(EBUSY);
    expect(e.descqFullCount).toBe(1);
    expect(e.dmawait).toEqual([w.wait]);
    expect(w.wait.txHead).toEqual([tx]);
    expect(e.headSeq).toBe(5000);
    e.chip.hwHead = 10050 & 0x7ff;
    expect(e.chip.hwHead).toBe(1858);
    engineInterrupt(e, INT_PROGRESS);
    expect(e.descqHead).toBe(10050);
    expect(e.freecnt()).toBe(57);
    expect(w.wakes).toEqual([{ flushed: false, seq: 5001 }]);
    expect(e.dmawait).toEqual([]);
    expect(e.headSeq).toBe(5002);
    expect(u.stats().failedPlacements).toBe(1);
  });

  it('alternative interleaving: the interrupt between sample and check makes sdma_progress return 1', () => {
    const { u, e, w, tx } = shortage();
    let seqSampled = -1;
    u.host.afterSeqSample = () => {
      u.host.afterSeqSample = null;
      seqSampled = e.headSeq;
      e.chip.hwHead = 1858;
      engineInterrupt(e, INT_PROGRESS);
    };
    expect(u.submit(0, tx, { wait: w.wait, pktsSent: true })).toBe(0);
    expect(seqSampled).toBe(5000);
    expect(e.headSeq).toBe(5002);
    expect(e.descqFullCount).toBe(0);
    expect(e.dmawait).toEqual([]);
    expect(w.wait.txHead).toEqual([]);
    expect(e.descqTail).toBe(12049);
    expect(e.freecnt()).toBe(57 - 9);
  });
});
