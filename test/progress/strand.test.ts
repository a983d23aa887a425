// The stranded-waiter rule: stranded only after 3 quiet samples spanning strandMs, cleared on
// wake-up; orphaned on a stopped engine; a PSM writer on an idle unit is a 1 s stall. Then the
// reference's ten known false positives, each of which must not be flagged stranded.
import { describe, expect, it } from 'vitest';
import type { EngineSample, Waiter, WaitersSample } from '../../src/backend.js';
import {
  countVerdicts,
  judgeWaiters,
  newStrandTrack,
  psmStallEpisodes,
  type StrandTrack,
  type WaiterJudgement,
} from '../../src/progress/strand.js';
import { mkSample, type SampleSpec } from '../support/samples.js';
import { psmWaiter, qpWaiter } from '../support/waiters.js';

const OPTS = { strandMs: 200 };

const qp = qpWaiter;
const psm = psmWaiter;

/** Four engines, idle by default; `busy` engines have work in flight that moves with t. */
function engines(t: number, spec: Record<number, Partial<SampleSpec>> = {}, busy: number[] = []): EngineSample[] {
  return [0, 1, 2, 3].map((e) =>
    busy.includes(e) ? mkSample({ t, engine: e, dh: t, dt: t + 50 }) : mkSample({ t, engine: e, dh: 100, ...spec[e] }),
  );
}

function ws(t: number, waiters: Waiter[]): WaitersSample {
  return { unit: 0, timeMs: t, waiters, visibility: [] };
}

/** Feed rounds every `stepMs`; returns the judgements of each round. */
function run(
  rounds: number,
  stepMs: number,
  waitersAt: (t: number, i: number) => Waiter[],
  enginesAt: (t: number, i: number) => EngineSample[] = (t) => engines(t),
  track: StrandTrack = newStrandTrack(),
): WaiterJudgement[][] {
  const out: WaiterJudgement[][] = [];
  for (let i = 0; i < rounds; i++) {
    const t = i * stepMs;
    out.push(judgeWaiters(track, ws(t, waitersAt(t, i)), enginesAt(t, i), OPTS));
  }
  return out;
}

const verdicts = (rs: WaiterJudgement[][]) => rs.map((r) => r.map((j) => j.verdict).join(',') || '-');

describe('the stranded rule', () => {
  it('flags a QP on a running, empty, quiet engine after 3 samples spanning strandMs', () => {
    const rs = run(4, 100, () => [qp()]);
    expect(verdicts(rs)).toEqual(['waiting', 'waiting', 'stranded', 'stranded']);
    expect(rs[2]?.[0]).toMatchObject({ reason: 'lost-wakeup', probable: false, holdingSinceMs: 0, episodes: 1 });
  });

  it('needs the time span too: 3 samples within less than strandMs are not enough', () => {
    const rs = run(3, 50, () => [qp()]);
    expect(verdicts(rs)).toEqual(['waiting', 'waiting', 'waiting']);
    expect(rs[2]?.[0]?.reason).toBe('confirming');
    expect(verdicts(run(5, 50, () => [qp()]))[4]).toBe('stranded');
  });

  it('clears when the QP wakes (leaves the list) and counts a new episode if it strands again', () => {
    const track = newStrandTrack();
    const rs = run(8, 100, (_t, i) => (i === 4 ? [] : [qp()]), undefined, track);
    expect(verdicts(rs)).toEqual(['waiting', 'waiting', 'stranded', 'stranded', '-', 'waiting', 'waiting', 'stranded']);
    expect(rs[7]?.[0]?.episodes).toBe(1);
  });

  it('is not stranded while its engine is busy, and the streak restarts when the engine moves', () => {
    const rs = run(
      6,
      100,
      () => [qp()],
      (t, i) => engines(t, {}, i === 2 ? [2] : []),
    );
    expect(verdicts(rs)).toEqual(['waiting', 'waiting', 'waiting', 'waiting', 'waiting', 'stranded']);
    expect(rs[2]?.[0]?.reason).toBe('engine-busy');
  });

  it('is not stranded when the engine is empty but not quiet (an interrupt pass ran: seq moved)', () => {
    const rs = run(
      6,
      100,
      () => [qp()],
      (t, i) => engines(t, { 2: { seq: i * 2 } }),
    );
    expect(verdicts(rs).every((v) => v === 'waiting')).toBe(true);
  });

  it('is not stranded with its own descriptors in flight', () => {
    const rs = run(5, 100, () => [qp({ ownPending: 4 })]);
    expect(rs[4]?.[0]).toMatchObject({ verdict: 'waiting', reason: 'own-pending' });
  });

  it('orphaned: waiters on an engine that is not running (link down, or a flush on an old kernel); on a gone device, unknown', () => {
    const rs = run(
      4,
      100,
      () => [qp()],
      (t) => engines(t, { 2: { state: 's20_Idle' } }),
    );
    expect(verdicts(rs)).toEqual(['waiting', 'waiting', 'orphaned', 'orphaned']);
    expect(rs[3]?.[0]?.reason).toBe('engine-not-running');
    const gone = run(
      4,
      100,
      () => [qp()],
      (t) => engines(t, { 2: { gone: true, state: null } }),
    );
    // A gone device is the finding itself: its waiters are not reported as orphaned one by one.
    expect(gone[3]?.[0]).toMatchObject({ verdict: 'unknown', reason: 'device-gone' });
  });

  it('psm-stall: a PSM writer blocked while every running engine of its unit is idle', () => {
    const track = newStrandTrack();
    const rs = run(4, 100, () => [psm()], undefined, track);
    expect(verdicts(rs)).toEqual(['waiting', 'waiting', 'psm-stall', 'psm-stall']);
    expect(rs[3]?.[0]).toMatchObject({ reason: 'lost-wakeup', probable: true });
    expect(psmStallEpisodes(track)).toBe(1);
    // It gives up after 1 s and leaves; a second stall of the same writer is a second episode.
    run(1, 100, () => [], undefined, track);
    const again = run(4, 100, () => [psm()], undefined, track);
    expect(again[3]?.[0]?.verdict).toBe('psm-stall');
    expect(psmStallEpisodes(track)).toBe(2);
  });

  it('a PSM writer while any engine of the unit is busy is a plain wait', () => {
    const rs = run(
      5,
      100,
      () => [psm()],
      (t) => engines(t, {}, [0]),
    );
    expect(rs[4]?.[0]).toMatchObject({ verdict: 'waiting', reason: 'unit-busy' });
  });

  it('a frozen capture gives no time-based verdict', () => {
    const track = newStrandTrack();
    for (let i = 0; i < 5; i++) {
      const [j] = judgeWaiters(track, ws(0, [qp()]), engines(0), { strandMs: 200, frozen: true });
      expect(j?.verdict).toBe('unknown');
    }
  });

  it('counts verdicts', () => {
    const rs = run(4, 100, () => [qp(), psm(), qp({ qpn: 7, waitsFor: 'pio', engine: null })]);
    expect(countVerdicts(rs[3] ?? [])).toMatchObject({ stranded: 1, 'psm-stall': 1, waiting: 1, orphaned: 0 });
  });
});

describe('known false positives: none is flagged stranded', () => {
  it('1. snapshot skew: qp_stats shows the QP queued while sdes already shows the engine drained, before the IRQ ran', () => {
    // Round 0: engine busy; round 1: drained (the skewed read); round 2: the interrupt pass ran (counters moved) and
    // the harvest woke the QP, which is gone from the list.
    const rs = run(
      3,
      100,
      (_t, i) => (i < 2 ? [qp()] : []),
      (t, i) => engines(t, { 2: { seq: i === 2 ? 2 : 0 } }, i === 0 ? [2] : []),
    );
    expect(rs.flat().some((j) => j.verdict === 'stranded')).toBe(false);
  });

  it('2. printed SDE ≠ engine waited on: a sibling engine of the same VL is busy, so only "probable"', () => {
    const rs = run(
      4,
      100,
      () => [qp({ source: 'qp_stats' })],
      (t) => engines(t, {}, [3]),
    );
    const last = rs[3]?.[0];
    expect(last).toMatchObject({ verdict: 'stranded', probable: true });
    // With every engine of its VL idle it is certain; with the VL map unknown it stays probable.
    expect(run(4, 100, () => [qp({ source: 'qp_stats' })])[3]?.[0]?.probable).toBe(false);
    const noVl = run(
      4,
      100,
      () => [qp({ source: 'qp_stats' })],
      (t) => engines(t).map((s) => ({ ...s, vl: null })),
    );
    expect(noVl[3]?.[0]?.probable).toBe(true);
  });

  it('3. engine not in s99_Running: orphaned, not stranded', () => {
    const rs = run(
      5,
      100,
      () => [qp()],
      (t) => engines(t, { 2: { state: 's50_HwCleanUp' } }),
    );
    expect(rs[4]?.[0]?.verdict).toBe('orphaned');
  });

  it('4. an ERR-state QP left on the list (notify_error_qp skips a busy QP): error-state', () => {
    const rs = run(5, 100, () => [qp({ qpState: 'ERR' })]);
    expect(rs[4]?.[0]).toMatchObject({ verdict: 'error-state', reason: 'qp-error' });
  });

  it('5. transient mismatches: flag without on-list, or on-list without the flag, alternating', () => {
    const rs = run(8, 100, (_t, i) => [i % 2 === 0 ? qp({ onList: false }) : qp({ waitsFor: 'unknown' })]);
    expect(rs.flat().some((j) => j.verdict === 'stranded')).toBe(false);
    const half = run(8, 100, (_t, i) => [i % 2 === 0 ? qp({ onList: false }) : qp()]);
    expect(half.flat().some((j) => j.verdict === 'stranded')).toBe(false);
  });

  it('6. on a list without DMA_DESC (PIO, TX, KMEM): another list, not an engine', () => {
    for (const waitsFor of ['pio', 'pio-drain', 'tx', 'kmem'] as const) {
      const rs = run(5, 100, () => [qp({ waitsFor })]);
      expect(rs[4]?.[0]).toMatchObject({ verdict: 'waiting', reason: 'other-list' });
    }
  });

  it('7. more than 20 waiters: harvested 20 per pass while the woken ones keep the engine busy', () => {
    const many = (n: number) => Array.from({ length: n }, (_, k) => qp({ qpn: 0x100 + k }));
    // 25 wait while the engine drains; 20 are woken and submit (busy), then the last 5 are harvested.
    const rs = run(
      6,
      100,
      (_t, i) => (i < 2 ? many(25) : i < 4 ? many(5) : []),
      (t, i) => engines(t, {}, i < 4 ? [2] : []),
    );
    expect(rs.flat().some((j) => j.verdict === 'stranded')).toBe(false);
    // Left behind on an idle engine, the rest are really stranded: reported with reason batch-limit.
    const left = run(
      6,
      100,
      (_t, i) => (i < 1 ? many(25) : many(5)),
      (t, i) => engines(t, {}, i < 1 ? [2] : []),
    );
    expect(left[5]?.[0]).toMatchObject({ verdict: 'stranded', reason: 'batch-limit' });
  });

  it('8. pid reuse: a new command under an old PSM pid starts afresh', () => {
    const track = newStrandTrack();
    const rs = run(4, 100, (_t, i) => [psm({ command: i < 2 ? 'old_rank' : 'new_rank' })], undefined, track);
    expect(verdicts(rs)).toEqual(['waiting', 'waiting', 'waiting', 'waiting']);
  });

  it('9. invisible waiters: a PSM writer with no engine is never "stranded" on an engine', () => {
    const rs = run(5, 100, () => [psm()]);
    expect(rs.flat().some((j) => j.verdict === 'stranded')).toBe(false);
    const noSide = run(5, 100, () => [qp({ engine: null })]);
    expect(noSide[4]?.[0]).toMatchObject({ verdict: 'unknown', reason: 'engine-unknown' });
  });

  it('10. a chunked qp_stats read listing a QP twice: judged once, and not as two samples', () => {
    const rs = run(2, 100, () => [qp({ source: 'qp_stats' }), qp({ source: 'qp_stats' })]);
    expect(rs.map((r) => r.length)).toEqual([1, 1]);
    expect(verdicts(rs)).toEqual(['waiting', 'waiting']);
  });
});
