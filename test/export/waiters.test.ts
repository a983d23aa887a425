// The exporter's waiter series: per engine and kind, stranded once 3 rounds confirm it, the
// visibility of each kind, PSM stall episodes; nothing served for what cannot be seen.
import { describe, expect, it } from 'vitest';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { psmWaiter, qpWaiter } from '../support/waiters.js';
import { seriesOf, startTestExporter, value } from './harness.js';

const idle: Script = (e, t) => (e === 0 ? { dh: t, dt: t + 30 } : { dh: 4 });
const qp = qpWaiter({ qpn: 0x1a, engine: 1 });
const writer = psmWaiter({ pid: 77, command: 'rank' });
const L = 'unit="hfi1_0"';

describe('exporter waiter series', () => {
  it('counts waiters per engine and kind, and serves the stranded gauge from the third round', async () => {
    const b = new FakeBackend(idle, 2, 2048, { waiters: { at: () => [qp] } });
    const x = await startTestExporter(b);
    let body = await x.scrape();
    expect(value(body, `hfi1_sdma_waiters{${L},engine="1",kind="qp"}`)).toBe(1);
    expect(value(body, `hfi1_sdma_waiters{${L},engine="0",kind="qp"}`)).toBe(0);
    // psm and ipoib are not visible: no series for them, and visible 0.
    expect(seriesOf(body, 'hfi1_sdma_waiters').some((l) => l.includes('kind="psm"'))).toBe(false);
    expect(value(body, `hfi1_sdma_waiters_visible{${L},kind="qp"}`)).toBe(1);
    expect(value(body, `hfi1_sdma_waiters_visible{${L},kind="psm"}`)).toBe(0);
    expect(seriesOf(body, 'hfi1_sdma_stranded_waiters')).toEqual([]);
    x.tick(1000);
    await x.scrape();
    x.tick(1000);
    body = await x.scrape();
    expect(value(body, `hfi1_sdma_stranded_waiters{${L},engine="1"}`)).toBe(1);
    expect(value(body, `hfi1_sdma_stranded_waiters{${L},engine="0"}`)).toBe(0);
    expect(value(body, `hfi1_sdma_probably_stranded_waiters{${L},engine="1"}`)).toBe(0);
  });

  it('serves a strand on a printed qp_stats engine, with a busy sibling of its VL, as probably stranded', async () => {
    // The sibling retires a quarter of a ring over the scrapes: not the whole ring that would clear it.
    const slow: Script = (e, t) => (e === 0 ? { dh: Math.floor(t / 4), dt: Math.floor(t / 4) + 30 } : { dh: 4 });
    const b = new FakeBackend(slow, 2, 2048, { waiters: { at: () => [{ ...qp, source: 'qp_stats' }] } });
    const x = await startTestExporter(b);
    let body = '';
    for (let i = 0; i < 3; i++) {
      body = await x.scrape();
      x.tick(1000);
    }
    expect(value(body, `hfi1_sdma_probably_stranded_waiters{${L},engine="1"}`)).toBe(1);
    expect(value(body, `hfi1_sdma_stranded_waiters{${L},engine="1"}`)).toBe(0);
  });

  it('counts PSM stall episodes and serves a writer of unknown engine under engine="unknown"', async () => {
    const b = new FakeBackend(() => ({ dh: 4 }), 2, 2048, {
      waiters: { at: () => [writer], visibility: [{ kind: 'psm', visible: true, source: 'proc' }] },
    });
    const x = await startTestExporter(b);
    // A writer's stall ends by itself within 1 s and scrapes come seconds apart: one scrape takes the three samples
    // (--strand-ms/2 apart) that confirm it.
    let body = await x.scrape();
    expect(x.sampler.monitor.state().index).toBe(3);
    expect(value(body, `hfi1_sdma_psm_stalls_total{${L}}`)).toBe(1);
    for (let i = 0; i < 2; i++) {
      x.tick(1000);
      body = await x.scrape();
    }
    expect(value(body, `hfi1_sdma_waiters{${L},engine="unknown",kind="psm"}`)).toBe(1);
    expect(value(body, `hfi1_sdma_psm_stalls_total{${L}}`)).toBe(1);
    // Only PSM writers are visible and they stall rather than strand: no stranded count a QP could belie.
    expect(seriesOf(body, 'hfi1_sdma_stranded_waiters')).toEqual([]);
  });

  it('a backend without waiters: every kind visible 0, no waiter or stranded series', async () => {
    const x = await startTestExporter(new FakeBackend(idle, 2));
    let body = '';
    for (let i = 0; i < 3; i++) {
      body = await x.scrape();
      x.tick(1000);
    }
    for (const kind of ['qp', 'psm', 'ipoib']) expect(value(body, `hfi1_sdma_waiters_visible{${L},kind="${kind}"}`)).toBe(0);
    expect(seriesOf(body, 'hfi1_sdma_waiters')).toEqual([]);
    expect(seriesOf(body, 'hfi1_sdma_stranded_waiters')).toEqual([]);
  });
});
