// The chip side: INT_REQ, progress every DESC_CNT descriptors, the forced progress interrupt of
// sdma_engine_progress_schedule, sdma.h; head write-back (the head write-back, sdma.c) and the generation check (SDMA_DESC1_GENERATION, sdma.h).
import { describe, expect, it } from 'vitest';
import { SDMA_TXREQ_F_URGENT } from '../../src/progress/constants.js';
import { quietUnit, Recorder, txOf } from './support.js';

describe('chip', () => {
  it('raises SDmaInt for an URGENT txreq (INT_REQ) and writes head_dma (HEAD_TO_HOST)', () => {
    const u = quietUnit({ chipTiming: { irqLatencyNs: 100 } });
    const e = u.engineAt(0);
    const rec = new Recorder();
    const before = e.sdmaIntCnt;
    expect(u.submit(0, rec.tx(txOf(2, SDMA_TXREQ_F_URGENT)))).toBe(0);
    expect((e.descq[(e.descqTail - 1) * 4 + 2] ?? 0) & 3).toBe(3); // IH on the last descriptor
    u.resume();
    u.advance(0.01);
    expect(e.sdmaIntCnt).toBe(before + 1);
    expect(e.chip.headDma).toBe(2);
    expect(rec.done.map((d) => d.status)).toEqual([0]);
  });

  it('raises a progress interrupt every DESC_CNT (64) descriptors, then an idle one', () => {
    // A short interrupt latency keeps the last progress interrupt apart from the idle one (a
    // handler call with both bits counts as idle, struct sdma_engine, sdma.h).
    const u = quietUnit({ chipTiming: { irqLatencyNs: 100 } });
    const e = u.engineAt(0);
    const rec = new Recorder();
    for (let i = 0; i < 65; i++) expect(u.submit(0, rec.tx(txOf(2)))).toBe(0);
    const [p0, i0, f0] = [e.progressIntCnt, e.idleIntCnt, e.chip.descFetched];
    expect(e.chip.descCnt).toBe(64);
    u.resume();
    u.advance(1);
    expect(e.progressIntCnt - p0).toBe(2);
    expect(e.idleIntCnt - i0).toBe(1);
    expect(e.chip.descFetched - f0).toBe(130);
    expect(rec.done).toHaveLength(65);
    expect(e.descqHead).toBe(e.descqTail);
  });

  it('forces a progress interrupt only at in-process ≥ descq_cnt / 8 (in flight ≥ 255 for 2048)', () => {
    const u = quietUnit();
    const e = u.engineAt(0);
    const rec = new Recorder();
    for (let i = 0; i < 254; i++) u.submit(0, rec.tx(txOf(1)));
    expect(e.progressSchedule()).toBe(false);
    u.submit(0, rec.tx(txOf(1)));
    const p0 = e.progressIntCnt;
    const seq = e.headSeq;
    expect(e.progressSchedule()).toBe(true);
    u.advance(0.01);
    expect(e.progressIntCnt).toBe(p0 + 1);
    expect(e.headSeq).toBe(seq + 2);
    expect(e.descqHead).toBe(0); // the chip is paused: the pass retires nothing
  });

  it('halts with GEN_MISMATCH on a descriptor of the wrong generation, then recovers (SDMA_DESC1_GENERATION, sdma.h, __sdma_process_event, sdma.c)', () => {
    const u = quietUnit();
    const e = u.engineAt(0);
    const rec = new Recorder();
    u.submit(0, rec.tx(txOf(2)));
    u.submit(0, rec.tx(txOf(2)));
    e.descq[2 * 4 + 2] = (e.descq[2 * 4 + 2] as number) ^ 0x4; // second tx's first descriptor
    u.resume();
    u.advance(2);
    expect(u.stats().genMismatches).toBe(1);
    expect(
      u
        .events(['chipHalt'])
        .filter((r) => r.timeNs > 2e6)
        .map((r) => [r.engine, r.a]),
    ).toEqual([[0, 1]]);
    expect(
      u
        .events(['engineError'])
        .filter((r) => r.timeNs > 2e6)
        .map((r) => [r.engine, r.a, r.b]),
    ).toEqual([[0, 2, 1]]);
    expect(rec.done.map((d) => d.status)).toEqual([0, 2]);
    expect(e.state).toBe('s99_Running');
    expect([e.descqHead, e.descqTail]).toEqual([0, 0]);
  });
});
