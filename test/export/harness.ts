// In-process exporter for tests: a scripted backend, a virtual wall clock, scrapes over HTTP.
import { gunzipSync } from 'node:zlib';
import { onTestFinished } from 'vitest';
import type { Backend, EngineSample, SourceWarning, Unit, UnitInfo } from '../../src/backend.js';
import { Sampler } from '../../src/export/sampler.js';
import { type ExporterOptions, startExporter } from '../../src/export/server.js';
import { openHwBackend } from '../../src/hw/index.js';
import { mkSample, type SampleSpec } from '../support/samples.js';

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
    // The samples a round takes to confirm a waiter come without waiting (the backend's time moves instead).
    sleep: async () => {},
    ...over,
  };
  const x = await startExporter(o, '127.0.0.1', 0);
  // Closed when the calling test ends (registered per test: a shared module's hooks would serve one file only).
  onTestFinished(() => {
    x.server.close();
  });
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

/** What one unit of a ScriptBackend does at a virtual time: samples, an error, or never answer. */
export type UnitScript = (tMs: number) => EngineSample[] | Error | 'hang';

/** A backend of scripted units (hfi1_0, hfi1_1, …); virtual time moves only through advanceMs. */
export class ScriptBackend implements Backend {
  readonly kind = 'hw' as const;
  nowMs = 0;
  readonly sampleCalls: number[] = [];
  warnings: SourceWarning[] = [];

  constructor(public scripts: UnitScript[]) {}

  advanceMs(ms: number): void {
    this.nowMs += ms;
  }

  private info(n: number): UnitInfo {
    return {
      unit: n,
      name: `hfi1_${n}`,
      pci: '',
      engines: 4,
      engineIds: [0, 1, 2, 3],
      flavour: { module: 'hfi1', chip: 'wfr', driver: 'upstream', ports: 1, evidence: [] },
      descqCnt: 2048,
      sources: [{ source: 'sdes', readable: true }],
    };
  }

  async units(): Promise<UnitInfo[]> {
    return this.scripts.map((_, n) => this.info(n));
  }

  async unit(id: number | string): Promise<Unit> {
    const n = typeof id === 'string' ? Number(id.replace(/^hfi1_/, '')) : id;
    this.sampleCalls[n] = 0;
    return {
      info: this.info(n),
      sample: () => {
        this.sampleCalls[n] = (this.sampleCalls[n] ?? 0) + 1;
        const r = this.scripts[n]?.(this.nowMs);
        if (r === 'hang') return new Promise<EngineSample[]>(() => {});
        return r instanceof Error ? Promise.reject(r) : Promise.resolve(r ?? []);
      },
      ring: () => Promise.reject(new Error('no ring in this test')),
      warnings: () => this.warnings,
    };
  }

  async close(): Promise<void> {}
}

/** Four engines of unit `unit` at time t, each built from `spec(engine)`. */
export function engines(t: number, spec: (e: number) => Omit<SampleSpec, 't' | 'engine'>, unit = 0): EngineSample[] {
  return [0, 1, 2, 3].map((e) => ({ ...mkSample({ ...spec(e), t, engine: e }), unit }));
}

/**
 * The exporter's metrics text after `rounds` rounds over the tree at `root`, read by the live backend, `stepMs` apart
 * on its clock from `startMs`; `before(nowMs)` runs ahead of each round (an emulated host renders itself there).
 */
export async function sysrootMetrics(
  root: string,
  rounds: number,
  stepMs: number,
  startMs = 0,
  before?: (nowMs: number) => Promise<void> | void,
): Promise<string> {
  let now = startMs;
  const hw = await openHwBackend({ sysroot: root, clock: { nowMs: () => now } });
  try {
    const sampler = new Sampler({
      backend: hw,
      buildInfo: { version: '0.0.0', backend: 'hw' },
      minIntervalMs: 0,
      stallMs: 500,
      nowMs: () => now,
      log: () => {},
    });
    for (let i = 0; i < rounds; i++) {
      now += stepMs;
      await before?.(now);
      await sampler.refresh();
    }
    return await sampler.metrics.text.metrics();
  } finally {
    await hw.close();
  }
}
