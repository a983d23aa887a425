import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend.js';
import { parseListen } from '../../src/cli/export.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { startTestExporter, value } from './harness.js';

// Engine 0 idle, 1 moving, 2 stuck with 300 in flight and a chip that stopped fetching.
const script: Script = (e, t) => {
  const moving = Math.floor(t / 100) * 100;
  if (e === 0) return { dh: 500, dt: 500 };
  if (e === 1) return { dh: moving, dt: moving + 200, dqf: Math.floor(t / 1000), fetched: moving };
  return { dh: 1000, dt: 1300, fetched: 1000, err: e === 3 ? 1n << 20n : 0n };
};

const start = startTestExporter;

describe('exporter metrics', () => {
  it('exposes per-engine series with the expected values for a known state', async () => {
    const x = await start(new FakeBackend(script));
    const body = await (await fetch(x.url('/metrics'))).text();
    expect(value(body, 'hfi1_sdma_in_flight_descriptors{unit="hfi1_0",engine="2"}')).toBe(300);
    expect(value(body, 'hfi1_sdma_free_descriptors{unit="hfi1_0",engine="2"}')).toBe(1747);
    expect(value(body, 'hfi1_sdma_ring_size_descriptors{unit="hfi1_0"}')).toBe(2048);
    // The state is one series holding the current state name, not a 0/1 series per state.
    expect(value(body, 'hfi1_sdma_engine_state{unit="hfi1_0",engine="1",state="s99_Running"}')).toBe(1);
    expect(value(body, 'hfi1_sdma_engine_state{unit="hfi1_0",engine="1",state="s50_HwHaltWait"}')).toBeUndefined();
    expect(value(body, 'hfi1_sdma_engine_running{unit="hfi1_0",engine="1"}')).toBe(1);
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(1);
    expect(
      value(body, 'hfi1_sdma_error_bit_active{unit="hfi1_0",engine="3",bit="20",name="SDmaAssemblyCorErr",halts="false"}'),
    ).toBe(1);
    expect(body).toMatch(/# TYPE hfi1_sdma_descriptors_retired_total counter/);
    expect(body).toMatch(/# TYPE hfi1_sdma_scrape_duration_seconds gauge/);
  });

  it('shows a stall after it is confirmed, counts it, and keeps retired counts monotonic', async () => {
    const x = await start(new FakeBackend(script));
    let body = '';
    for (let i = 0; i < 4; i++) {
      body = await (await fetch(x.url('/metrics'))).text();
      x.tick(1000);
    }
    expect(value(body, 'hfi1_sdma_stalled{unit="hfi1_0",engine="2"}')).toBe(1);
    expect(value(body, 'hfi1_sdma_verdict{unit="hfi1_0",engine="2",verdict="stalled",reason="chip-not-fetching"}')).toBe(1);
    expect(value(body, 'hfi1_sdma_stalls_total{unit="hfi1_0",engine="2"}')).toBe(1);
    expect(value(body, 'hfi1_sdma_longest_stall_seconds{unit="hfi1_0",engine="2"}')).toBeGreaterThanOrEqual(2);
    expect(value(body, 'hfi1_sdma_stalled{unit="hfi1_0",engine="1"}')).toBe(0);
    expect(value(body, 'hfi1_sdma_descriptors_retired_total{unit="hfi1_0",engine="1"}')).toBe(3000);
    expect(value(body, 'hfi1_sdma_descq_full_total{unit="hfi1_0",engine="1"}')).toBe(3);
  });

  it('serves OpenMetrics when the Accept header asks', async () => {
    const x = await start(new FakeBackend(script));
    const r = await fetch(x.url('/metrics'), { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    expect(r.headers.get('content-type')).toMatch(/application\/openmetrics-text/);
    expect(await r.text()).toMatch(/# EOF\s*$/);
    const plain = await fetch(x.url('/metrics'));
    expect(plain.headers.get('content-type')).toMatch(/text\/plain; version=0\.0\.4/);
  });

  it('serves the same series names in text, then OpenMetrics, then text again (counters keep _total)', async () => {
    const x = await start(new FakeBackend(script));
    const names = (body: string) =>
      new Set(
        body
          .split('\n')
          .filter((l) => /^hfi1_sdma_\w+[{ ]/.test(l))
          .map((l) => (/^(\w+)/.exec(l) as RegExpExecArray)[1]),
      );
    const before = names(await x.scrape());
    const om = await (
      await fetch(x.url('/metrics'), { headers: { accept: 'application/openmetrics-text; version=1.0.0' } })
    ).text();
    const after = names(await x.scrape());
    expect(before.has('hfi1_sdma_descq_full_total')).toBe(true);
    expect(after).toEqual(before);
    // OpenMetrics names a counter's family without _total and each of its samples with it: the same series names.
    expect(om).toMatch(/^# TYPE hfi1_sdma_descq_full counter$/m);
    expect(names(om)).toEqual(before);
  });

  it('shares one sample among scrapes within min-interval', async () => {
    const x = await start(new FakeBackend(script));
    await Promise.all([fetch(x.url('/metrics')), fetch(x.url('/metrics')), fetch(x.url('/metrics'))]);
    expect(x.sampler.rounds).toBe(1);
    x.tick(500);
    await fetch(x.url('/metrics'));
    expect(x.sampler.rounds).toBe(1);
    x.tick(600);
    await fetch(x.url('/metrics'));
    expect(x.sampler.rounds).toBe(2);
  });

  it('reports a failing source as up 0 with a log line, and keeps serving', async () => {
    const b = new FakeBackend(script);
    const broken: Backend = {
      kind: 'hw',
      units: () => b.units(),
      unit: async (n) => ({ ...(await b.unit(n)), sample: async () => Promise.reject(new Error('sdes: permission denied')) }),
      close: () => b.close(),
    };
    const x = await start(broken);
    const r = await fetch(x.url('/metrics'));
    expect(r.status).toBe(200);
    expect(value(await r.text(), 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(0);
    expect(x.logs.join('\n')).toMatch(/hfi1_0: sampling failed: sdes: permission denied/);
  });
});

describe('exporter HTTP', () => {
  it('serves a page at /, 404 elsewhere, 405 for other methods, HEAD without a body', async () => {
    const x = await start(new FakeBackend(script));
    const index = await fetch(x.url('/'));
    expect(index.status).toBe(200);
    expect(await index.text()).toMatch(/href="\/metrics"/);
    expect((await fetch(x.url('/nope'))).status).toBe(404);
    const post = await fetch(x.url('/metrics'), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(x.url('/metrics'), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('a slow client does not hold up other scrapes', async () => {
    const x = await start(new FakeBackend(script));
    const slow = connect(x.port, '127.0.0.1');
    await new Promise<void>((r) => slow.once('connect', () => r()));
    slow.write('GET /metrics HTTP/1.1\r\nHost: x\r\n'); // headers never finished
    const r = await fetch(x.url('/metrics'));
    expect(r.status).toBe(200);
    expect(await r.text()).toMatch(/hfi1_sdma_up/);
    slow.destroy();
  });

  it('parses --listen forms and refuses bad ones', () => {
    expect(parseListen('127.0.0.1:9469')).toEqual({ host: '127.0.0.1', port: 9469 });
    expect(parseListen('[::1]:9000')).toEqual({ host: '::1', port: 9000 });
    expect(() => parseListen('9469')).toThrow(/HOST:PORT/);
    expect(() => parseListen('localhost:99999')).toThrow(/port must be from 0 to 65535/);
  });
});
