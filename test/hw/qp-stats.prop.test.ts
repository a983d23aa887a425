import { describe, expect } from 'vitest';
import { type QpLineFields, qpStatsLine } from '../../src/emu/qp-stats.js';
import { ParseError } from '../../src/errors.js';
import { parseQpStats } from '../../src/hw/parse/qp-stats.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';
import { fixture } from './fixtures.js';

/** Run `f`; anything thrown other than a ParseError fails the property. */
function onlyParseError(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    expect(e.line).toBeGreaterThanOrEqual(1);
    expect(e.column).toBeGreaterThanOrEqual(1);
  }
}

const FIXTURES = [
  'current',
  'current-torn',
  'staging',
  'hdrwords-b',
  'hdrwords-c',
  'ifs-2016',
  'ifs-10.8',
  'ifs-10.5',
  'trailing',
].map((n) => fixture(`qp_stats/${n}.txt`));

/** Byte edits (set, insert, delete) of one of the fixtures. */
const mutated = fc
  .tuple(
    fc.constantFrom(...FIXTURES),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'delete')), {
      minLength: 1,
      maxLength: 4,
    }),
  )
  .map(([text, edits]) => {
    const b = [...Buffer.from(text, 'latin1')];
    for (const [at, byte, op] of edits) {
      const i = b.length === 0 ? 0 : at % b.length;
      if (op === 'set') b[i] = byte;
      else if (op === 'insert') b.splice(i, 0, byte);
      else b.splice(i, 1);
    }
    return Uint8Array.from(b);
  });

const line: fc.Arbitrary<QpLineFields> = fc.record({
  slot: fc.nat({ max: 70000 }),
  idle: fc.boolean(),
  qpn: fc.integer({ min: 0, max: 0xffffff }),
  refcount: fc.nat({ max: 1000 }),
  type: fc.constantFrom('SMI', 'GSI', 'RC', 'UC', 'UD'),
  state: fc.nat({ max: 6 }),
  sFlags: fc.integer({ min: 0, max: 0xffff_ffff }),
  sdmaPending: fc.nat({ max: 100000 }),
  pioPending: fc.nat({ max: 100000 }),
  onList: fc.boolean(),
  engine: fc.option(fc.nat({ max: 15 })),
  sendContext: fc.nat({ max: 159 }),
  pid: fc.nat({ max: 4194304 }),
});

describe('qp_stats properties (qp_iter_print, hfi1 qp.c)', () => {
  test.prop([mutated], fcParams(300, 10000))('mutated fixtures fail only with ParseError', (b) => {
    onlyParseError(() => parseQpStats(b, { file: 'qp_stats' }));
  });

  test.prop([fc.string({ maxLength: 300 })], fcParams(100, 3000))('random text fails only with ParseError', (s) => {
    onlyParseError(() => parseQpStats(s));
    onlyParseError(() => parseQpStats(`N 0 I QP 0 R 1 SMI ${s}\n`));
  });

  test.prop([fc.array(line, { maxLength: 40 }), fc.nat()], fcParams(150, 3000))(
    'rendered lines parse back to their fields; a cut anywhere keeps only whole lines',
    (lines, at) => {
      const text = lines.map(qpStatsLine).join('');
      const f = parseQpStats(text);
      expect(f.records.map((r) => [r.qpn, r.sFlags, r.sdmaPending, r.pioPending, r.onList, r.engine, r.pid, r.state])).toEqual(
        lines.map((q) => [q.qpn, q.sFlags, q.sdmaPending, q.pioPending, q.onList, q.engine, q.pid, q.state]),
      );
      const cut = text.length === 0 ? 0 : at % text.length;
      const part = parseQpStats(text.slice(0, cut));
      expect(part.records.map((r) => r.qpn)).toEqual(lines.slice(0, part.records.length).map((q) => q.qpn));
      expect(part.records.length).toBe(text.slice(0, cut).split('\n').length - 1);
    },
  );

  /** The parse of `input` as a comparable value: the file, or the error's message. */
  function outcome(input: Uint8Array | string): unknown {
    try {
      return parseQpStats(input, { file: 'qp_stats' });
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      return `ParseError: ${e.message}`;
    }
  }

  test.prop([mutated], fcParams(300, 10000))(
    'the byte fast path gives exactly what the careful scanner gives (records, tear, trailing fields, errors)',
    (b) => {
      expect(outcome(b)).toEqual(outcome(Buffer.from(b).toString('latin1')));
    },
  );

  test.prop([fc.array(line, { minLength: 1, maxLength: 20 }), fc.nat(), fc.integer({ min: 0, max: 255 })], fcParams(300, 10000))(
    'rendered current-format lines with one byte changed: fast path and careful scanner agree',
    (lines, at, byte) => {
      const b = Buffer.from(lines.map(qpStatsLine).join(''), 'latin1');
      b[at % b.length] = byte;
      expect(outcome(b)).toEqual(outcome(b.toString('latin1')));
    },
  );
});
