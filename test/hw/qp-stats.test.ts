import { describe, expect, it } from 'vitest';
import { qpStatsLine } from '../../src/emu/qp-stats.js';
import { ParseError } from '../../src/errors.js';
import { parseQpStats } from '../../src/hw/parse/qp-stats.js';
import { fixture, fixtureBytes } from './fixtures.js';

function parseError(f: () => unknown): ParseError {
  try {
    f();
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error('expected a ParseError');
}

const byQpn = (text: string) => new Map(parseQpStats(text).records.map((r) => [r.qpn, r]));

describe('parseQpStats: current upstream format (qp_iter_print, hfi1 qp.c)', () => {
  const f = parseQpStats(fixtureBytes('qp_stats/current.txt'), { file: 'qp_stats' });

  it('reads every line, layout C decided by the format', () => {
    expect(f.format).toBe('current');
    expect(f.records).toHaveLength(7);
    expect(f.torn).toBeNull();
    expect(f.trailing).toBeNull();
    expect(f.layout).toMatchObject({ layout: 'C', dialect: 'upstream', basis: 'format', ambiguous: false });
    expect(f.records.map((r) => r.line)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('QP0 and QP1: SMI with a NULL engine pointer, GSI on engine 0', () => {
    const [smi, gsi] = f.records;
    expect(smi).toMatchObject({ slot: 0, qpn: 0, type: 'SMI', engine: null, enginePtr: null, sendContext: 0, pid: 0 });
    expect(gsi).toMatchObject({ slot: 1, qpn: 1, type: 'GSI', engine: 0, enginePtr: '000000005d3f9a11', sendContext: 1 });
  });

  it('a DMA-descriptor waiter: every field the rule reads', () => {
    const r = f.records[2];
    expect(r).toMatchObject({
      slot: 2,
      idle: false,
      qpn: 0x12,
      refcount: 2,
      type: 'RC',
      state: 3,
      stateName: 'RTS',
      sFlags: 0x80001000,
      iowaitFlags: null,
      sdmaPending: 0,
      pioPending: 0,
      onList: true,
      ibTxQueued: null,
      engine: 5,
      sendContext: 3,
      pid: 4711,
      layout: 'C',
    });
    expect(r?.flags).toEqual({ names: ['WAIT_DMA_DESC', 'AHG_VALID'], waitDmaDesc: true, ioWaits: ['dma-desc'] });
  });

  it('an ERR-state QP still flagged, a PIO waiter, a QP with its own descriptors in flight', () => {
    const err = f.records[4];
    expect(err).toMatchObject({ qpn: 0x1e, stateName: 'ERR', onList: true, engine: 9 });
    expect(err?.flags.names).toEqual(['BUSY', 'WAIT_DMA_DESC']);
    const pio = f.records[5];
    expect(pio).toMatchObject({ qpn: 0x20, pioPending: 1, onList: true });
    expect(pio?.flags).toMatchObject({ waitDmaDesc: false, ioWaits: ['pio'] });
    const busy = f.records[6];
    expect(busy).toMatchObject({ qpn: 0x22, sdmaPending: 3, onList: false });
    expect(busy?.flags.waitDmaDesc).toBe(false);
  });

  it('bytes and text give the same records', () => {
    expect(parseQpStats(fixture('qp_stats/current.txt')).records).toEqual(f.records);
  });
});

describe('parseQpStats: older and out-of-tree formats', () => {
  it('staging (QP%u, two counters, (null) padded to 16 columns, raw addresses): A or B, B by default', () => {
    const f = parseQpStats(fixture('qp_stats/staging.txt'));
    expect(f.format).toBe('staging');
    expect(f.layout).toMatchObject({ layout: 'B', basis: 'default', ambiguous: true });
    const [smi, , a, b] = f.records;
    expect(smi).toMatchObject({ qpn: 0, engine: null, enginePtr: null, pid: null, sendContext: null, pioPending: null });
    expect(a).toMatchObject({ qpn: 18, sdmaPending: 0, onList: true, engine: 5, enginePtr: 'ffff88103c2a8a00' });
    expect(a?.flags.names).toEqual(['WAIT_DMA_DESC']);
    expect(b?.flags.names).toEqual(['WAIT_TX']);
  });

  it('staging read as layout A (a hint from the kernel release): 0x1000 is DMA_DESC, 0x2000 KMEM', () => {
    const f = parseQpStats(fixture('qp_stats/staging.txt'), { layoutHint: 'A' });
    expect(f.layout).toMatchObject({ layout: 'A', basis: 'hint' });
    expect(f.records[2]?.flags.names).toEqual(['WAIT_KMEM']);
    expect(f.records[3]?.flags.names).toEqual(['WAIT_DMA_DESC']);
  });

  it('staging with ECN of layout B (0x200000, unused in A) is decided B by value', () => {
    const text = fixture('qp_stats/staging.txt').replace('f=2000', 'f=202000');
    const f = parseQpStats(text, { layoutHint: 'A' });
    expect(f.layout).toMatchObject({ layout: 'B', basis: 'value', ambiguous: false });
    expect(f.layout?.evidence).toContain('line 3');
  });

  it('s_hdrwords era, AHG_VALID of layout B (0x80000): layout B by value, 0x2000 is DMA_DESC, 0x1000 TX', () => {
    const f = parseQpStats(fixture('qp_stats/hdrwords-b.txt'));
    expect(f.format).toBe('hdrwords');
    expect(f.layout).toMatchObject({ layout: 'B', basis: 'value' });
    expect(f.records[2]?.flags.names).toEqual(['WAIT_DMA_DESC', 'AHG_VALID']);
    expect(f.records[3]?.flags).toMatchObject({ names: ['WAIT_TX'], waitDmaDesc: false });
    expect(f.records[2]).toMatchObject({ engine: 4, pid: 3301, state: 3 });
  });

  it('s_hdrwords era, a driver bit (0x80000000): layout C by value, the same 0x1000 now DMA_DESC', () => {
    const f = parseQpStats(fixture('qp_stats/hdrwords-c.txt'));
    expect(f.layout).toMatchObject({ layout: 'C', basis: 'value' });
    expect(f.records[2]?.flags.names).toEqual(['WAIT_DMA_DESC', 'AHG_VALID']);
    expect(f.records[3]?.flags.names).toEqual(['WAIT_KMEM']);
  });

  it('s_hdrwords era with no deciding value: both readings, B by default and C by hint', () => {
    const b = parseQpStats(fixture('qp_stats/ifs-2016.txt'));
    expect(b.format).toBe('hdrwords');
    expect(b.layout).toMatchObject({ layout: 'B', basis: 'default', ambiguous: true });
    expect(b.records[1]?.flags.waitDmaDesc).toBe(false);
    const c = parseQpStats(fixture('qp_stats/ifs-2016.txt'), { layoutHint: 'C' });
    expect(c.layout).toMatchObject({ layout: 'C', basis: 'hint' });
    expect(c.records[1]?.flags.waitDmaDesc).toBe(true);
    expect(c.records[1]).toMatchObject({ qpn: 0x2a, engine: 7, sendContext: 3, pid: 2201 });
  });

  it('IFS 10.8+ (W … pf=, nine counters, RCD) with TID continuation lines skipped', () => {
    const f = parseQpStats(fixture('qp_stats/ifs-10.8.txt'));
    expect(f.format).toBe('ifs');
    expect(f.layout).toMatchObject({ layout: 'C', dialect: 'ifs-10.8', basis: 'format' });
    expect(f.continuationLines).toBe(7);
    expect(f.records.map((r) => r.line)).toEqual([1, 2, 10]);
    expect(f.records[1]).toMatchObject({
      qpn: 0x12,
      iowaitFlags: 1,
      sdmaPending: 0,
      pioPending: 0,
      onList: true,
      ibTxQueued: true,
    });
    expect(f.records[1]?.flags.waitDmaDesc).toBe(true);
    // IFS 10.8 swapped TID_RESP and TID_SPACE relative to upstream (qp.h of those releases).
    expect(f.records[2]?.flags.names).toEqual(['WAIT_TID_RESP']);
    const upstream = parseQpStats(fixture('qp_stats/current.txt').replace('f=400 ', 'f=10000000 '));
    expect(upstream.records[5]?.flags.names).toEqual(['WAIT_TID_SPACE']);
  });

  it('IFS 10.5–10.7 (s_hdrwords and W … pf=, RCD with two more fields)', () => {
    const f = parseQpStats(fixture('qp_stats/ifs-10.5.txt'));
    expect(f.format).toBe('ifs-hdrwords');
    expect(f.layout).toMatchObject({ layout: 'C', dialect: 'ifs-10.7', basis: 'format' });
    expect(f.records[1]).toMatchObject({ qpn: 0x14, engine: 8, onList: true, ibTxQueued: true, pid: 4711 });
    expect(f.records[1]?.flags.names).toEqual(['WAIT_DMA_DESC']);
  });
});

describe('parseQpStats: torn reads, trailing fields, errors', () => {
  const text = fixture('qp_stats/current.txt');
  const all = parseQpStats(text).records;

  it('the fixture with its last line cut keeps the complete lines and reports the cut one', () => {
    const f = parseQpStats(fixture('qp_stats/current-torn.txt'), { file: 'd/qp_stats' });
    expect(f.records).toEqual(all.slice(0, 6));
    expect(f.torn).toMatchObject({ line: 7 });
    expect(f.torn?.error.message).toMatch(/^d\/qp_stats:7:\d+: the last line has no newline/);
  });

  it('a cut at every offset keeps exactly the lines that are complete', () => {
    for (let cut = 0; cut <= text.length; cut++) {
      const head = text.slice(0, cut);
      const complete = head.split('\n').length - 1;
      const f = parseQpStats(head);
      expect(f.records).toHaveLength(complete);
      expect(f.torn === null).toBe(cut === 0 || head.endsWith('\n'));
    }
  });

  it('a read in two chunks split at each line boundary gives the whole file', () => {
    const starts = [0, ...[...text.matchAll(/\n/g)].map((m) => (m.index as number) + 1)];
    for (const at of starts) {
      const r = [...parseQpStats(text.slice(0, at)).records, ...parseQpStats(text.slice(at)).records];
      expect(r.map((x) => x.qpn)).toEqual(all.map((x) => x.qpn));
    }
  });

  it('keeps unknown trailing fields as a note and uses the known ones', () => {
    const f = parseQpStats(fixture('qp_stats/trailing.txt'));
    expect(f.trailing).toEqual({ line: 3, text: 'TIDQ 5 2', count: 1 });
    expect(f.records[2]?.extra).toBe('TIDQ 5 2');
    expect(f.records[2]?.engine).toBe(5);
  });

  it('names file, line and column of garbage', () => {
    const bad = text.replace('QP 1e R 2 RC', 'QP 1e R 2 XC');
    const e = parseError(() => parseQpStats(bad, { file: '/sys/kernel/debug/hfi1/hfi1_0/qp_stats' }));
    expect(e.code).toBe('E_PARSE');
    expect([e.file, e.line, e.column]).toEqual(['/sys/kernel/debug/hfi1/hfi1_0/qp_stats', 5, 17]);
    expect(e.message).toContain("unknown QP type 'XC'");
    expect(e.text.startsWith('N 5 B QP 1e')).toBe(true);
  });

  it('refuses a wrong counter count, an on-list value above 1, a missing SDE and mixed formats', () => {
    const line3 = text.split('\n')[2] as string;
    expect(parseError(() => parseQpStats(`${line3.replace('f=80001000 0 0 1 ', 'f=80001000 0 0 1 9 ')}\n`)).message).toContain(
      '6 counters',
    );
    expect(parseError(() => parseQpStats(`${line3.replace('f=80001000 0 0 1 ', 'f=80001000 0 0 2 ')}\n`)).message).toContain(
      '0 or 1',
    );
    expect(parseError(() => parseQpStats(`${line3.replace(' SDE ', ' SDX ')}\n`)).message).toContain("' SDE '");
    const staging = fixture('qp_stats/staging.txt').split('\n')[0];
    const e = parseError(() => parseQpStats(`${line3}\n${staging}\n`));
    expect([e.line, e.message.includes('one file has one format')]).toEqual([2, true]);
    expect(parseError(() => parseQpStats('\tTID RDMA f 0x0\n')).line).toBe(1);
    expect(parseError(() => parseQpStats('\n')).line).toBe(1);
  });

  it('an empty file has no records and no layout', () => {
    expect(parseQpStats('')).toMatchObject({ records: [], format: null, layout: null, torn: null, lines: 0 });
  });
});

describe('parseQpStats: a large device', () => {
  it('1,200 QPs generated in the current format parse back to the same fields', () => {
    let text = '';
    const want: { qpn: number; engine: number | null; sFlags: number; onList: boolean; sdmaPending: number }[] = [];
    for (let i = 0; i < 1200; i++) {
      const waiting = i % 7 === 3;
      const q = {
        slot: i < 2 ? i : 2 + (i % 509),
        idle: !waiting,
        qpn: i < 2 ? i : 0x10 + i,
        refcount: waiting ? 2 : 1,
        type: i === 0 ? ('SMI' as const) : i === 1 ? ('GSI' as const) : ('RC' as const),
        state: 3,
        sFlags: waiting ? 0x1000 : 0,
        sdmaPending: i % 5 === 0 ? 2 : 0,
        pioPending: 0,
        onList: waiting,
        engine: i === 0 ? null : i % 16,
        sendContext: i % 4,
        pid: 1000 + i,
      };
      text += qpStatsLine(q);
      want.push({ qpn: q.qpn, engine: q.engine, sFlags: q.sFlags, onList: q.onList, sdmaPending: q.sdmaPending });
    }
    const f = parseQpStats(text);
    expect(f.layout?.layout).toBe('C');
    expect(
      f.records.map((r) => ({ qpn: r.qpn, engine: r.engine, sFlags: r.sFlags, onList: r.onList, sdmaPending: r.sdmaPending })),
    ).toEqual(want);
    expect(f.records.filter((r) => r.flags.waitDmaDesc)).toHaveLength(want.filter((w) => w.sFlags).length);
    expect(byQpn(text).size).toBe(1200);
  });
});

describe('decideLayout edges', () => {
  it('a high driver bit in the staging format is no evidence for layout C', () => {
    const text = fixture('qp_stats/staging.txt').replace('f=2000', 'f=80002000');
    expect(parseQpStats(text).layout).toMatchObject({ layout: 'B', basis: 'default', ambiguous: true });
  });
});
