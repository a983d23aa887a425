// doubleFields (src/emu/double-fields.ts): what it does to an object's values is nothing, and a name the object does
// not hold as a number is refused rather than added.
import { describe, expect, it } from 'vitest';
import { doubleFields } from '../../src/emu/double-fields.js';
import { EmuUnit } from '../../src/emu/unit.js';

describe('doubleFields', () => {
  it('keeps every value as it was, whole, negative, infinite or large', () => {
    const o = { a: 0, b: -1, c: 2 ** 40, d: Number.POSITIVE_INFINITY, e: 7 };
    doubleFields(o, 'a', 'b', 'c', 'd');
    expect(o).toEqual({ a: 0, b: -1, c: 2 ** 40, d: Number.POSITIVE_INFINITY, e: 7 });
    expect(Object.is(o.a, 0)).toBe(true);
  });

  it('refuses a name that is not a number field of the object (a misspelt one would add a field)', () => {
    const o = { nowNs: 0, label: 'x' };
    expect(() => doubleFields(o, 'nowMs')).toThrow(/Object\.nowMs is not a number field/);
    expect(() => doubleFields(o, 'label')).toThrow(/label is not a number field/);
    expect(Object.keys(o)).toEqual(['nowNs', 'label']);
  });

  it("every field the emulator's objects make double is one they have: a unit of each flavour is made and runs", () => {
    for (const flavour of [
      { chip: 'wfr', driver: 'upstream' },
      { chip: 'jkr', driver: 'cornelis' },
      { chip: 'jkr', driver: 'hfi2', ports: 2 },
    ] as const) {
      const u = new EmuUnit({ seed: 3, engines: 2, descqCnt: 256, workload: 'mixed', ...flavour });
      u.runUntilMs(5);
      expect(u.host.sched.nowNs).toBe(5_000_000);
      expect(u.totals().descriptors).toBeGreaterThan(0);
    }
  });
});
