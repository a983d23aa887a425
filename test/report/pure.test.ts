// The report's small pure parts: escaping capture text, reading /proc/uptime and dmesg timestamps, a scale's
// top, runs of one verdict, and the kernel log placed by the uptime offset.
import { describe, expect, it } from 'vitest';
import { esc, idOf, MAX_TEXT } from '../../src/report/escape.js';
import { kernelSeconds, placeLog } from '../../src/report/log.js';
import type { EnginePoint } from '../../src/report/model.js';
import { niceCeil, runsOf } from '../../src/report/svg.js';
import { parseUptime } from '../../src/snapshot/backend.js';

const point = (tMs: number, verdict: EnginePoint['verdict'], state = 's99_Running'): EnginePoint => ({
  tMs,
  verdict,
  reason: verdict === 'stalled' ? 'chip-not-fetching' : 'moving',
  state,
  inFlight: 1,
  descPerSec: 1,
  descqFull: 0,
  errCount: 0,
  errorBits: [],
  waiters: null,
  stranded: 0,
  probable: 0,
});

describe('esc', () => {
  it('writes the five HTML characters as entities, controls as \\xNN, and cuts long text with …', () => {
    expect(esc(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(esc('a\u0000b\u001bc\nd')).toBe('a\\x00b\\x1bc\\x0ad');
    const long = esc('x'.repeat(MAX_TEXT + 10));
    expect(long).toHaveLength(MAX_TEXT);
    expect(long.endsWith('…')).toBe(true);
    // Cut before escaping: an entity is never split.
    expect(esc(`${'x'.repeat(MAX_TEXT - 2)}<<<`)).toBe(`${'x'.repeat(MAX_TEXT - 2)}&lt;…`);
    expect(idOf('hfi1_0', 'sdma3', '<x y="1">')).toBe('hfi1_0-sdma3-_x_y__1__');
  });
});

describe('the clocks', () => {
  it('reads /proc/uptime and dmesg timestamps, and nothing else', () => {
    expect(parseUptime('12345.67 23456.78\n')).toBe(12345.67);
    expect(parseUptime('0.30 0.00\n')).toBe(0.3);
    for (const bad of ['', 'x 1', '-1.0 2', '1e9 1', '1.2']) expect(parseUptime(bad), bad).toBeNull();
    expect(kernelSeconds('5.000001')).toBe(5.000001);
    for (const bad of [null, 'Nov 30 22:00:00', '2026-11-30T22:00:00+0000', '5', '']) expect(kernelSeconds(bad)).toBeNull();
  });

  it('places each event by the offset, or says why not', async () => {
    const text = '[    1.500000] hfi1 0000:05:00.0: hfi1_0: SDMA (3) engine error: 0x2 state s99_Running\n';
    const placed = await placeLog({ text }, -1000, 'wfr');
    expect(placed.byUnit.get('hfi1_0')?.map((p) => [p.kernelSec, p.tMs, p.event.engine])).toEqual([[1.5, 500, 3]]);
    expect(placed.unplaced).toBeNull();
    const unplaced = await placeLog({ text }, null, 'wfr');
    expect(unplaced.byUnit.get('hfi1_0')?.[0]?.tMs).toBeNull();
    expect(unplaced.unplaced).toMatch(/no \/proc\/uptime/);
    expect((await placeLog({ reason: 'not captured' }, 0, 'wfr')).missing).toBe('not captured');
  });
});

describe('scales and runs', () => {
  it('rounds a scale up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 0.5, 1, 3, 20, 21, 2047, 150_000].map(niceCeil)).toEqual([1, 1, 1, 5, 20, 50, 5000, 200_000]);
  });

  it('merges consecutive instants of the same verdict, reason and state', () => {
    const runs = runsOf([
      point(0, 'progressing'),
      point(100, 'progressing'),
      point(200, 'stalled'),
      point(300, 'stalled', 's80'),
    ]);
    expect(runs.map((r) => [r.fromMs, r.toMs, r.verdict, r.state])).toEqual([
      [0, 100, 'progressing', 's99_Running'],
      [200, 200, 'stalled', 's99_Running'],
      [300, 300, 'stalled', 's80'],
    ]);
  });
});
