import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { parseQpStats } from '../../src/hw/parse/qp-stats.js';
import { fastQpLine } from '../../src/hw/parse/qp-stats-fast.js';
import { fixture } from './fixtures.js';

const BASE = `${fixture('qp_stats/current.txt').split('\n')[2] as string}\n`;

/** The parse of `input` as a comparable value: the file, or the error's message. */
function outcome(input: Uint8Array | string): unknown {
  try {
    return parseQpStats(input, { file: 'qp_stats' });
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    return `ParseError: ${e.message}`;
  }
}

const fast = (line: string) => fastQpLine(Buffer.from(line, 'latin1'), 0, line.length - 1);

// Each variant: [what, the line]; the fast path and the careful scanner must agree on every one.
const VARIANTS: [string, string][] = [
  ['the base line', BASE],
  ['on-list counter 2', BASE.replace('f=80001000 0 0 1 ', 'f=80001000 0 0 2 ')],
  ['slot above %d', BASE.replace('N 2 ', 'N 2147483648 ')],
  ['slot with a leading zero', BASE.replace('N 2 ', 'N 02 ')],
  ['QPN of seven hex digits', BASE.replace('QP 12 ', 'QP 1234567 ')],
  ['upper-case hex in f=', BASE.replace('f=80001000', 'f=8000100A')],
  ['nine hex digits in f=', BASE.replace('f=80001000', 'f=800010000')],
  ['a seventh counter', BASE.replace('14 27 40 SPSN', '14 27 40 5 SPSN')],
  ['five counters', BASE.replace('14 27 40 SPSN', '14 27 SPSN')],
  ['a third field before f= (s_hdrwords)', BASE.replace('RC 3 2 f=', 'RC 3 2 0 f=')],
  ['a NULL engine pointer', BASE.replace('SDE 00000000a1b2c3d4,5', 'SDE 0000000000000000,0')],
  ['a (null) engine pointer', BASE.replace('SDE 00000000a1b2c3d4,5', 'SDE           (null),0')],
  ['a raw pointer', BASE.replace('SDE 00000000a1b2c3d4,5', 'SDE ffff9a0012345678,5')],
  ['seventeen pointer digits', BASE.replace('SDE 00000000a1b2c3d4,5', 'SDE 000000000a1b2c3d4,5')],
  ['no comma after the pointer', BASE.replace('SDE 00000000a1b2c3d4,5', 'SDE 00000000a1b2c3d4 5')],
  ['a negative PID', BASE.replace('PID 4711', 'PID -1')],
  ['an SRQ', BASE.replace('RQ 257', 'SRQ 257')],
  ['no RNR group', BASE.replace(' RNR 0 RQ 257', '')],
  ['no OS, E or RNR groups', BASE.replace(' OS 6 0 E 0 0 0 RNR 0 RQ 257', '')],
  ['an IFS RCD group', BASE.replace('RQ 257\n', 'RQ 257 RCD 3\n')],
  ['trailing fields of a newer driver', BASE.replace('RQ 257\n', 'RQ 257 NEW 1 2\n')],
  ['a stray character in the middle', BASE.replace('RPSN 5e6f70', 'RPSN 5e6f_70')],
  ['no SDE', BASE.replace(' SDE 00000000a1b2c3d4,5', '')],
  ['an unknown QP type', BASE.replace(' RC ', ' XRC ')],
  ['a lower-case QP type', BASE.replace(' RC ', ' Rc ')],
  ['a state above the enum', BASE.replace('RC 3 2 f=', 'RC 9 2 f=')],
  ['a trailing space', BASE.replace('RQ 257\n', 'RQ 257 \n')],
];

describe('qp_stats fast path (qp-stats-fast.ts) against the careful scanner', () => {
  it.each(VARIANTS)('%s: same records or the same error', (_what, line) => {
    const text = `${fixture('qp_stats/current.txt')}${line}`;
    expect(outcome(Buffer.from(text, 'latin1'))).toEqual(outcome(text));
  });

  it('takes the lines of the current format and leaves every other shape to the careful scanner', () => {
    for (const l of fixture('qp_stats/current.txt').split('\n').slice(0, -1)) expect(fast(`${l}\n`)).not.toBeNull();
    const taken = VARIANTS.filter(([, l]) => fast(l) !== null).map(([w]) => w);
    expect(taken).toEqual([
      'the base line',
      'a NULL engine pointer',
      'a (null) engine pointer',
      'a raw pointer',
      'a negative PID',
      'an SRQ',
      'no RNR group',
      'no OS, E or RNR groups',
      'a state above the enum',
    ]);
  });

  it('a fast record equals the careful one field by field', () => {
    const [viaBytes] = parseQpStats(Buffer.from(BASE, 'latin1')).records;
    const [viaText] = parseQpStats(BASE).records;
    expect(viaBytes).toEqual(viaText);
    expect(viaBytes).toMatchObject({
      qpn: 0x12,
      engine: 5,
      enginePtr: '00000000a1b2c3d4',
      sendContext: 3,
      pid: 4711,
      onList: true,
    });
  });
});
