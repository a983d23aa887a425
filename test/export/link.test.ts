// The exporter's link series: hfi1_sdma_link_up and hfi1_sdma_link_state, served only while the
// link is readable, following it as it changes.
import { describe, expect, it } from 'vitest';
import type { LinkState } from '../../src/backend.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { seriesOf, startTestExporter, value } from './harness.js';

const idle: Script = () => ({ dh: 500, dt: 500 });
const UP: LinkState = { state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' };
const DOWN: LinkState = { state: 'DOWN', physState: 'Polling', rate: null };

describe('exporter link series', () => {
  it('link_up is 1 while ACTIVE and 0 once down; link_state holds the current state; active_seen remembers', async () => {
    const x = await startTestExporter(new FakeBackend(idle, 2, 2048, { link: (t) => (t < 1000 ? UP : DOWN) }));
    let body = await (await fetch(x.url('/metrics'))).text();
    expect(value(body, 'hfi1_sdma_link_up{unit="hfi1_0",port="1"}')).toBe(1);
    expect(seriesOf(body, 'hfi1_sdma_link_state')).toEqual([
      'hfi1_sdma_link_state{unit="hfi1_0",port="1",state="ACTIVE",phys_state="LinkUp"} 1',
    ]);
    expect(value(body, 'hfi1_sdma_link_active_seen{unit="hfi1_0",port="1"}')).toBe(1);
    x.tick(1000);
    body = await (await fetch(x.url('/metrics'))).text();
    expect(value(body, 'hfi1_sdma_link_up{unit="hfi1_0",port="1"}')).toBe(0);
    expect(seriesOf(body, 'hfi1_sdma_link_state')).toEqual([
      'hfi1_sdma_link_state{unit="hfi1_0",port="1",state="DOWN",phys_state="Polling"} 1',
    ]);
    // The port was ACTIVE before: the port-down alert may fire (an unused port never was).
    expect(value(body, 'hfi1_sdma_link_active_seen{unit="hfi1_0",port="1"}')).toBe(1);
  });

  it('a port never seen ACTIVE is not remembered as one', async () => {
    const x = await startTestExporter(new FakeBackend(idle, 1, 2048, { link: DOWN }));
    const body = await x.scrape();
    expect(value(body, 'hfi1_sdma_link_up{unit="hfi1_0",port="1"}')).toBe(0);
    expect(value(body, 'hfi1_sdma_link_active_seen{unit="hfi1_0",port="1"}')).toBe(0);
  });

  it('a state outside the known list is served as itself', async () => {
    const x = await startTestExporter(
      new FakeBackend(idle, 1, 2048, { link: { state: 'POLL_NEW', physState: null, rate: null } }),
    );
    const body = await (await fetch(x.url('/metrics'))).text();
    expect(value(body, 'hfi1_sdma_link_state{unit="hfi1_0",port="1",state="POLL_NEW",phys_state=""}')).toBe(1);
    expect(value(body, 'hfi1_sdma_link_up{unit="hfi1_0",port="1"}')).toBe(0);
  });

  it('no link() or an unreadable link serves no link series, never a guess', async () => {
    for (const opts of [{}, { link: null }, { link: { state: null, physState: null, rate: null } }]) {
      const x = await startTestExporter(new FakeBackend(idle, 1, 2048, opts));
      const body = await (await fetch(x.url('/metrics'))).text();
      expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(1);
      expect(body).not.toMatch(/^hfi1_sdma_link_(up|state)\{/m);
    }
  });
});
