// The explorer's visited-state table: exact keys (a shared hash never merges two states), ids in
// insertion order, data per state, growth past the first chunk of the arena and past a chunk
// filled to its last byte.
import { describe, expect, it } from 'vitest';
import { KeyBuilder, StateTable } from '../../src/emu/race/state-table.js';

function key(values: number[]): KeyBuilder {
  const k = new KeyBuilder();
  for (const v of values) k.push(v);
  return k;
}

describe('state table', () => {
  it('finds what it stored, with its data, and nothing else', () => {
    const t = new StateTable();
    expect(t.find(key([1, 2, 3]))).toBe(-1);
    expect(t.add(key([1, 2, 3]), 7)).toBe(0);
    expect(t.add(key([1, 2]), 8)).toBe(1);
    expect(t.add(key([-2, -1, 0, 65533]), 9)).toBe(2);
    expect(t.find(key([1, 2, 3]))).toBe(0);
    expect(t.find(key([1, 2]))).toBe(1);
    expect(t.find(key([-2, -1, 0, 65533]))).toBe(2);
    expect(t.find(key([1, 2, 3, 0]))).toBe(-1);
    t.set(1, 42);
    expect([t.get(0), t.get(1), t.get(2)]).toEqual([7, 42, 9]);
    expect(t.size).toBe(3);
  });

  it('two keys with the same hash stay two states', () => {
    const t = new StateTable();
    const a = key([5, 6]);
    const b = key([6, 5]);
    b.hash = a.hash;
    t.add(a, 1);
    expect(t.find(b)).toBe(-1);
    expect(t.add(b, 2)).toBe(1);
    expect(t.find(a)).toBe(0);
    expect(t.find(b)).toBe(1);
  });

  it('a value that takes an escape differs from the bytes it is escaped into', () => {
    expect(key([300]).toString()).not.toBe(key([253, 1, 44]).toString());
    expect(() => key([65534])).toThrow(/out of range/);
    expect(() => key([-3])).toThrow(/out of range/);
  });

  it('keeps every key across growth and across a chunk filled to its last byte', () => {
    const t = new StateTable();
    const n = 300_000; // 64-byte keys: the first 16 MiB chunk holds exactly 262,144 of them
    const k = new KeyBuilder();
    const fill = (i: number): KeyBuilder => {
      k.clear();
      for (let j = 0; j < 64; j++) k.push(j < 4 ? (i >> (6 * j)) & 63 : j);
      return k;
    };
    let misplaced = 0;
    for (let i = 0; i < n; i++) if (t.add(fill(i), i) !== i) misplaced++;
    expect(misplaced).toBe(0);
    for (const i of [0, 1, 262_143, 262_144, 262_145, n - 1]) expect(t.find(fill(i))).toBe(i);
    let wrong = 0;
    for (let i = 0; i < n; i++) if (t.get(t.find(fill(i))) !== i) wrong++;
    expect(wrong).toBe(0);
  });
});
