// The invariant report detects each kind of violation it claims to check.
import { describe, expect, it } from 'vitest';
import { invariantViolations } from '../../src/emu/invariants.js';
import { iowaitQueue } from '../../src/emu/iowait.js';
import { LogKind } from '../../src/emu/log.js';
import { quietUnit, Recorder, txOf, Waiter } from './support.js';

function withTraffic() {
  const u = quietUnit();
  const rec = new Recorder();
  for (let i = 0; i < 5; i++) expect(u.submit(0, rec.tx(txOf(3)))).toBe(0);
  expect(invariantViolations(u)).toEqual([]);
  return { u, e: u.engineAt(0) };
}

describe('invariant report', () => {
  it('flags a descq_full_count that differs from the failed placements', () => {
    const { u, e } = withTraffic();
    e.descqFullCount++;
    expect(invariantViolations(u).join('\n')).toMatch(/descq_full_count total 1 ≠ failed placements 0/);
  });

  it('flags a descriptor whose generation is wrong', () => {
    const { u, e } = withTraffic();
    const w = (e.descqHead & e.mask) * 4 + 2;
    e.descq[w] = (e.descq[w] as number) ^ 0x4;
    expect(invariantViolations(u).join('\n')).toMatch(/has generation \d, expected \d/);
  });

  it('flags a txreq that vanished (conservation)', () => {
    const { u, e } = withTraffic();
    e.txRing[e.txHead & e.mask] = null;
    e.txHead = (e.txHead + 1) & 0xffff;
    expect(invariantViolations(u).join('\n')).toMatch(/conservation: submitted 5 ≠ completed 0 \+ aborted 0 \+ in flight 4/);
  });

  it('flags too many descriptors in flight', () => {
    const { u, e } = withTraffic();
    e.descqTail = (e.descqHead + e.descqCnt) >>> 0;
    expect(invariantViolations(u).join('\n')).toMatch(/exceeds descq_cnt − 1/);
  });

  it('flags a transition that is not in the table', () => {
    const { u } = withTraffic();
    // s20_Idle (3) + e10_GoHwStart (1) → s99_Running (10): no such row.
    u.host.log.write(u.host.sched.nowNs, LogKind.event, 0, 1, 3, 10);
    expect(invariantViolations(u).join('\n')).toMatch(
      /s20_Idle \+ e10_GoHwStart → s99_Running is not in the driver's transition table/,
    );
  });

  it('flags a lost wake-up: a waiter on dmawait of an idle, empty, running engine', () => {
    const u = quietUnit();
    u.resume();
    u.advance(1);
    const w = new Waiter('psm');
    iowaitQueue(true, w.wait, u.engineAt(1));
    expect(invariantViolations(u).join('\n')).toMatch(
      /^lost wake-up on engine 1: PSM writer 20100 \(mpi_rank_100\) sleeps on dmawait needing 0 descriptor\(s\) while 2047 are free/,
    );
    expect(u.totals().lostWakeups).toBe(1);
  });
});
