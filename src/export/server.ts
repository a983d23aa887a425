// The exporter's HTTP side: /metrics (Prometheus text, or OpenMetrics when asked), / a small
// page, 404 elsewhere, 405 for methods other than GET and HEAD. Concurrent scrapes share one
// sample per min-interval; a source that fails sets hfi1_sdma_up to 0 and is logged, never fatal.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Backend, Unit } from '../backend.js';
import { classify, DEFAULT_CLASSIFY_OPTIONS, type EngineTrack, newTrack } from '../progress/classify.js';
import { SdmaMetrics } from './metrics.js';

/** Exporter settings and the edges it touches. */
export interface ExporterOptions {
  backend: Backend;
  minIntervalMs: number;
  stallMs: number;
  /** Wall clock in ms (injected for tests). */
  nowMs: () => number;
  log: (line: string) => void;
  /** Called before each sampling round with the wall time since the last one (the emulator advances). */
  beforeSample?: (elapsedMs: number) => Promise<void> | void;
}

/** The sampling side: one round at most per min-interval, shared by concurrent scrapes. */
export class Sampler {
  readonly metrics = new SdmaMetrics();
  private readonly tracks = new Map<string, EngineTrack>();
  private lastRoundMs: number | null = null;
  private inflight: Promise<void> | null = null;
  private units: Unit[] | null = null;
  rounds = 0;

  constructor(private readonly o: ExporterOptions) {}

  /** Make sure the metrics are at most min-interval old. */
  refresh(): Promise<void> {
    const now = this.o.nowMs();
    if (this.inflight) return this.inflight;
    if (this.lastRoundMs !== null && now - this.lastRoundMs < this.o.minIntervalMs) return Promise.resolve();
    this.inflight = this.round(now).finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async round(now: number): Promise<void> {
    const t0 = this.o.nowMs();
    await this.o.beforeSample?.(this.lastRoundMs === null ? 0 : now - this.lastRoundMs);
    this.lastRoundMs = now;
    this.rounds += 1;
    this.metrics.beginRound();
    if (!this.units) {
      try {
        const infos = await this.o.backend.units();
        this.units = await Promise.all(infos.map((u) => this.o.backend.unit(u.unit)));
      } catch (e) {
        this.o.log(`hfi1-sdma export: cannot list units: ${(e as Error).message}`);
        this.units = null;
        return;
      }
    }
    for (const unit of this.units) {
      try {
        const samples = await unit.sample();
        const opts = { ...DEFAULT_CLASSIFY_OPTIONS, stallMs: this.o.stallMs, descqCnt: unit.info.descqCnt };
        for (const s of samples) {
          const key = `${s.unit}/${s.engine}`;
          const track = this.tracks.get(key) ?? newTrack();
          this.tracks.set(key, track);
          this.metrics.record(unit.info.name, unit.info.descqCnt, s, classify(track, s, opts));
        }
        this.metrics.up.set({ unit: unit.info.name }, 1);
      } catch (e) {
        this.metrics.up.set({ unit: unit.info.name }, 0);
        this.o.log(`hfi1-sdma export: ${unit.info.name}: sampling failed: ${(e as Error).message}`);
      }
    }
    this.metrics.scrapeDuration.set((this.o.nowMs() - t0) / 1000);
  }
}

const INDEX = `<!doctype html>
<html><head><title>hfi1-sdma exporter</title></head>
<body><h1>hfi1-sdma exporter</h1>
<p>Per-engine metrics of the Omni-Path hfi1 send-DMA engines: <a href="/metrics">/metrics</a>.</p>
</body></html>
`;

function wantsOpenMetrics(req: IncomingMessage): boolean {
  return /application\/openmetrics-text/.test(req.headers.accept ?? '');
}

/** Handle one request. */
export async function handle(sampler: Sampler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/' && path !== '/metrics') {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: see /metrics\n');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed: use GET\n');
    return;
  }
  if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(req.method === 'HEAD' ? undefined : INDEX);
    return;
  }
  await sampler.refresh();
  const reg = wantsOpenMetrics(req) ? sampler.metrics.openMetrics : sampler.metrics.text;
  const body = await reg.metrics();
  res.writeHead(200, { 'content-type': reg.contentType }).end(req.method === 'HEAD' ? undefined : body);
}

/** Start listening; resolves once bound. */
export async function startExporter(
  o: ExporterOptions,
  host: string,
  port: number,
): Promise<{ server: Server; sampler: Sampler; port: number }> {
  const sampler = new Sampler(o);
  const server = createServer((req, res) => {
    handle(sampler, req, res).catch((e) => {
      o.log(`hfi1-sdma export: ${req.url}: ${(e as Error).message}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  return { server, sampler, port: typeof addr === 'object' && addr ? addr.port : port };
}
