// A real Prometheus for integration tests: started on a free port with its own config (a scrape every half
// second at most, the shipped alert rules at a 1 s `for:`), queried through its HTTP API, and waited on by
// condition, never by time. Call prometheusHarness() at the top of a test file: what it starts is stopped and
// removed after that file's tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { onPath } from './on-path.js';

export const RULES = fileURLToPath(new URL('../../deploy/prometheus/hfi1-sdma.rules.yml', import.meta.url));
/** The fleet's recording rules (per-host and per-job aggregates), loaded beside the alert rules. */
export const RECORDING_RULES = fileURLToPath(new URL('../../deploy/prometheus/hfi1-sdma.recording.yml', import.meta.url));

/** Whether prometheus can be run here. */
export const hasPrometheus = onPath('prometheus');

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
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
export async function until<T>(what: string, ms: number, fn: () => Promise<T | undefined>): Promise<T> {
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

/** An answer of the HTTP API (the parts the tests read). */
export type ApiAnswer = {
  status: string;
  error?: string;
  data: {
    resultType?: string;
    result?: { metric: Record<string, string>; value: [number, string] }[];
    alerts?: { labels: Record<string, string>; state: string }[];
  };
};

/** A running Prometheus. */
export interface RunningPrometheus {
  /** Where it listens: host:port. */
  address: string;
  api(path: string): Promise<ApiAnswer>;
  query(q: string): Promise<ApiAnswer>;
  alerts(): Promise<NonNullable<ApiAnswer['data']['alerts']>>;
  log(): string;
}

/** A scrape job: its name and its one target (host:port). */
export interface ScrapeJob {
  job: string;
  target: string;
}

/** The match[] a global Prometheus federates from a site (as deploy/prometheus/federate.yml does). */
export const FEDERATE_MATCH = [
  '{__name__=~"job:hfi1_sdma_.*|instance:hfi1_sdma_.*"}',
  '{__name__="ALERTS",alertname=~"Hfi1Sdma.*"}',
];

/** Starts Prometheus servers for one test file and stops them after its tests. */
export function prometheusHarness(): {
  start(target: string | readonly ScrapeJob[], scrapeMs?: number): Promise<RunningPrometheus>;
  /** A global Prometheus that federates the aggregates of `site` (host:port) every `scrapeMs`, with no rules of its own. */
  startGlobal(site: string, scrapeMs?: number): Promise<RunningPrometheus>;
} {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  /** Run Prometheus in `dir` on its prometheus.yml. */
  const launch = async (dir: string): Promise<RunningPrometheus> => {
    const promPort = await freePort();
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
    let log = '';
    prom.stderr?.on('data', (d) => {
      log += String(d);
    });
    prom.on('exit', (code) => {
      log += `\n(prometheus exited ${code})`;
    });
    const api = async (path: string) => (await (await fetch(`http://127.0.0.1:${promPort}${path}`)).json()) as ApiAnswer;
    const query = (q: string) => api(`/api/v1/query?query=${encodeURIComponent(q)}`);
    const alerts = async () => (await api('/api/v1/alerts')).data.alerts ?? [];
    return { address: `127.0.0.1:${promPort}`, api, query, alerts, log: () => log };
  };
  return {
    async startGlobal(site: string, scrapeMs = 500): Promise<RunningPrometheus> {
      const dir = mkdtempSync(join(tmpdir(), 'prom-global-'));
      dirs.push(dir);
      writeFileSync(
        join(dir, 'prometheus.yml'),
        [
          `global: { scrape_interval: ${scrapeMs}ms, scrape_timeout: ${scrapeMs}ms, evaluation_interval: ${scrapeMs}ms }`,
          'scrape_configs:',
          '  - job_name: hfi1-sdma-federate',
          '    honor_labels: true',
          '    metrics_path: /federate',
          `    params: { "match[]": ${JSON.stringify(FEDERATE_MATCH)} }`,
          `    static_configs: [{ targets: ["${site}"] }]`,
          '',
        ].join('\n'),
      );
      return launch(dir);
    },
    /**
     * Start Prometheus scraping `target` (job hfi1-sdma), or each job's target, every `scrapeMs` (500), with the
     * shipped rules at a 1 s `for:`.
     */
    async start(target: string | readonly ScrapeJob[], scrapeMs = 500): Promise<RunningPrometheus> {
      const jobs = typeof target === 'string' ? [{ job: 'hfi1-sdma', target }] : target;
      const dir = mkdtempSync(join(tmpdir(), 'prom-it-'));
      dirs.push(dir);
      // The test's copy of the rules: the same expressions with a short `for:`.
      writeFileSync(join(dir, 'rules.yml'), readFileSync(RULES, 'utf8').replace(/for: \d+m/g, 'for: 1s'));
      writeFileSync(join(dir, 'recording.yml'), readFileSync(RECORDING_RULES, 'utf8'));
      writeFileSync(
        join(dir, 'prometheus.yml'),
        [
          // A scrape may take the whole interval (a loaded machine): the timeout is the interval, not less.
          `global: { scrape_interval: ${scrapeMs}ms, scrape_timeout: ${scrapeMs}ms, evaluation_interval: ${scrapeMs}ms }`,
          'rule_files: [rules.yml, recording.yml]',
          'scrape_configs:',
          // Targets of one job name are one job (a fleet's hosts), as a scrape config lists them.
          ...[...new Set(jobs.map((j) => j.job))].flatMap((name) => [
            `  - job_name: ${name}`,
            `    static_configs: [{ targets: ${JSON.stringify(jobs.filter((j) => j.job === name).map((j) => j.target))} }]`,
          ]),
          '',
        ].join('\n'),
      );
      return launch(dir);
    },
  };
}
