// Integration with a real Prometheus: it scrapes `hfi1-sdma export` running on the emulator (a
// stop-fetch fault on engine 3 must turn hfi1_sdma_stalled to 1 and the stall alert pending), and
// an exporter on a scripted backend whose unit stalls, then fails, then is gone (the stall alert
// must resolve, the unreadable and gone alerts fire). The shipped rules pass promtool's checks
// and its unit tests, which cover every rule. Prometheus scrapes and evaluates every 500 ms with the rules'
// `for:` shortened to 1 s, and each step waits on the condition through Prometheus' HTTP API. The tests run
// at once: each Prometheus takes its first scrape some seconds after it starts, and they wait together.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, it } from 'vitest';
import { startExporter } from '../../src/export/server.js';
import { freePort, hasPrometheus, prometheusHarness, RULES, until } from '../support/prometheus.js';
import { hasPromtool } from '../support/promtool.js';
import { engines, ScriptBackend } from './harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/hfi1-sdma.js');
const CONFIG = join(ROOT, 'deploy/prometheus/prometheus.yml');
const RULE_TESTS = join(ROOT, 'deploy/prometheus/hfi1-sdma.rules.test.yml');
const prometheus = prometheusHarness();

/** Run promtool without holding the event loop (the Prometheus tests of this file run meanwhile). */
function promtool(args: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('promtool', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += String(d);
    });
    child.stderr.on('data', (d) => {
      output += String(d);
    });
    child.on('close', (status) => resolve({ status, output }));
  });
}

const children: ChildProcess[] = [];
const closers: (() => void)[] = [];
afterAll(() => {
  for (const c of closers) c();
  for (const c of children) c.kill('SIGKILL');
});

describe('shipped Prometheus files', { concurrent: true }, () => {
  const alerts = [...readFileSync(RULES, 'utf8').matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]);

  it.skipIf(!hasPromtool)(
    'pass promtool check rules and check config (skipped only when promtool is not installed)',
    async ({ expect }) => {
      const [rules, config] = await Promise.all([promtool(['check', 'rules', RULES]), promtool(['check', 'config', CONFIG])]);
      expect(rules.output).toMatch(new RegExp(`SUCCESS: ${alerts.length} rules found`));
      expect(rules.status).toBe(0);
      expect(config.status).toBe(0);
    },
  );

  it.skipIf(!hasPromtool)('pass their promtool unit tests (skipped only when promtool is not installed)', async ({ expect }) => {
    const r = await promtool(['test', 'rules', RULE_TESTS]);
    expect(r.output).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('have a unit test in which each rule fires', ({ expect }) => {
    const tests = readFileSync(RULE_TESTS, 'utf8');
    // An alert_rule_test entry that expects alerts: `alertname: X` then `exp_alerts:` with a list.
    const firing = new Set([...tests.matchAll(/alertname: (\S+)\n\s*exp_alerts:\n\s*- exp_labels/g)].map((m) => m[1]));
    expect(alerts.length).toBeGreaterThanOrEqual(8);
    expect(alerts.filter((a) => !firing.has(a))).toEqual([]);
  });
});

describe('Prometheus scraping the exporter on the emulator', { concurrent: true }, () => {
  it.skipIf(!hasPrometheus)(
    'sees every engine, then engine 3 stalled and its alert pending after stop-fetch (skipped only when prometheus is not installed)',
    async ({ expect }) => {
      const exporterPort = await freePort();
      const exporter = spawn(
        process.execPath,
        [
          BIN,
          '--backend',
          'emu',
          '--engines',
          '4',
          '--workload',
          'mixed:gbps=2',
          '--at-ms',
          '500',
          '--fault',
          'stop-fetch@1000:3',
          'export',
          '--listen',
          `127.0.0.1:${exporterPort}`,
          '--min-interval-ms',
          '100',
          '--stall-ms',
          '500',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(exporter);
      let exporterLog = '';
      exporter.stderr?.on('data', (d) => {
        exporterLog += String(d);
      });
      const prom = await prometheus.start(`127.0.0.1:${exporterPort}`);

      const free = await until(`every engine’s free-descriptor series (prometheus said: ${prom.log()})`, 40_000, async () => {
        const r = await prom.query('hfi1_sdma_free_descriptors');
        return r.data.result && r.data.result.length === 4 ? r.data.result : undefined;
      });
      expect(free.map((x) => x.metric.engine).sort()).toEqual(['0', '1', '2', '3']);
      const ring = await prom.query('hfi1_sdma_ring_size_descriptors');
      expect(ring.data.result?.[0]?.value[1]).toBe('2048');
      // Waited for, not looked at once: on a loaded machine the first scrapes seen did not carry it yet.
      await until('every engine running', 40_000, async () => {
        const r = await prom.query('sum(hfi1_sdma_engine_running)');
        return r.data.result?.[0]?.value[1] === '4' ? true : undefined;
      });
      const info = await prom.query('hfi1_sdma_build_info');
      expect(info.data.result?.[0]?.metric.backend).toBe('emu');

      const stalled = await until('engine 3 stalled', 60_000, async () => {
        const r = await prom.query('hfi1_sdma_stalled{engine="3"} == 1');
        return r.data.result?.length ? r.data.result : undefined;
      });
      expect(stalled[0]?.metric).toMatchObject({ unit: 'hfi1_0', engine: '3' });
      const reason = await prom.query('hfi1_sdma_verdict{engine="3",reason="chip-not-fetching"}');
      expect(reason.data.result?.[0]?.value[1]).toBe('1');
      const others = await prom.query('max(hfi1_sdma_stalled{engine!="3"})');
      expect(others.data.result?.[0]?.value[1]).toBe('0');

      const alert = await until('the stall alert pending or firing', 30_000, async () =>
        (await prom.alerts()).find((a) => a.labels.alertname === 'Hfi1SdmaEngineStalled' && a.labels.engine === '3'),
      );
      expect(['pending', 'firing']).toContain(alert.state);
      expect(exporterLog).toMatch(/serving http:\/\/127\.0\.0\.1:/);
    },
    150_000,
  );
});

describe('Prometheus scraping an exporter whose unit stalls, fails, then is gone', { concurrent: true }, () => {
  it.skipIf(!hasPrometheus)(
    'the stall alert resolves once the source fails, the unreadable alert fires, then the gone alert fires (skipped only when prometheus is not installed)',
    async ({ expect }) => {
      let phase: 'stalled' | 'failing' | 'gone' = 'stalled';
      const backend = new ScriptBackend([
        (t) => {
          if (phase === 'failing') return new Error('sdes: permission denied');
          if (phase === 'gone') return engines(t, () => ({ gone: true, state: null }));
          return engines(t, (e) => (e === 2 ? { dh: 1000, dt: 1300, fetched: 1000 } : { dh: 500, dt: 500 }));
        },
      ]);
      const x = await startExporter(
        {
          backend,
          buildInfo: { version: '0.0.0-test', backend: 'hw' },
          minIntervalMs: 100,
          stallMs: 300,
          nowMs: () => Date.now(),
          log: () => {},
          beforeSample: (ms) => backend.advanceMs(ms),
        },
        '127.0.0.1',
        0,
      );
      closers.push(() => x.server.close());
      const prom = await prometheus.start(`127.0.0.1:${x.port}`);
      const firing = (name: string) => async () =>
        (await prom.alerts()).find((a) => a.labels.alertname === name && a.state === 'firing');

      await until(`the stall alert firing (prometheus said: ${prom.log()})`, 60_000, firing('Hfi1SdmaEngineStalled'));
      phase = 'failing';
      await until('the unreadable alert firing', 30_000, firing('Hfi1SdmaUnitUnreadable'));
      expect((await prom.alerts()).filter((a) => a.labels.alertname === 'Hfi1SdmaEngineStalled')).toEqual([]);
      expect((await prom.query('hfi1_sdma_stalled')).data.result).toEqual([]);
      expect((await prom.query('hfi1_sdma_in_flight_descriptors')).data.result).toEqual([]);

      phase = 'gone';
      const gone = await until('the gone alert firing', 30_000, firing('Hfi1SdmaDeviceGone'));
      expect(gone.labels).toMatchObject({ unit: 'hfi1_0', severity: 'critical' });
      await until('the unreadable alert resolved', 30_000, async () =>
        (await prom.alerts()).some((a) => a.labels.alertname === 'Hfi1SdmaUnitUnreadable') ? undefined : true,
      );
      expect((await prom.alerts()).filter((a) => a.labels.alertname === 'Hfi1SdmaEngineStalled')).toEqual([]);
    },
    150_000,
  );
});
