import { describe, expect, it } from 'vitest';
import { parseQpStats } from '../../src/hw/parse/qp-stats.js';
import { carrySince, qpWaiters, visibilityOf, type Waiter, waitersOnEngine } from '../../src/progress/waiters.js';
import { fixture } from './fixtures.js';

describe('qpWaiters: qp_stats records to waiter records', () => {
  const current = parseQpStats(fixture('qp_stats/current.txt')).records;

  it('lists only QPs with RVT_S_WAIT_DMA_DESC or on a list, with identity (and the creating thread qp_stats prints), wait, engine and own pending', () => {
    const w = qpWaiters(current, 1000);
    expect(w).toEqual([
      {
        kind: 'qp',
        qpn: 0x12,
        qpState: 'RTS',
        creatorPid: 4711,
        waitsFor: 'dma-desc',
        descriptorsNeeded: null,
        engine: 5,
        onList: true,
        ownPending: 0,
        sinceMs: 1000,
        source: 'qp_stats',
      },
      {
        kind: 'qp',
        qpn: 0x1e,
        qpState: 'ERR',
        creatorPid: 4712,
        waitsFor: 'dma-desc',
        descriptorsNeeded: null,
        engine: 9,
        onList: true,
        ownPending: 0,
        sinceMs: 1000,
        source: 'qp_stats',
      },
      // A PIO waiter sits on a send context's list, not an engine's (pio_wait, verbs.c).
      {
        kind: 'qp',
        qpn: 0x20,
        qpState: 'RTS',
        creatorPid: 4713,
        waitsFor: 'pio',
        descriptorsNeeded: null,
        engine: null,
        onList: true,
        ownPending: 0,
        sinceMs: 1000,
        source: 'qp_stats',
      },
    ]);
    expect(waitersOnEngine(w, 5).map((x) => x.kind === 'qp' && x.qpn)).toEqual([0x12]);
  });

  it('the flag alone (off the list for a moment) and the list alone (flag not yet seen) both count', () => {
    const text = fixture('qp_stats/current.txt');
    const flagOnly = parseQpStats(text.replace('f=80001000 0 0 1 ', 'f=80001000 0 0 0 ')).records;
    expect(qpWaiters(flagOnly, 0).find((w) => w.kind === 'qp' && w.qpn === 0x12)).toMatchObject({
      waitsFor: 'dma-desc',
      onList: false,
      engine: 5,
    });
    const listOnly = parseQpStats(text.replace('f=80001000 0 0 1 ', 'f=80000000 0 0 1 ')).records;
    expect(qpWaiters(listOnly, 0).find((w) => w.kind === 'qp' && w.qpn === 0x12)).toMatchObject({
      waitsFor: 'unknown',
      onList: true,
      engine: 5,
    });
  });

  it('the layout decides: the same 0x1000 is a DMA waiter in layout C and a TX waiter in layout B', () => {
    const c = parseQpStats(fixture('qp_stats/ifs-2016.txt'), { layoutHint: 'C' }).records;
    const b = parseQpStats(fixture('qp_stats/ifs-2016.txt'), { layoutHint: 'B' }).records;
    expect(qpWaiters(c, 0)[0]).toMatchObject({ waitsFor: 'dma-desc', engine: 7 });
    expect(qpWaiters(b, 0)[0]).toMatchObject({ waitsFor: 'tx', engine: null });
  });

  it('a QP listed twice (a read in chunks) is one waiter', () => {
    const line = `${fixture('qp_stats/current.txt').split('\n')[2]}\n`;
    expect(qpWaiters(parseQpStats(line + line).records, 0)).toHaveLength(1);
  });
});

describe('carrySince and visibilityOf', () => {
  const at = (ms: number, waitsFor: Waiter['waitsFor'] = 'dma-desc'): Waiter => ({
    kind: 'qp',
    qpn: 7,
    qpState: 'RTS',
    waitsFor,
    descriptorsNeeded: null,
    engine: 1,
    onList: true,
    ownPending: 0,
    sinceMs: ms,
    source: 'qp_stats',
  });

  it('keeps the first time a waiter was seen while it waits for the same thing', () => {
    expect(carrySince([at(100)], [at(300)])[0]?.sinceMs).toBe(100);
    expect(carrySince([at(100, 'pio')], [at(300)])[0]?.sinceMs).toBe(300);
    expect(carrySince([], [at(300)])[0]?.sinceMs).toBe(300);
    const psm: Waiter = {
      kind: 'psm',
      pid: 7,
      command: 'app',
      waitsFor: 'dma-desc',
      descriptorsNeeded: 0,
      engine: null,
      onList: true,
      ownPending: null,
      sinceMs: 50,
      source: 'proc',
    };
    expect(carrySince([psm], [at(300)])[0]?.sinceMs).toBe(300);
  });

  it('says for every kind whether it is visible, so no waiters and cannot see are distinct', () => {
    const v = visibilityOf([{ kind: 'qp', visible: true, source: 'qp_stats' }]);
    expect(v.map((x) => [x.kind, x.visible])).toEqual([
      ['qp', true],
      ['psm', false],
      ['ipoib', false],
    ]);
    expect(v[1]?.reason).toBeTruthy();
  });
});
