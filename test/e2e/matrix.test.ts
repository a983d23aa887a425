// The matrix an operator relies on, through the rendered sysroot and the live reader: for each scenario, health
// (three runs carrying a state), the exporter's series under the shipped rules (promtool) and watch agree with each
// other (the same samples give the same verdicts on every path, the monitor being the one loop) and say what the
// scenario is: healthy hosts nothing, a lost wake-up a certain strand, a stop-fetch a stall, a gone device gone.
// Short virtual spans here; the soak runs every flavour and workload at length.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EmuCliOptions } from '../../src/emu/index.js';
import { Sampler } from '../../src/export/sampler.js';
import { runCli } from '../support/cli.js';
import { hasPromtool, promtoolAlerts } from '../support/promtool.js';
import { renderedHost } from '../support/rendered-host.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('matrix-');

/** Rounds of every path: 5 rounds 200 ms apart (health's five samples at --stall-ms 400). */
const ROUNDS = 5;
const STEP_MS = 200;
const HEALTH = ['--stall-ms', '400', '--strand-ms', '200'];

interface Scenario {
  what: string;
  opts: Partial<EmuCliOptions>;
  /** Virtual time of the first round (past the fault). */
  atMs: number;
  /** health's exit status by the third run, and a finding code its status line must name (or none). */
  health: number;
  code?: string;
  /** The alerts the exporter's series fire (name and engine or unit), and what watch shows. */
  alerts: Record<string, string>[];
  verdict?: { engine: number; is: RegExp };
}

/** Engine → verdict of the last round of `watch --json`. */
function watchVerdicts(ndjson: string): Map<number, { verdict: string; strandedWaiters: number | null }> {
  const lines = ndjson
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const last = lines.slice(-lines.filter((l) => l.t === lines.at(-1).t).length);
  return new Map(last.map((l) => [l.engine, { verdict: l.verdict, strandedWaiters: l.strandedWaiters }]));
}

/** Engine → verdict as the exporter serves it, and the engines it serves a stranded waiter on. */
function exportedVerdicts(text: string) {
  const verdicts = new Map<number, string>();
  for (const m of text.matchAll(/^hfi1_sdma_verdict\{unit="[^"]+",engine="(\d+)",verdict="([^"]+)",reason="[^"]+"\} 1$/gm)) {
    verdicts.set(Number(m[1]), m[2] as string);
  }
  const stranded = [...text.matchAll(/^hfi1_sdma_stranded_waiters\{unit="[^"]+",engine="(\d+)"\} ([1-9]\d*)$/gm)].map((m) =>
    Number(m[1]),
  );
  return { verdicts, stranded };
}

/** Small rings: the matrix is about verdicts, and every path renders and reads the whole ring each round. */
const RING = { descqCnt: 256 };

async function exported(s: Scenario): Promise<string> {
  const host = await renderedHost(tmp(), { ...RING, ...s.opts }, s.atMs);
  const sampler = new Sampler({
    backend: host,
    buildInfo: { version: '0.0.0', backend: 'hw' },
    minIntervalMs: 0,
    stallMs: 400,
    strandMs: 200,
    nowMs: () => host.emu.nowMs,
    log: () => {},
  });
  for (let i = 0; i < ROUNDS; i++) {
    if (i > 0) await host.advanceMs(STEP_MS);
    await sampler.refresh();
  }
  return sampler.metrics.text.metrics();
}

async function watched(s: Scenario): Promise<string> {
  const host = await renderedHost(tmp(), { ...RING, ...s.opts }, s.atMs);
  const r = await runCli(
    ['watch', '--json', '--count', String(ROUNDS), '--interval-ms', String(STEP_MS), '--stall-ms', '400'],
    {},
    false,
    '',
    host,
  );
  return r.stdout;
}

/** Three health runs carrying a state, 500 ms apart; the last run's result. */
async function checked(s: Scenario) {
  const host = await renderedHost(tmp(), { ...RING, ...s.opts }, s.atMs);
  const state = join(tmp(), 'health.state');
  const close = host.close;
  host.close = async () => {};
  let r = await runCli(['health', ...HEALTH, '--state', state, '--json'], {}, false, '', host);
  const first = r;
  for (let i = 0; i < 2; i++) {
    await host.advanceMs(500);
    r = await runCli(['health', ...HEALTH, '--state', state, '--json'], {}, false, '', host);
  }
  await close();
  return {
    first,
    last: r,
    doc: JSON.parse(r.stdout) as { status: string; findings: { code: string; kind: string; engine: number | null }[] },
  };
}

const SCENARIOS: Scenario[] = [
  { what: 'a healthy host (mixed)', opts: { workload: 'mixed:gbps=10' }, atMs: 100, health: 0, alerts: [] },
  {
    what: 'a healthy host at line rate (every ring full and retiring)',
    opts: { workload: 'line-rate', engines: 4 },
    atMs: 100,
    health: 0,
    alerts: [],
  },
  {
    what: 'a lost wake-up on engine 5, the default map (two engines per VL) with engine 4 busy',
    opts: { workload: 'mixed:gbps=10', fault: ['lost-wakeup@300:5'] },
    atMs: 400,
    health: 2,
    code: 'SD201',
    alerts: [{ alertname: 'Hfi1SdmaStrandedWaiter', engine: '5', severity: 'critical', unit: 'hfi1_0' }],
    verdict: { engine: 5, is: /^(idle|unknown)$/ },
  },
  {
    what: 'stop-fetch on engine 3',
    opts: { workload: 'mixed:gbps=10', engines: 4, fault: ['stop-fetch@100:3'] },
    atMs: 200,
    health: 2,
    code: 'SD101',
    alerts: [{ alertname: 'Hfi1SdmaEngineStalled', engine: '3', severity: 'critical', unit: 'hfi1_0' }],
    verdict: { engine: 3, is: /^stalled$/ },
  },
  {
    what: 'a device that fell off the bus',
    opts: { workload: 'mixed:gbps=10', engines: 4, fault: ['device-gone@100'] },
    atMs: 200,
    health: 2,
    code: 'SD301',
    alerts: [{ alertname: 'Hfi1SdmaDeviceGone', severity: 'critical', unit: 'hfi1_0' }],
  },
];

describe('the matrix: health, the exporter with the shipped rules, and watch agree and say what happened', () => {
  for (const s of SCENARIOS) {
    it(s.what, async () => {
      const [text, ndjson, h] = await Promise.all([exported(s), watched(s), checked(s)]);
      // health, by the third run.
      expect(h.last.code, h.last.stdout).toBe(s.health);
      if (s.code) expect(h.doc.findings[0]?.code, h.last.stdout).toBe(s.code);
      else
        expect(
          h.doc.findings.filter((f) => f.kind !== 'invisible' && f.kind !== 'reduced'),
          h.last.stdout,
        ).toEqual([]);
      if (s.code === 'SD301') return;
      // The same samples, the same verdicts: watch's last round is what the exporter serves.
      const w = watchVerdicts(ndjson);
      const x = exportedVerdicts(text);
      expect(new Map([...w].map(([e, v]) => [e, v.verdict]))).toEqual(x.verdicts);
      expect([...w].filter(([, v]) => (v.strandedWaiters ?? 0) > 0).map(([e]) => e)).toEqual(x.stranded);
      const stalledByHealth = h.doc.findings.filter((f) => f.kind === 'stalled').map((f) => f.engine);
      const stalledByWatch = [...w].filter(([, v]) => v.verdict === 'stalled').map(([e]) => e);
      // health's last run saw later samples; a stall is the same stall in both.
      expect(stalledByHealth).toEqual(stalledByWatch);
      if (s.verdict) expect(w.get(s.verdict.engine)?.verdict).toMatch(s.verdict.is);
      // Nothing on a healthy host, and on a faulted one only what the fault is.
      if (hasPromtool) {
        const r = promtoolAlerts(tmp(), text, s.alerts);
        expect(r.ok, r.out).toBe(true);
      }
    });
  }
});
