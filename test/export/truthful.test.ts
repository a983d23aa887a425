// The exporter never serves stale or invented values: no unit is said, a gone device is said, a
// failed source drops its engine series, counters are the kernel's own, verdicts and reasons are
// stable 0/1 series, a blocking source cannot hang a scrape.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { EngineSample } from '../../src/backend.js';
import { Hfi1SdmaError } from '../../src/errors.js';
import { acceptsGzip } from '../../src/export/server.js';
import type { Classification } from '../../src/progress/classify.js';
import { ALL_REASONS, ALL_VERDICTS } from '../../src/progress/verdicts.js';
import { engines, gunzip, ScriptBackend, seriesOf, startTestExporter, value } from './harness.js';

// Engine 2 stuck with 300 in flight and the chip not fetching; the others idle.
const stuck = (t: number) => engines(t, (e) => (e === 2 ? { dh: 1000, dt: 1300, fetched: 1000 } : { dh: 500, dt: 500 }));
const gone = (t: number) => engines(t, () => ({ gone: true, state: null }));
const E2 = 'unit="hfi1_0",engine="2"';

describe('exporter: no unit, build info', () => {
  it('serves hfi1_sdma_units 0 and build_info when no unit is found, then the unit once it appears', async () => {
    const b = new ScriptBackend([]);
    const x = await startTestExporter(b);
    let body = await x.scrape();
    expect(value(body, 'hfi1_sdma_units')).toBe(0);
    expect(value(body, 'hfi1_sdma_build_info{version="9.9.9",backend="hw",emulated="false"}')).toBe(1);
    // One shape for hfi1_sdma_up: always with a unit label, so none is served without a unit.
    expect(body).not.toMatch(/^hfi1_sdma_up/m);
    expect(body).not.toMatch(/engine="/);
    expect(x.logs.join('\n')).toMatch(/no hfi1 or hfi2 unit found/);
    b.scripts = [stuck];
    x.tick(1000);
    body = await x.scrape();
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(1);
    expect(value(body, 'hfi1_sdma_units')).toBe(1);
    expect(value(body, 'hfi1_sdma_build_info{version="9.9.9",backend="hw",emulated="false"}')).toBe(1);
  });
});

describe('exporter: a gone device and a failing source', () => {
  it('a gone device is up 0 and device_gone 1 with no engine series; a healthy one is device_gone 0', async () => {
    const b = new ScriptBackend([(t) => (t < 2000 ? stuck(t) : gone(t))]);
    const x = await startTestExporter(b);
    let body = await x.scrape();
    expect(value(body, 'hfi1_sdma_device_gone{unit="hfi1_0"}')).toBe(0);
    expect(value(body, `hfi1_sdma_in_flight_descriptors{${E2}}`)).toBe(300);
    x.tick(2000);
    body = await x.scrape();
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(0);
    expect(value(body, 'hfi1_sdma_device_gone{unit="hfi1_0"}')).toBe(1);
    expect(body).not.toMatch(/engine="/);
    expect(x.logs.join('\n')).toMatch(/hfi1_0: the device is gone/);
  });

  it('a sample rejected with E_DEVICE_GONE is device_gone 1', async () => {
    const b = new ScriptBackend([() => new Hfi1SdmaError('E_DEVICE_GONE', 'resource0: the mapping vanished')]);
    const body = await (await startTestExporter(b)).scrape();
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(0);
    expect(value(body, 'hfi1_sdma_device_gone{unit="hfi1_0"}')).toBe(1);
  });

  it('drops a unit’s engine series while its source fails, logs the failure once, and warms up afresh after', async () => {
    let failing = false;
    const b = new ScriptBackend([(t) => (failing ? new Error('sdes: permission denied') : stuck(t))]);
    const x = await startTestExporter(b);
    let body = '';
    for (let i = 0; i < 4; i++) {
      body = await x.scrape();
      x.tick(1000);
    }
    expect(value(body, `hfi1_sdma_stalled{${E2}}`)).toBe(1);
    expect(value(body, `hfi1_sdma_in_flight_descriptors{${E2}}`)).toBe(300);
    failing = true;
    for (let i = 0; i < 2; i++) {
      body = await x.scrape();
      x.tick(1000);
    }
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(0);
    expect(value(body, 'hfi1_sdma_device_gone{unit="hfi1_0"}')).toBe(0);
    expect(value(body, `hfi1_sdma_in_flight_descriptors{${E2}}`)).toBeUndefined();
    expect(value(body, `hfi1_sdma_stalled{${E2}}`)).toBeUndefined();
    expect(body).not.toMatch(/engine="/);
    expect(x.logs.filter((l) => /sampling failed: sdes: permission denied/.test(l))).toHaveLength(1);
    failing = false;
    body = await x.scrape();
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(1);
    expect(value(body, `hfi1_sdma_in_flight_descriptors{${E2}}`)).toBe(300);
    // One sample after the failure cannot confirm a stall: the engine is judged afresh.
    expect(value(body, `hfi1_sdma_stalled{${E2}}`)).not.toBe(1);
    expect(x.logs.join('\n')).toMatch(/hfi1_0: readable again/);
  });

  it('a source that never answers is up 0 for its unit while the other unit is served, and is not read again until it settles', async () => {
    const b = new ScriptBackend([stuck, () => 'hang']);
    let fire = () => {};
    const timer = () => ({ done: new Promise<void>((r) => (fire = r)), cancel: () => {} });
    const x = await startTestExporter(b, { timer, sampleTimeoutMs: 5000 });
    const pending = x.scrape();
    // The first unit answers at once; the timer is then armed for the hanging one.
    await new Promise((r) => setImmediate(r));
    while (b.sampleCalls[1] !== 1) await new Promise((r) => setImmediate(r));
    fire();
    let body = await pending;
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(1);
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_1"}')).toBe(0);
    expect(x.logs.join('\n')).toMatch(/hfi1_1: sampling failed: no answer within 5000 ms/);
    x.tick(1000);
    const second = x.scrape();
    while (x.sampler.rounds !== 2) await new Promise((r) => setImmediate(r));
    fire();
    body = await second;
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_1"}')).toBe(0);
    expect(b.sampleCalls[1]).toBe(1);
  });
});

describe('exporter: counters are the kernel’s', () => {
  const withCounters = (s: EngineSample[], n: bigint): EngineSample[] =>
    s.map((x) => ({
      ...x,
      counters: { descFetched: 1000n, sdmaInt: n, progressInt: 2n * n, idleInt: 3n * n, errCount: 5n },
    }));

  it('serve DQF, interrupt and error counters as read, the same after an exporter restart, and a kernel reset as a drop', async () => {
    let dh = 5000;
    const b = new ScriptBackend([
      (t) =>
        withCounters(
          engines(t, () => ({ dh, dt: dh + 10, dqf: 67 })),
          1000n,
        ),
    ]);
    let body = await (await startTestExporter(b)).scrape();
    const E0 = 'unit="hfi1_0",engine="0"';
    expect(value(body, `hfi1_sdma_descq_full_total{${E0}}`)).toBe(67);
    expect(value(body, `hfi1_sdma_engine_errors_total{${E0}}`)).toBe(5);
    expect(value(body, `hfi1_sdma_interrupts_total{${E0},kind="sdma"}`)).toBe(1000);
    expect(value(body, `hfi1_sdma_interrupts_total{${E0},kind="progress"}`)).toBe(2000);
    expect(value(body, `hfi1_sdma_interrupts_total{${E0},kind="idle"}`)).toBe(3000);
    expect(value(body, `hfi1_sdma_descriptors_retired_total{${E0}}`)).toBe(5000);
    expect(body).toMatch(/# TYPE hfi1_sdma_descq_full_total counter/);
    // A second exporter (a restart) starts from the kernel's values, not from 0.
    body = await (await startTestExporter(b)).scrape();
    expect(value(body, `hfi1_sdma_descq_full_total{${E0}}`)).toBe(67);
    expect(value(body, `hfi1_sdma_descriptors_retired_total{${E0}}`)).toBe(5000);
    // A clean-up resets DH: the counter drops, which Prometheus takes as a counter reset.
    const x = await startTestExporter(b);
    await x.scrape();
    dh = 10;
    x.tick(1000);
    body = await x.scrape();
    expect(value(body, `hfi1_sdma_descriptors_retired_total{${E0}}`)).toBe(10);
  });
});

describe('exporter: verdicts and reasons', () => {
  it('exports the verdict and its reason as one series per engine holding them as labels', async () => {
    const body = await (await startTestExporter(new ScriptBackend([stuck]))).scrape();
    const verdicts = seriesOf(body, 'hfi1_sdma_verdict').filter((l) => l.includes(E2));
    expect(verdicts).toHaveLength(1);
    const m = /verdict="([^"]+)",reason="([^"]+)"\} 1$/.exec(verdicts[0] ?? '');
    expect(ALL_VERDICTS).toContain(m?.[1]);
    expect(ALL_REASONS).toContain(m?.[2]);
    expect(body).not.toMatch(/^hfi1_sdma_verdict_reason/m);
  });

  it('shows an unknown verdict (warming up) as itself, and no stalled series for it', async () => {
    const warming = (): Classification =>
      ({
        verdict: 'unknown',
        reason: 'warming-up',
        descPerSec: null,
        txPerSec: null,
        inFlight: 300,
        stallCount: 0,
        stallMaxMs: 0,
        stuckSinceMs: null,
        errors: [],
        orphanedWork: false,
      }) as unknown as Classification;
    const body = await (await startTestExporter(new ScriptBackend([stuck]), { classify: warming })).scrape();
    expect(value(body, `hfi1_sdma_verdict{${E2},verdict="unknown",reason="warming-up"}`)).toBe(1);
    expect(seriesOf(body, 'hfi1_sdma_verdict').filter((l) => l.includes(E2))).toHaveLength(1);
    expect(value(body, `hfi1_sdma_stalled{${E2}}`)).toBeUndefined();
  });
});

describe('exporter: source warnings', () => {
  it('counts each distinct source warning as a series, logs it once, and keeps the unit up', async () => {
    const b = new ScriptBackend([stuck]);
    b.warnings = [
      {
        source: 'sdes',
        path: '/sys/kernel/debug/hfi1/hfi1_0/sdes',
        key: 'sdes:trailing-field',
        message: 'an unknown trailing header field was left out',
      },
    ];
    const x = await startTestExporter(b);
    await x.scrape();
    x.tick(1000);
    const body = await x.scrape();
    expect(value(body, 'hfi1_sdma_up{unit="hfi1_0"}')).toBe(1);
    expect(value(body, 'hfi1_sdma_source_warnings{unit="hfi1_0",source="sdes",key="sdes:trailing-field"}')).toBe(1);
    expect(x.logs.filter((l) => /unknown trailing header field/.test(l))).toHaveLength(1);
  });
});

describe('exporter: gzip', () => {
  const raw = (port: number, headers: Record<string, string>) =>
    new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/metrics', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });

  it('gzips the body when the scraper accepts gzip, and only then', async () => {
    const x = await startTestExporter(new ScriptBackend([stuck]));
    const z = await raw(x.port, { 'accept-encoding': 'gzip' });
    expect(z.headers['content-encoding']).toBe('gzip');
    expect(gunzip(z.body.buffer.slice(z.body.byteOffset, z.body.byteOffset + z.body.length) as ArrayBuffer)).toMatch(
      /hfi1_sdma_up\{unit="hfi1_0"\} 1/,
    );
    const plain = await raw(x.port, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString('utf8')).toMatch(/hfi1_sdma_up\{unit="hfi1_0"\} 1/);
  });

  it('reads Accept-Encoding as HTTP means it', () => {
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('br, gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });
});
