import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { parseInterrupts, vectorKey } from '../../src/hw/parse/interrupts.js';
import { parseCapMask, parseCpuList, parseUintParam, parseVl } from '../../src/hw/parse/sysfs.js';
import { fixture } from './fixtures.js';

describe('/proc/interrupts', () => {
  const v = parseInterrupts(fixture('proc/interrupts'));

  it('sums each engine vector over the CPUs, across units', () => {
    expect(v.get(vectorKey(0, 0))).toBe(1500);
    expect(v.get(vectorKey(0, 1))).toBe(4294967300);
    expect(v.get(vectorKey(1, 0))).toBe(7);
    expect(v.size).toBe(3); // the general hfi1_0 vector and kctxt0 are not engines
  });

  it('names the line of a malformed vector line', () => {
    const bad = fixture('proc/interrupts').replace('1200        300', '1200        x00');
    try {
      parseInterrupts(bad);
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(ParseError);
      expect((e as ParseError).line).toBe(5);
    }
  });

  it('refuses a file without the CPU header', () => {
    expect(() => parseInterrupts('  0: 1 IO-APIC timer\n')).toThrow(ParseError);
  });
});

describe('sysfs sdma<N> files (sdma<N>/vl and cpu_list, sysfs.c) and module parameters (the hfi1 module parameters)', () => {
  it('reads vl', () => {
    expect(parseVl('3\n')).toBe(3);
    expect(parseVl('3')).toBe(3); // hfi2 prints no newline
    expect(() => parseVl('three\n')).toThrow(ParseError);
    expect(() => parseVl('3\n4\n')).toThrow(ParseError);
  });

  it("reads cpu_list: 'empty' and range lists", () => {
    expect(parseCpuList('empty\n')).toEqual({ text: 'empty', cpus: [] });
    expect(parseCpuList('0-3,8\n')).toEqual({ text: '0-3,8', cpus: [0, 1, 2, 3, 8] });
    expect(parseCpuList('5\n').cpus).toEqual([5]);
    expect(() => parseCpuList('3-1\n')).toThrow(ParseError);
    expect(() => parseCpuList('0,,1\n')).toThrow(/column 3|:1:3/);
  });

  it('reads decimal parameters and cap_mask', () => {
    expect(parseUintParam('2048\n', 'sdma_descq_cnt')).toBe(2048);
    expect(parseUintParam('65600\n', 'sdma_descq_cnt')).toBe(65600);
    expect(() => parseUintParam('4294967296\n', 'p')).toThrow(ParseError);
    expect(parseCapMask('0x4a2c6b\n')).toBe(0x4a2c6bn);
    expect(() => parseCapMask('4a2c6b\n')).toThrow(ParseError);
  });
});
