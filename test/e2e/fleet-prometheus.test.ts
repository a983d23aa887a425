// Prometheus at fleet scale, on the real thing: the recording rules (deploy/prometheus/hfi1-sdma.recording.yml)
// pass promtool's checks and unit tests, every rule among them; then a site Prometheus scrapes two emulated hosts'
// exporters (one healthy, one stranding a QP on engine 1) and records the aggregates, and a global Prometheus
// federates only those: it sees two hosts, one with a stranded sender, per host and per job, and none of the
// exporters' own series.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child.js';
import { hasPrometheus, prometheusHarness, RECORDING_RULES, until } from '../support/prometheus.js';
import { hasPromtool } from '../support/promtool.js';
import { exportRendered, renderedHost } from '../support/rendered-host.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

const TESTS = join(ROOT, 'deploy/prometheus/hfi1-sdma.recording.test.yml');
const FEDERATE = join(ROOT, 'deploy/prometheus/federate.yml');
const prometheus = prometheusHarness();
const tmp = tempDirs('fleet-prom-');

describe('the recording rules', () => {
  const records = [...readFileSync(RECORDING_RULES, 'utf8').matchAll(/^\s*- record: (\S+)$/gm)].map((m) => m[1] as string);

  it.skipIf(!hasPromtool)(
    'pass promtool check rules, and the federation example check config (skipped only when promtool is not installed)',
    () => {
      const rules = spawnSync('promtool', ['check', 'rules', RECORDING_RULES], { encoding: 'utf8' });
      expect(rules.stdout + rules.stderr).toMatch(new RegExp(`SUCCESS: ${records.length} rules found`));
      expect(spawnSync('promtool', ['check', 'config', FEDERATE], { encoding: 'utf8' }).status).toBe(0);
    },
  );

  it.skipIf(!hasPromtool)('pass their promtool unit tests (skipped only when promtool is not installed)', () => {
    const r = spawnSync('promtool', ['test', 'rules', TESTS], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('are named level:metric:operations, and each is evaluated by a unit test', () => {
    expect(records.length).toBeGreaterThanOrEqual(10);
    expect(records.filter((r) => !/^(instance|job):hfi1_sdma_[a-z_]+:[a-z_]+$/.test(r))).toEqual([]);
    const tested = new Set([...readFileSync(TESTS, 'utf8').matchAll(/^\s*- expr: (\S+)$/gm)].map((m) => m[1]));
    expect(records.filter((r) => !tested.has(r))).toEqual([]);
  });
});

describe('a global Prometheus federating a site', () => {
  it.skipIf(!hasPrometheus)(
    'sees both hosts and the stranded one through the aggregates alone (skipped only when prometheus is not installed)',
    async () => {
      const hosts = await Promise.all([
        renderedHost(tmp(), { engines: 4, workload: 'idle' }, 100),
        renderedHost(tmp(), { engines: 4, workload: 'qp:gbps=10', fault: ['lost-wakeup:qp@50:1'] }, 400),
      ]);
      const exporters = await Promise.all(hosts.map(exportRendered));
      try {
        const site = await prometheus.start(exporters.map((x) => ({ job: 'hfi1-sdma', target: `127.0.0.1:${x.port}` })));
        const global = await prometheus.startGlobal(site.address);
        const value = async (q: string) => {
          const r = await global.query(q);
          return r.data.result?.[0] ? Number(r.data.result[0].value[1]) : undefined;
        };
        await until(
          `the global server to see a stranded host (site: ${site.log()}; global: ${global.log()})`,
          60_000,
          async () =>
            (await value('job:hfi1_sdma_hosts_stranded:count')) === 1 && (await value('job:hfi1_sdma_hosts:count')) === 2
              ? true
              : undefined,
        );
        const sick = `127.0.0.1:${exporters[1]?.port}`;
        const perHost = (await global.query('instance:hfi1_sdma_stranded_waiters:sum > 0')).data.result ?? [];
        expect(perHost.map((r) => r.metric.instance)).toEqual([sick]);
        expect(await value('job:hfi1_sdma_stranded_waiters:sum')).toBeGreaterThanOrEqual(1);
        // Only aggregates crossed: no engine series, no exporter series, a handful per host.
        expect((await global.query('{__name__=~"hfi1_sdma_.+"}')).data.result).toEqual([]);
        const all = (await global.query('{__name__=~"(instance|job):hfi1_sdma_.+"}')).data.result ?? [];
        expect(all.length).toBeGreaterThan(0);
        expect(all.length).toBeLessThan(20 * hosts.length);
      } finally {
        for (const x of exporters) x.server.close();
        for (const h of hosts) await h.close();
      }
    },
    120_000,
  );
});
