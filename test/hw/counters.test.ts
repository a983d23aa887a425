import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { interruptPasses, seqFromPasses } from '../../src/hw/merge.js';
import {
  countersByName,
  engineCounters,
  hwCounterName,
  parseCounterNames,
  parseCounterValues,
  parseHwCounterValue,
} from '../../src/hw/parse/counters.js';
import { fixture, fixtureBytes } from './fixtures.js';

describe('counter_names + counters (the debugfs counters, debugfs.c)', () => {
  const names = parseCounterNames(fixture('counters/counter_names'));
  const values = parseCounterValues(fixtureBytes('counters/counters'), names.length);
  const byName = countersByName(names, values);

  it('strips the ,32 suffix and records the width', () => {
    expect(names).toHaveLength(86);
    expect(names[0]).toEqual({ name: 'Interrupts', bits: 64 });
    expect(names.find((n) => n.name === 'SDMAInt3')).toEqual({ name: 'SDMAInt3', bits: 32 });
  });

  it('reads native-endian u64 values, including ones on both sides of 2^32', () => {
    expect(byName.get('Interrupts')).toBe(123456789n);
    const e1 = engineCounters(byName, 1);
    expect(e1).toEqual({ descFetched: 0xffffffffn, sdmaInt: 0xfffffffen, errCount: 0n, idleInt: 0x100000001n, progressInt: 3n });
    expect(engineCounters(byName, 15)).toEqual({
      descFetched: 15005n,
      sdmaInt: 15001n,
      errCount: 0n,
      idleInt: 15002n,
      progressInt: 15003n,
    });
  });

  it('derives seq = 2 × (SDMAInt + SDMAIdInt + SDMAPrIntCn + SDMAErrCt) as u32', () => {
    // sdma_engine_error also takes the head lock: an engine-error interrupt moves seq too.
    expect(seqFromPasses(interruptPasses({ descFetched: 9n, sdmaInt: 1n, idleInt: 2n, progressInt: 3n, errCount: 4n }))).toBe(
      2 * (1 + 2 + 3 + 4),
    );
    const e0 = engineCounters(byName, 0);
    if (!e0) throw new Error('engine 0 counters missing');
    expect(seqFromPasses(interruptPasses(e0))).toBe(2 * (1 + 2 + 3));
    const e1 = engineCounters(byName, 1);
    if (!e1) throw new Error('engine 1 counters missing');
    // 0xfffffffe + 0x100000001 + 3 = 0x200000002; × 2 = 0x400000004 → low 32 bits 4
    expect(seqFromPasses(interruptPasses(e1))).toBe(4);
  });

  it('refuses a counters file whose length does not match counter_names', () => {
    const bytes = fixtureBytes('counters/counters');
    expect(() => parseCounterValues(bytes.subarray(0, bytes.length - 8), names.length)).toThrow(ParseError);
    expect(() => parseCounterValues(bytes.subarray(0, bytes.length - 3), names.length)).toThrow(/688|685/);
  });

  it('refuses a counter named twice and names the second line', () => {
    try {
      parseCounterNames('A\nSDMAInt0,32\nB\nSDMAInt0\n', 'counter_names');
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(ParseError);
      expect((e as ParseError).line).toBe(4);
      expect((e as ParseError).message).toContain("a second counter named 'SDMAInt0' (the first is on line 2)");
    }
  });

  it('refuses a suffix other than ,32 and names the line', () => {
    try {
      parseCounterNames('A\nB,64\n', 'counter_names');
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(ParseError);
      expect((e as ParseError).line).toBe(2);
      expect((e as ParseError).column).toBe(2);
    }
  });

  it('gives null when an engine has no counters', () => {
    expect(engineCounters(byName, 16)).toBeNull();
  });
});

describe('hw_counters files (the hfi1 sysfs attributes, sysfs.c)', () => {
  it('reads one decimal value, 64-bit safe', () => {
    expect(parseHwCounterValue('18446744073709551615\n', 'f')).toBe(0xffffffffffffffffn);
    expect(parseHwCounterValue('4294967296\n', 'f')).toBe(0x100000000n);
    expect(() => parseHwCounterValue('18446744073709551616\n', 'f')).toThrow(ParseError);
    expect(() => parseHwCounterValue('-1\n', 'f')).toThrow(ParseError);
    expect(() => parseHwCounterValue('', 'f')).toThrow(ParseError);
  });

  it('maps file names with or without the ,32 suffix to the bare name', () => {
    expect(hwCounterName('SDMAInt0,32')).toBe('SDMAInt0');
    expect(hwCounterName('SDMAInt0')).toBe('SDMAInt0');
  });
});
