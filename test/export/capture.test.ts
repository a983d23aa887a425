// The exporter with --capture-dir: a stall is captured once, and the capture is counted and named in the
// series the alerts quote (hfi1_sdma_captures_total, hfi1_sdma_last_capture_info); without it, no such series.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { emuTake } from '../../src/cli/capture.js';
import { createEmuBackend } from '../../src/emu/index.js';
import { Sampler } from '../../src/export/sampler.js';
import { Captures } from '../../src/monitor/capture.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('export-capture-');

function sampler(withCaptures: boolean) {
  const backend = createEmuBackend({
    seed: 1,
    engines: 2,
    descqCnt: undefined,
    workload: 'qp:gbps=0.1,size=4096-8192',
    atMs: 0,
    fault: ['stop-fetch@200:0'],
  });
  const dir = tmp();
  const captures = withCaptures
    ? new Captures({
        dir,
        limits: { keep: 3, maxBytes: 10 << 20, everyMs: 600_000, samples: 2, intervalMs: 250 },
        take: emuTake(backend),
        pace: { kind: 'rounds', advance: (ms) => backend.advanceMs(ms) },
        wallNowMs: () => Date.UTC(2026, 11, 1, 22),
        log: () => {},
      })
    : undefined;
  let now = 0;
  const s = new Sampler({
    backend,
    buildInfo: { version: '0.1.0', backend: 'emu', emulated: true },
    minIntervalMs: 0,
    stallMs: 400,
    nowMs: () => now,
    log: () => {},
    beforeSample: (ms) => backend.advanceMs(ms),
    ...(captures ? { captures } : {}),
  });
  const scrape = async () => {
    now += 250;
    await s.refresh();
    await captures?.quiet();
    return s.metrics.text.metrics();
  };
  return { scrape, captures, dir };
}

describe('export --capture-dir', () => {
  it('captures a stall once and serves the count and the last capture', async () => {
    const { scrape, captures, dir } = sampler(true);
    let text = '';
    for (let i = 0; i < 12; i++) text = await scrape();
    expect(captures?.counts.written).toBe(1);
    const [name] = readdirSync(dir);
    expect(name).toMatch(/^hfi1-sdma-20261201T220000\.000Z-hfi1_0-e0-SD101\.tar\.gz$/);
    expect(text).toContain(`hfi1_sdma_captures_total{dir="${dir}"} 1`);
    expect(text).toContain(`hfi1_sdma_capture_failures_total{dir="${dir}"} 0`);
    expect(text).toMatch(
      new RegExp(
        `hfi1_sdma_last_capture_info\\{dir="${dir}",file="${dir}/${name?.replace(/\./g, '\\.')}",code="SD101",unit="hfi1_0",engine="0"\\} 1`,
      ),
    );
    expect(text).toContain(`hfi1_sdma_last_capture_timestamp_seconds{dir="${dir}"} ${Date.UTC(2026, 11, 1, 22) / 1000}`);
  });

  it('serves no capture series without it', async () => {
    const { scrape } = sampler(false);
    let text = '';
    for (let i = 0; i < 4; i++) text = await scrape();
    expect(text).not.toMatch(/hfi1_sdma_(last_)?capture/);
  });
});
