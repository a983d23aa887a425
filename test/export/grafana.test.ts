// The Grafana dashboard deploy/grafana/hfi1-sdma.json: what scripts/grafana.ts writes, laid out on Grafana's
// 24-column grid without overlap, every query on the dashboard's variables and on series the exporter serves.
// Then a real Prometheus scrapes the exporter over an emulated host read through the live reader (engine 3's
// chip stops fetching, engine 5 loses a wake-up and strands a QP): each variable lists values, every panel's
// query returns data, and the stall and strand panels show engines 3 and 5 and no other.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_FILE, dashboard, dashboardText } from '../../scripts/grafana.js';
import { ROOT } from '../support/child.js';
import { hasPrometheus, prometheusHarness, until } from '../support/prometheus.js';
import { exportRendered, renderedHost } from '../support/rendered-host.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('grafana-');
const prometheus = prometheusHarness();

type Target = { refId: string; expr: string; datasource: { uid: string } };
type Panel = {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
};
type Variable = { name: string; type: string; query: string | { query: string }; allValue?: string };

const board = JSON.parse(readFileSync(join(ROOT, DASHBOARD_FILE), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: Variable[] };
};
const queried = board.panels.filter((p) => p.type !== 'row');

/** A panel's or a variable's query with the variables as Grafana substitutes them for "All". */
function substituted(expr: string): string {
  return expr
    .replaceAll('$job', 'hfi1-sdma')
    .replaceAll('$instance', '.*')
    .replaceAll('$unit', '.*')
    .replaceAll('$engine', '.*')
    .replaceAll('$__rate_interval', '2s');
}

describe(`${DASHBOARD_FILE}`, () => {
  it("is what scripts/grafana.ts writes (else run 'npm run dashboard')", () => {
    expect(readFileSync(join(ROOT, DASHBOARD_FILE), 'utf8') === dashboardText(), 'stale: run npm run dashboard').toBe(true);
    expect(board).toEqual(JSON.parse(JSON.stringify(dashboard())));
  });

  it('lays its panels on the 24-column grid without overlap, each id once', () => {
    const ids = board.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of board.panels) {
      const g = p.gridPos;
      expect(g.x + g.w, p.title).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it('queries series the exporter serves, through its data source and its job, host, unit and engine variables', () => {
    const metrics = readFileSync(join(ROOT, 'src/export/metrics.ts'), 'utf8');
    const served = new Set([...metrics.matchAll(/'(hfi1_sdma_[a-z_]+)'/g)].map((m) => m[1]));
    const exprs = queried.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    // The fleet row reads the recording rules (level:metric:operations), which the shipped file records.
    const recording = readFileSync(join(ROOT, 'deploy/prometheus/hfi1-sdma.recording.yml'), 'utf8');
    const recorded = new Set([...recording.matchAll(/^\s*- record: (\S+)$/gm)].map((m) => m[1]));
    const RECORD = /\b(?:instance|job):hfi1_sdma_[a-z_]+:[a-z_]+/g;
    expect(exprs.flatMap((e) => [...e.matchAll(RECORD)].map((m) => m[0])).filter((r) => !recorded.has(r))).toEqual([]);
    const used = new Set(exprs.flatMap((e) => [...e.replace(RECORD, '').matchAll(/\bhfi1_sdma_[a-z_]+\b/g)].map((m) => m[0])));
    expect([...used].filter((m) => !served.has(m))).toEqual([]);
    // Every panel has a query, through the data source variable.
    for (const p of queried) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax.
      for (const t of p.targets ?? []) expect(t.datasource.uid).toBe('${datasource}');
    }
    expect(board.templating.list.map((v) => v.name)).toEqual(['datasource', 'job', 'instance', 'unit', 'engine']);
    expect(exprs.filter((e) => !e.includes('$job'))).toEqual([]);
    // Only the fleet's per-job aggregates span every host.
    expect(exprs.filter((e) => !e.includes('$instance') && !/\bjob:hfi1_sdma_/.test(e))).toEqual([]);
    // Every series of a unit is selected by the unit variable; only the exporter's own are not.
    const exporterOwn = /^(ALERTS|up|hfi1_sdma_(build_info|units|scrape_duration_seconds))\{|(?:instance|job):hfi1_sdma_/;
    expect(exprs.filter((e) => !e.includes('unit=~"$unit"') && !exporterOwn.test(e))).toEqual([]);
    for (const title of ['Stalled', 'Stranded senders', 'Ring occupancy', 'Ring full (DQF)', 'Descriptors retired']) {
      expect(queried.find((p) => p.title === title)?.targets?.[0]?.expr, title).toContain('engine=~"$engine"');
    }
  });
});

describe('the dashboard over a real Prometheus', () => {
  it.skipIf(!hasPrometheus)(
    'every variable lists values and every panel returns data; the stall and strand panels show engines 3 and 5 (skipped only when prometheus is not installed)',
    async () => {
      const host = await renderedHost(
        tmp(),
        { seed: 5, engines: 8, workload: 'qp:gbps=10', fault: ['stop-fetch@1000:3', 'lost-wakeup@1000:5'] },
        900,
      );
      // Each scrape is one round, 200 ms of the emulator's time after the last (a scrape must only finish within
      // the half-second interval).
      const x = await exportRendered(host);
      try {
        const prom = await prometheus.start(`127.0.0.1:${x.port}`);
        await until(`engine 3 stalled and engine 5 stranded (prometheus said: ${prom.log()})`, 60_000, async () => {
          const stalled = await prom.query('hfi1_sdma_stalled{engine="3"} == 1');
          const stranded = await prom.query('hfi1_sdma_stranded_waiters{engine="5"} > 0');
          const firing = await prom.query('ALERTS{alertname="Hfi1SdmaExporterEmulated"}');
          // The fleet row reads the recording rules, evaluated on their own interval after the scrape: wait for them too.
          const hostsStalled = await prom.query('job:hfi1_sdma_hosts_stalled:count == 1');
          const hostsStranded = await prom.query('job:hfi1_sdma_hosts_stranded:count == 1');
          const all = [stalled, stranded, firing, hostsStalled, hostsStranded];
          return all.every((r) => r.data.result?.length) ? true : undefined;
        });

        for (const v of board.templating.list.filter((t) => t.type === 'query')) {
          const q = typeof v.query === 'string' ? v.query : v.query.query;
          const m = /^label_values\((?:(.+), )?(\w+)\)$/.exec(q);
          expect(m, q).not.toBeNull();
          const match = m?.[1] ? `&match[]=${encodeURIComponent(substituted(m[1]))}` : '';
          const r = await prom.api(`/api/v1/label/${m?.[2]}/values?${match.slice(1)}`);
          expect(r.status, q).toBe('success');
          expect((r.data as unknown as string[]).length, `variable ${v.name}: ${q}`).toBeGreaterThan(0);
          if (v.name === 'engine') expect(r.data).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
        }

        const answers = new Map<string, { metric: Record<string, string>; value: [number, string] }[]>();
        for (const p of queried) {
          for (const t of p.targets ?? []) {
            // Waiting for data: a rate over the panel's interval needs two scrapes in it, which a loaded machine delays.
            let last: Awaited<ReturnType<typeof prom.query>> | undefined;
            const r = await until(`${p.title} ${t.refId} returning data: ${substituted(t.expr)}`, 30_000, async () => {
              last = await prom.query(substituted(t.expr));
              return last.status === 'success' && last.data.result?.length ? last : undefined;
            }).catch(() => last);
            expect(r?.status, `${p.title}: ${r?.error ?? ''}`).toBe('success');
            expect(r?.data.result?.length, `${p.title} ${t.refId} returns no data: ${substituted(t.expr)}`).toBeGreaterThan(0);
            answers.set(`${p.title}/${t.refId}`, r?.data.result ?? []);
          }
        }
        const byEngine = (key: string) =>
          Object.fromEntries((answers.get(key) ?? []).map((s) => [s.metric.engine, Number(s.value[1])]));
        expect(Number(answers.get('Engines stalled/A')?.[0]?.value[1])).toBe(1);
        expect(Number(answers.get('Senders stranded/A')?.[0]?.value[1])).toBeGreaterThanOrEqual(1);
        const stalled = byEngine('Stalled/A');
        expect(stalled['3']).toBe(1);
        expect(Object.entries(stalled).filter(([e, v]) => e !== '3' && v !== 0)).toEqual([]);
        // The timeline's code for stalled is 4 (idle 0, progressing 1, backpressure 2, unknown 3).
        expect(byEngine('Verdict per engine/A')['3']).toBe(4);
        const stranded = byEngine('Stranded senders/A');
        expect(stranded['5']).toBeGreaterThanOrEqual(1);
        expect(Object.entries(stranded).filter(([e, v]) => e !== '5' && v !== 0)).toEqual([]);
        expect(byEngine('Ring occupancy/A')['3']).toBeGreaterThan(0.25);
        // The fleet row, on the recording rules: one host, with a stranded sender and a stalled engine.
        expect(Number(answers.get('Hosts answering/A')?.[0]?.value[1])).toBe(1);
        expect(Number(answers.get('Hosts with stranded senders/A')?.[0]?.value[1])).toBe(1);
        expect(Number(answers.get('Hosts with stalled engines/A')?.[0]?.value[1])).toBe(1);
        expect(Number(answers.get('Hosts stalled by the fabric/A')?.[0]?.value[1])).toBe(0);
      } finally {
        x.server.close();
        await host.close();
      }
    },
    120_000,
  );
});
