// The exporter's HTTP side: /metrics (Prometheus text, or OpenMetrics when asked; gzip when the
// scraper accepts it), / a small page, 404 elsewhere, 405 for methods other than GET and HEAD.
// Concurrent scrapes share one sample per min-interval (see sampler.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { type ExporterOptions, Sampler } from './sampler.js';

export { type ExporterOptions, Sampler } from './sampler.js';

const gzipAsync = promisify(gzip);

const INDEX = `<!doctype html>
<html><head><title>hfi1-sdma exporter</title></head>
<body><h1>hfi1-sdma exporter</h1>
<p>Per-engine metrics of the Omni-Path hfi1 send-DMA engines: <a href="/metrics">/metrics</a>.</p>
</body></html>
`;

/** Whether the Accept-Encoding header allows gzip (`gzip` or `*` without `q=0`). */
export function acceptsGzip(header: string | undefined): boolean {
  for (const part of (header ?? '').split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding?.trim() !== 'gzip' && coding?.trim() !== '*') continue;
    const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (q === undefined || Number(q) > 0) return true;
  }
  return false;
}

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
  const text = await reg.metrics();
  const headers: Record<string, string> = { 'content-type': reg.contentType, vary: 'Accept-Encoding' };
  let body: string | Buffer = text;
  if (acceptsGzip(req.headers['accept-encoding'])) {
    body = await gzipAsync(text);
    headers['content-encoding'] = 'gzip';
  }
  res.writeHead(200, headers).end(req.method === 'HEAD' ? undefined : body);
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
