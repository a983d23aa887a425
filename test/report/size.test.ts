// The report stays bounded: 100 instants of two 16-engine units (a stall, an engine error, a lost wake-up)
// render well under 2 MB, and so does the worst such capture can give: every engine's verdict changing at
// every instant, and each unit at its caps of findings, waiters and log events.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend.js';
import { EmuUnit } from '../../src/emu/index.js';
import { kmsgText } from '../../src/emu/kmsg.js';
import { Monitor } from '../../src/monitor/monitor.js';
import type { Verdict } from '../../src/progress/classify.js';
import { MAX_FINDINGS_PER_UNIT } from '../../src/report/collect.js';
import { gatherReport } from '../../src/report/gather.js';
import { renderReport } from '../../src/report/html.js';
import type { ReportData } from '../../src/report/model.js';
import { MAX_LOG_ROWS, MAX_WAITER_ROWS } from '../../src/report/unit.js';
import { hfi1Lines } from '../../src/snapshot/kmsg.js';
import { TWO_UNITS, TWO_UNITS_PLAN } from './capture.js';

const LIMIT_BYTES = 2 * 1024 * 1024;

/** Two emulated units in one backend, their virtual time advancing together. */
function twoUnits(): { backend: Backend; units: EmuUnit[] } {
  const units = TWO_UNITS.map((o) => new EmuUnit(o));
  for (const u of units) u.runUntilMs(TWO_UNITS_PLAN.fromMs);
  const backend = {
    kind: 'emu' as const,
    units: async () => units.map((u) => u.info),
    unit: async (id: number | string) => units.find((u) => u.info.name === id || u.info.unit === id) as EmuUnit,
    advanceMs: (ms: number) => {
      for (const u of units) u.advance(ms);
    },
    close: async () => {},
  };
  return { backend, units };
}

async function hundredInstants(): Promise<ReportData> {
  const { backend, units } = twoUnits();
  const lead = units[0] as EmuUnit;
  return gatherReport(
    new Monitor(backend, { requireUnit: true }),
    {
      label: 'two emulated units',
      uptimeSec: () => lead.nowMs / 1000,
      kernelLog: () => ({ text: units.map((u) => hfi1Lines(kmsgText(u.host).split('\n')).text).join('') }),
    },
    {
      count: 100,
      intervalMs: 50,
      sleep: async () => {},
      meta: { sourceLabel: 'two emulated units', toolVersion: '0.0.0-test', renderedAtMs: 0, stallMs: 1000, strandMs: 200 },
    },
  );
}

describe('the size of a report', () => {
  it('100 instants of two 16-engine units: every engine drawn, well under 2 MB; at every cap and every verdict changing each instant, still under', async () => {
    const data = await hundredInstants();
    expect(data.rounds).toBe(100);
    const html = renderReport(data);
    expect(html.match(/<figure class="eng/g)).toHaveLength(32);
    expect(html).toContain('<code>SD101</code> hfi1_0 sdma3 stalled');
    expect(Buffer.byteLength(html)).toBeLessThan(LIMIT_BYTES / 2);

    // The worst: verdicts alternating at every instant, and each unit at its caps.
    const verdicts: Verdict[] = ['stalled', 'progressing', 'halted', 'idle', 'backpressure', 'unknown'];
    for (const u of data.units) {
      for (const e of u.engines) {
        for (const [i, p] of e.points.entries())
          Object.assign(p, { verdict: verdicts[i % verdicts.length], state: `s${i}_State` });
      }
      const f = u.findings[0];
      if (f) u.findings = Array.from({ length: MAX_FINDINGS_PER_UNIT }, () => ({ ...f, current: true }));
      const j = data.units[1]?.waiters.judgements[0];
      if (j) u.waiters = { ...u.waiters, listed: true, judgements: Array.from({ length: MAX_WAITER_ROWS + 50 }, () => j) };
      const ev = [...data.log.byUnit.values()].flat()[0];
      if (ev)
        data.log.byUnit.set(
          u.info.name,
          Array.from({ length: MAX_LOG_ROWS * 4 }, (_, i) => ({ ...ev, tMs: (i * 17) % data.spanMs })),
        );
    }
    const worst = renderReport(data);
    expect(worst.match(/<tr><td>QP /g)?.length).toBe(2 * MAX_WAITER_ROWS);
    expect(Buffer.byteLength(worst)).toBeLessThan(LIMIT_BYTES);
  }, 60_000);
});
