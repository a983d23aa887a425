import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { parseQpStats } from '../../src/hw/parse/qp-stats.js';
import { QpStatsMemo } from '../../src/hw/waiters-qp-memo.js';

const current = readFileSync(new URL('../fixtures/qp_stats/current.txt', import.meta.url));

describe('QpStatsMemo', () => {
  it('returns the previous parse for the same bytes, read into a new buffer', () => {
    const memo = new QpStatsMemo();
    const first = memo.parse(Buffer.from(current), { file: 'qp_stats' });
    const again = memo.parse(Buffer.from(current), { file: 'qp_stats' });
    expect(again).toBe(first);
    expect(first).toEqual(parseQpStats(current, { file: 'qp_stats' }));
  });

  it('parses again when one byte changed, or the layout hint did', () => {
    const memo = new QpStatsMemo();
    const first = memo.parse(current, {});
    const changed = Buffer.from(current);
    const at = changed.indexOf('f=80001000');
    changed[at + 2] = '0'.charCodeAt(0);
    const second = memo.parse(changed, {});
    expect(second).not.toBe(first);
    expect(second).toEqual(parseQpStats(changed));
    const hinted = memo.parse(changed, { layoutHint: 'B' });
    expect(hinted).not.toBe(second);
    expect(hinted).toEqual(parseQpStats(changed, { layoutHint: 'B' }));
  });

  it('does not remember a file that failed to parse: the same bytes fail again', () => {
    const memo = new QpStatsMemo();
    const bad = Buffer.from('N 0 X QP 0\n');
    expect(() => memo.parse(bad, {})).toThrow(ParseError);
    expect(() => memo.parse(bad, {})).toThrow(ParseError);
    expect(memo.parse(current, {}).records.length).toBeGreaterThan(0);
  });
});
