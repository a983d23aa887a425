import { describe, expect, it } from 'vitest';
import {
  descqCntFromParam,
  fitReport,
  freeCount,
  inFlight,
  inProcess,
  isEmpty,
  progressScheduleFires,
  scheduleThreshold,
  slot,
} from '../../src/progress/ring.js';

describe('ring arithmetic (sdma_descq_freecnt, sdma.h)', () => {
  it('keeps one slot empty: an empty 2048 ring has 2047 free and in-process 1', () => {
    expect(freeCount(2048, 5, 5)).toBe(2047);
    expect(inProcess(2048, 5, 5)).toBe(1);
    expect(isEmpty(5, 5)).toBe(true);
  });

  it('is full at tail − head = cnt − 1 with a free count of 0', () => {
    expect(freeCount(2048, 100, 100 + 2047)).toBe(0);
    expect(inProcess(2048, 100, 100 + 2047)).toBe(2048);
  });

  it('counts in flight across the u32 wrap', () => {
    const head = 0xffff_fff0;
    const tail = 0x10; // wrapped
    expect(inFlight(head, tail)).toBe(0x20);
    expect(freeCount(2048, head, tail)).toBe(2048 - 32 - 1);
    expect(slot(head, 2048)).toBe(0x7f0);
  });

  it('reports the shortage example of the ring arithmetic (2048 entries): free 7, 9 does not fit', () => {
    const r = fitReport(2048, 10000, 12040, 9);
    expect(r).toMatchObject({ inFlight: 2040, free: 7, fits: false, scheduleThreshold: 256, canEverFit: true });
  });

  it('says a 64-descriptor request can never fit a 64-entry ring', () => {
    const r = fitReport(64, 0, 0, 64);
    expect(r.free).toBe(63);
    expect(r.fits).toBe(false);
    expect(r.canEverFit).toBe(false);
  });

  it('fires the progress schedule at in-process ≥ cnt/8 (in flight ≥ 255 for 2048, sdma_engine_progress_schedule, sdma.h)', () => {
    expect(scheduleThreshold(2048)).toBe(256);
    expect(progressScheduleFires(2048, 0, 254)).toBe(false);
    expect(progressScheduleFires(2048, 0, 255)).toBe(true);
  });

  it('applies the module-parameter rule with 16-bit truncation (sdma_get_descq_cnt, sdma.c)', () => {
    expect(descqCntFromParam(2048)).toBe(2048);
    expect(descqCntFromParam(65600)).toBe(64);
    expect(descqCntFromParam(100)).toBe(2048);
    expect(descqCntFromParam(0)).toBe(2048);
    expect(descqCntFromParam(32)).toBe(2048);
    expect(descqCntFromParam(65536)).toBe(2048);
    expect(descqCntFromParam(32768)).toBe(32768);
  });
});
