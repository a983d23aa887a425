// In-process exporter for tests: a scripted backend, a virtual wall clock, scrapes over HTTP.
import { gunzipSync } from 'node:zlib';
import { afterEach } from 'vitest';
import type { Backend } from '../../src/backend.js';
import { type ExporterOptions, startExporter } from '../../src/export/server.js';

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** Start an exporter on a free loopback port; `tick` moves its wall clock. */
export async function startTestExporter(
  backend: Backend & { advanceMs?: (ms: number) => void },
  over: Partial<ExporterOptions> = {},
) {
  let now = 0;
  const logs: string[] = [];
  const o: ExporterOptions = {
    backend,
    buildInfo: { version: '9.9.9', backend: backend.kind },
    minIntervalMs: 1000,
    stallMs: 1000,
    nowMs: () => now,
    log: (l) => logs.push(l),
    beforeSample: (ms) => backend.advanceMs?.(ms),
    ...over,
  };
  const x = await startExporter(o, '127.0.0.1', 0);
  servers.push({ close: () => x.server.close() });
  const url = (p: string) => `http://127.0.0.1:${x.port}${p}`;
  const scrape = async () => (await fetch(url('/metrics'))).text();
  return { ...x, url, logs, scrape, tick: (ms: number) => (now += ms) };
}

/** The value of one series (exact name and labels as rendered), or undefined when absent. */
export const value = (body: string, series: string): number | undefined => {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

/** Every series line of a metric (any labels). */
export const seriesOf = (body: string, metric: string): string[] =>
  body.split('\n').filter((l) => l.startsWith(`${metric}{`) || l.startsWith(`${metric} `));

/** Decode a gzip body. */
export const gunzip = (b: ArrayBuffer): string => gunzipSync(Buffer.from(b)).toString('utf8');
