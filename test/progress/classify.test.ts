import { describe, expect, it } from 'vitest';
import { type Classification, classify, newTrack, REASONS, VERDICTS } from '../../src/progress/classify.js';
import { mkSample, type SampleSpec } from '../support/samples.js';

const OPTS = { stallMs: 1000, recoveryMs: 2000, descqCnt: 2048 };

/** Classify a series of samples of one engine; returns every classification. */
function series(specs: SampleSpec[]): Classification[] {
  const track = newTrack();
  return specs.map((s) => classify(track, mkSample(s), OPTS));
}

const last = <T>(xs: T[]): T => {
  const x = xs[xs.length - 1];
  if (x === undefined) throw new Error('empty');
  return x;
};

describe('classifier verdicts', () => {
  it('idle: nothing in flight', () => {
    const r = series([
      { t: 0, dh: 10 },
      { t: 500, dh: 10 },
      { t: 5000, dh: 10 },
    ]);
    expect(r.map((c) => c.verdict)).toEqual(['idle', 'idle', 'idle']);
    expect(last(r).reason).toBe('empty');
  });

  it('progressing: head moved, with descriptors/s and txreqs/s', () => {
    const r = series([
      { t: 0, dh: 0, dt: 500, txh: 0 },
      { t: 500, dh: 400, dt: 900, txh: 200 },
    ]);
    expect(last(r)).toMatchObject({ verdict: 'progressing', reason: 'moving', descPerSec: 800, txPerSec: 400, inFlight: 500 });
  });

  it('counts across the u32 and u16 wraps', () => {
    const r = series([
      { t: 0, dh: 0xffff_ff00, dt: 0xffff_ff80, txh: 65500 },
      { t: 1000, dh: 0x10, dt: 0x40, txh: 20 },
    ]);
    expect(last(r)).toMatchObject({ verdict: 'progressing', descPerSec: 0x110, txPerSec: 56 });
  });

  it('backpressure: descq_full_count rising while progressing', () => {
    const r = series([
      { t: 0, dh: 0, dt: 2000, dqf: 5 },
      { t: 100, dh: 100, dt: 2100, dqf: 9 },
    ]);
    expect(last(r)).toMatchObject({ verdict: 'backpressure', reason: 'ring-full' });
  });

  it('stalled chip-not-fetching: H(HW) and fetched frozen with T(HW) ≠ H(HW); only after a confirming sample', () => {
    const s = (t: number) => ({ t, dh: 100, dt: 600, fetched: 100 });
    const r = series([s(0), s(500), s(1000), s(1500), s(2000)]);
    expect(r.map((c) => c.verdict)).toEqual(['unknown', 'unknown', 'unknown', 'stalled', 'stalled']);
    expect(r.map((c) => c.reason).slice(0, 3)).toEqual(['warming-up', 'warming-up', 'stall-suspected']);
    expect(last(r)).toMatchObject({ reason: 'chip-not-fetching', stallCount: 1, stallMaxMs: 2000, stuckSinceMs: 0 });
  });

  it('stalled retirement-lost: the chip drained the ring but the software head did not move', () => {
    const s = (t: number) => ({ t, dh: 100, dt: 600, hwHead: 600, hwTail: 600, seq: 40 });
    const r = series([s(0), s(1000), s(2000)]);
    expect(last(r)).toMatchObject({ verdict: 'stalled', reason: 'retirement-lost' });
  });

  it('progressing with writeback-stalled: H(D) frozen while H(HW) moves (informational)', () => {
    const r = series([
      { t: 0, dh: 0, dt: 500, headDma: 7 },
      { t: 600, dh: 100, dt: 600, headDma: 7 },
      { t: 1200, dh: 200, dt: 700, headDma: 7 },
    ]);
    expect(last(r)).toMatchObject({ verdict: 'progressing', reason: 'writeback-stalled' });
  });

  it('counts a second stall after recovery, keeping the longest', () => {
    const stuck = (t: number, dh: number) => ({ t, dh, dt: dh + 100, fetched: 1 });
    const r = series([stuck(0, 0), stuck(1000, 0), stuck(2500, 0), stuck(3000, 50), stuck(4000, 50), stuck(5000, 50)]);
    expect(r.map((c) => c.verdict)).toEqual(['unknown', 'unknown', 'stalled', 'progressing', 'unknown', 'stalled']);
    expect(last(r)).toMatchObject({ stallCount: 2, stallMaxMs: 2500, stuckSinceMs: 3000 });
  });

  it('does not call a stopped engine (not running) stalled', () => {
    const s = (t: number) => ({ t, dh: 100, dt: 600, state: 's20_Idle' });
    expect(series([s(0), s(1500), s(3000)]).map((c) => c.verdict)).not.toContain('stalled');
  });

  it('halted: a non-operational state beyond the recovery window; recovering before it', () => {
    const s = (t: number) => ({ t, dh: 0, dt: 0, state: 's50_HwHaltWait' });
    const r = series([s(0), s(1000), s(2000)]);
    expect(r.map((c) => [c.verdict, c.reason])).toEqual([
      ['unknown', 'recovering'],
      ['unknown', 'recovering'],
      ['halted', 'state'],
    ]);
  });

  it('halted by STATUS bit 56 and by a halt-class error bit, with the decoded bits', () => {
    const st = series([
      { t: 0, status: 1n << 56n },
      { t: 2500, status: 1n << 56n },
    ]);
    expect(last(st)).toMatchObject({ verdict: 'halted', reason: 'status-halted' });
    const er = series([
      { t: 0, err: 0x2n },
      { t: 3000, err: 0x2n },
    ]);
    expect(last(er)).toMatchObject({
      verdict: 'halted',
      reason: 'error-bits',
      errors: [{ bit: 1, name: 'SDmaGenMismatchErr', halts: true }],
    });
  });

  it('a correctable (non-halting) error bit does not halt', () => {
    const r = series([
      { t: 0, err: 1n << 20n },
      { t: 3000, err: 1n << 20n },
    ]);
    expect(last(r).verdict).toBe('idle');
    expect(last(r).errors).toEqual([{ bit: 20, name: 'SDmaAssemblyCorErr', halts: false }]);
  });

  it('reports orphaned work: a flush list non-empty beyond the recovery window', () => {
    const r = series([
      { t: 0, flne: true },
      { t: 1000, flne: true },
      { t: 2500, flne: true },
    ]);
    expect(r.map((c) => c.orphanedWork)).toEqual([false, false, true]);
  });

  it('gone: registers read all-ones', () => {
    const r = series([
      { t: 0, dh: 5, dt: 9 },
      { t: 100, gone: true },
    ]);
    expect(last(r)).toMatchObject({ verdict: 'gone', reason: 'registers-all-ones', errors: [] });
  });

  it('with only interrupt counts: progressing while seq moves, unknown otherwise (idle or stopped with work in flight)', () => {
    const r = series([
      { t: 0, noSw: true, noCsr: true, seq: 10 },
      { t: 100, noSw: true, noCsr: true, seq: 14 },
      { t: 200, noSw: true, noCsr: true, seq: 14 },
    ]);
    expect(r.map((c) => [c.verdict, c.reason])).toEqual([
      ['unknown', 'warming-up'],
      ['progressing', 'no-ring-state'],
      ['unknown', 'no-ring-state'],
    ]);
  });

  it('survives a clean-up that resets DH/DT to 0 without a negative rate', () => {
    const r = series([
      { t: 0, dh: 5000, dt: 5100, hwHead: 5000 & 2047, hwTail: 5100 & 2047 },
      { t: 100, dh: 0, dt: 40, hwHead: 0, hwTail: 40 },
    ]);
    expect(last(r).descPerSec).toBeGreaterThanOrEqual(0);
  });

  it('a stuck engine is unknown (warming up) until the stall is confirmed, never progressing at 0 desc/s', () => {
    const s = (t: number) => ({ t, dh: 100, dt: 600, fetched: 100 });
    const r = series([s(0), s(400), s(800)]);
    expect(r.map((c) => c.verdict)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(r.every((c) => c.reason === 'warming-up')).toBe(true);
  });

  it('waiting after movement within --stall-ms stays progressing', () => {
    const r = series([
      { t: 0, dh: 0, dt: 500 },
      { t: 200, dh: 100, dt: 500 },
      { t: 400, dh: 100, dt: 500 },
    ]);
    expect(r.map((c) => [c.verdict, c.reason])).toEqual([
      ['unknown', 'warming-up'],
      ['progressing', 'moving'],
      ['progressing', 'waiting'],
    ]);
  });

  it('a frozen capture gets no time-based verdict: unknown (single-instant-capture), idle and gone kept', () => {
    const frozen = { ...OPTS, frozen: true };
    const stuck = classify(newTrack(), mkSample({ t: 0, dh: 100, dt: 600, fetched: 100 }), frozen);
    expect(stuck).toMatchObject({ verdict: 'unknown', reason: 'single-instant-capture', descPerSec: null });
    const t = newTrack();
    for (const at of [0, 5000, 10000]) classify(t, mkSample({ t: at, dh: 100, dt: 600 }), frozen);
    expect(classify(t, mkSample({ t: 20000, dh: 100, dt: 600 }), frozen).verdict).toBe('unknown');
    expect(classify(newTrack(), mkSample({ t: 0, dh: 5, dt: 5 }), frozen).verdict).toBe('idle');
    expect(classify(newTrack(), mkSample({ t: 0, gone: true }), frozen).verdict).toBe('gone');
  });

  it('counts halts and recoveries across samples, and the rise of SDMAErrCt with the bits last seen', () => {
    const track = newTrack();
    const at = (t: number, err: bigint, errCount: number) => {
      const s = mkSample({ t, err, fetched: 0 });
      if (s.counters) s.counters.errCount = BigInt(errCount);
      return classify(track, s, OPTS);
    };
    at(0, 0n, 4);
    at(100, 0x2n, 5); // a halt-class error seen
    const back = at(200, 0n, 5); // recovered: the bits are gone
    expect(back).toMatchObject({ halts: 1, recoveries: 1, errCount: 5, errCountRise: 1, errors: [] });
    expect(back.lastErrors.map((e) => e.name)).toEqual(['SDmaGenMismatchErr']);
    const unseen = at(300, 0n, 7); // two more errors that recovered between samples
    expect(unseen).toMatchObject({ halts: 1, errCountRise: 3 });
  });

  it('exports every verdict and reason as constants', () => {
    expect(VERDICTS).toContain('unknown');
    expect(new Set(REASONS).size).toBe(REASONS.length);
    expect(REASONS).toContain('single-instant-capture');
  });
});
