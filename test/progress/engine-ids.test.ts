import { describe, expect, it } from 'vitest';
import { engineIdsText } from '../../src/progress/engine-ids.js';

describe('engineIdsText', () => {
  it('collapses runs of absolute indexes', () => {
    expect(engineIdsText([8, 9, 10, 11, 12, 13, 14, 15])).toBe('8-15');
    expect(engineIdsText([0, 1, 2, 3, 6])).toBe('0-3,6');
    expect(engineIdsText([5])).toBe('5');
    expect(engineIdsText([0, 2, 4])).toBe('0,2,4');
    expect(engineIdsText([])).toBe('none');
  });
});
