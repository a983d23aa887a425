// Integration with a real Prometheus: it scrapes `hfi1-sdma export` running on the emulator; a
// stop-fetch fault on engine 3 must turn hfi1_sdma_stalled to 1 and the stall alert pending.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/hfi1-sdma.js');
const RULES = join(ROOT, 'deploy/prometheus/hfi1-sdma.rules.yml');
const CONFIG = join(ROOT, 'deploy/prometheus/prometheus.yml');
const hasPrometheus = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0;
const hasPromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** Poll `fn` every 250 ms until it returns a value or `ms` pass; bounded, then fails with `what`. */
async function until<T>(what: string, ms: number, fn: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const cause = (last as { cause?: unknown } | undefined)?.cause;
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}${cause ? ` (${String(cause)})` : ''}` : ''}`);
}

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('shipped Prometheus files', () => {
  it.skipIf(!hasPromtool)('pass promtool check rules and check config (skipped only when promtool is not installed)', () => {
    const rules = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(rules.stdout + rules.stderr).toMatch(/SUCCESS: 4 rules found/);
    expect(rules.status).toBe(0);
    const config = spawnSync('promtool', ['check', 'config', CONFIG], { encoding: 'utf8' });
    expect(config.status).toBe(0);
  });
});

describe('Prometheus scraping the exporter on the emulator', () => {
  it.skipIf(!hasPrometheus)(
    'sees every engine, then engine 3 stalled and its alert pending after stop-fetch (skipped only when prometheus is not installed)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'prom-it-'));
      dirs.push(dir);
      const exporterPort = await freePort();
      const promPort = await freePort();
      // The test's copy of the rules: the same expressions with a short `for:`.
      writeFileSync(join(dir, 'rules.yml'), readFileSync(RULES, 'utf8').replace(/for: \d+m/g, 'for: 2s'));
      writeFileSync(
        join(dir, 'prometheus.yml'),
        [
          'global: { scrape_interval: 1s, evaluation_interval: 1s }',
          'rule_files: [rules.yml]',
          'scrape_configs:',
          '  - job_name: hfi1-sdma',
          `    static_configs: [{ targets: ["127.0.0.1:${exporterPort}"] }]`,
          '',
        ].join('\n'),
      );
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
          'stop-fetch@6000:3',
          'export',
          '--listen',
          `127.0.0.1:${exporterPort}`,
          '--min-interval-ms',
          '200',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(exporter);
      let exporterLog = '';
      exporter.stderr?.on('data', (d) => {
        exporterLog += String(d);
      });
      const prom = spawn(
        'prometheus',
        [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${promPort}`,
          '--log.level=warn',
        ],
        { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(prom);
      let promLog = '';
      prom.stderr?.on('data', (d) => {
        promLog += String(d);
      });
      prom.on('exit', (code) => {
        promLog += `\n(prometheus exited ${code})`;
      });
      const api = async (path: string) => {
        const r = await fetch(`http://127.0.0.1:${promPort}${path}`);
        return (await r.json()) as {
          status: string;
          data: {
            result?: { metric: Record<string, string>; value: [number, string] }[];
            alerts?: { labels: Record<string, string>; state: string }[];
          };
        };
      };
      const query = (q: string) => api(`/api/v1/query?query=${encodeURIComponent(q)}`);

      const ring = await until(`every engine’s ring size series (prometheus said: ${promLog})`, 40_000, async () => {
        const r = await query('hfi1_sdma_ring_size_descriptors');
        return r.data.result && r.data.result.length === 4 ? r.data.result : undefined;
      });
      expect(ring.map((x) => x.metric.engine).sort()).toEqual(['0', '1', '2', '3']);
      expect(ring.every((x) => x.value[1] === '2048')).toBe(true);
      const running = await query('sum(hfi1_sdma_engine_running)');
      expect(running.data.result?.[0]?.value[1]).toBe('4');

      const stalled = await until('engine 3 stalled', 60_000, async () => {
        const r = await query('hfi1_sdma_stalled{engine="3"} == 1');
        return r.data.result?.length ? r.data.result : undefined;
      });
      expect(stalled[0]?.metric).toMatchObject({ unit: 'hfi1_0', engine: '3' });
      const reason = await query('hfi1_sdma_verdict_reason{engine="3",reason="chip-not-fetching"}');
      expect(reason.data.result?.[0]?.value[1]).toBe('1');
      const others = await query('max(hfi1_sdma_stalled{engine!="3"})');
      expect(others.data.result?.[0]?.value[1]).toBe('0');

      const alert = await until('the stall alert pending or firing', 30_000, async () => {
        const r = await api('/api/v1/alerts');
        return r.data.alerts?.find((a) => a.labels.alertname === 'Hfi1SdmaEngineStalled' && a.labels.engine === '3');
      });
      expect(['pending', 'firing']).toContain(alert.state);
      expect(exporterLog).toMatch(/serving http:\/\/127\.0\.0\.1:/);
    },
    150_000,
  );
});
