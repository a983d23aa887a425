// The matrix an operator relies on, through the rendered sysroot and the live reader: for each scenario, health
// (three runs carrying a state), the exporter's series under the shipped rules (promtool) and watch agree with each
// other (the same samples give the same verdicts on every path, the monitor being the one loop) and say what the
// scenario is: healthy hosts nothing, a lost wake-up a certain strand, a stop-fetch a stall, a gone device gone; a
// stall the port explains is the fabric's or the link's, by port, never the host's; an IPoIB queue the watchdog timed
// out is stuck on its engine; the bulk service's idle engines are normal.
// Short virtual spans here; the soak runs every flavour and workload at length.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EmuCliOptions } from '../../src/emu/index.js';
import { Sampler } from '../../src/export/sampler.js';
import { openHwBackend } from '../../src/hw/index.js';
import { runCli } from '../support/cli.js';
import { hasPromtool, promtoolAlertsEach } from '../support/promtool.js';
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
  /** Time between the rounds of watch and the exporter (STEP_MS when absent): a halt needs 2 s of them. */
  stepMs?: number;
  /** health's exit status by the third run, and a finding code its status line must name (or none). */
  health: number;
  code?: string;
  /** The alerts the exporter's series fire (name and engine or unit), and what watch shows. */
  alerts: Record<string, string>[];
  verdict?: { engine: number; is: RegExp };
  /** The cause watch gives the stalled engines (every one), and the port it names. */
  cause?: { is: 'host' | 'fabric' | 'link'; port: number };
  /** What neither health nor watch may say. */
  mustNot?: RegExp;
  /** A finding code (besides the first) health must also give. */
  alsoCode?: string;
  /** The port's XmitWait rises over the exporter's rounds (a busy port waits for credits now and then). */
  xmitWaitRises?: boolean;
}

interface WatchedEngine {
  verdict: string;
  strandedWaiters: number | null;
  cause: { cause: string; port: number | null } | null;
}

/** Engine → verdict of the last round of `watch --json`. */
function watchVerdicts(ndjson: string): Map<number, WatchedEngine> {
  const lines = ndjson
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const last = lines.slice(-lines.filter((l) => l.t === lines.at(-1).t).length);
  return new Map(last.map((l) => [l.engine, { verdict: l.verdict, strandedWaiters: l.strandedWaiters, cause: l.cause }]));
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

/**
 * watch's NDJSON, and what the exporter served at each of its rounds: one rendered tree, read by watch and by
 * the exporter's sampler (each through a live backend of its own) at the same instants.
 */
async function watchedAndExported(s: Scenario): Promise<{ ndjson: string; texts: string[] }> {
  const root = tmp();
  const host = await renderedHost(root, { ...RING, ...s.opts }, s.atMs);
  const own = await openHwBackend({ sysroot: root, clock: { nowMs: () => host.emu.nowMs } });
  const sampler = new Sampler({
    backend: own,
    buildInfo: { version: '0.0.0', backend: 'hw' },
    minIntervalMs: 0,
    stallMs: 400,
    strandMs: 200,
    nowMs: () => host.emu.nowMs,
    log: () => {},
  });
  const texts: string[] = [];
  const serve = async () => {
    await sampler.refresh();
    texts.push(await sampler.metrics.text.metrics());
  };
  await serve();
  const advance = host.advanceMs;
  host.advanceMs = async (ms: number) => {
    await advance(ms);
    if (texts.length < ROUNDS) await serve();
  };
  try {
    const r = await runCli(
      ['watch', '--json', '--count', String(ROUNDS), '--interval-ms', String(s.stepMs ?? STEP_MS), '--stall-ms', '400'],
      {},
      false,
      '',
      host,
    );
    // watch takes its last sample without moving time on: the exporter's rounds are the same instants.
    while (texts.length < ROUNDS) await host.advanceMs(s.stepMs ?? STEP_MS);
    return { ndjson: r.stdout, texts };
  } finally {
    await own.close();
  }
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
    doc: JSON.parse(r.stdout) as {
      status: string;
      findings: { code: string; kind: string; engine: number | null; port?: number | null; text: string }[];
    },
  };
}

const SCENARIOS: Scenario[] = [
  { what: 'a healthy host (mixed)', opts: { workload: 'mixed:gbps=10' }, atMs: 100, health: 0, alerts: [] },
  {
    what: 'a healthy host at line rate (every ring full and retiring, XmitWait rising): no stall, no fabric',
    // A 25 Gb/s link: the rings as full as at 100 Gb/s, a quarter of the packets to emulate.
    opts: { workload: 'line-rate:gbps=25', engines: 4 },
    atMs: 100,
    health: 0,
    alerts: [],
    xmitWaitRises: true,
  },
  {
    what: 'a healthy CN5000 (hfi2, engines 8-15) with port 1 unused and port 2 ACTIVE',
    opts: { workload: 'mixed:gbps=10', chip: 'jkr', driver: 'hfi2', ports: 2, activePorts: [2], firstEngine: 8, engines: 8 },
    atMs: 100,
    health: 0,
    alerts: [],
  },
  {
    // A host does not say which engine a PSM writer waits on (unless its trace events are on), so a stall is judged
    // against the whole unit: here a one-engine unit, idle once the fault ends the engine's other senders.
    what: 'a lost wake-up of a PSM writer on an idle unit (it gives up after 1 s and retries: a stall, not a hang)',
    opts: { workload: 'psm:gbps=10', engines: 1, fault: ['lost-wakeup:psm@300:0'] },
    atMs: 400,
    health: 1,
    code: 'SD203',
    alerts: [{ alertname: 'Hfi1SdmaPsmStalls', severity: 'warning', unit: 'hfi1_0' }],
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
    what: 'stop-fetch on engine 3: the host, never the fabric',
    opts: { workload: 'mixed:gbps=10', engines: 4, fault: ['stop-fetch@100:3'] },
    atMs: 200,
    health: 2,
    code: 'SD101',
    alerts: [{ alertname: 'Hfi1SdmaEngineStalled', engine: '3', severity: 'critical', unit: 'hfi1_0' }],
    verdict: { engine: 3, is: /^stalled$/ },
    cause: { is: 'host', port: 1 },
    mustNot: /fabric|SD109|SD110/i,
  },
  {
    what: 'an engine that halts and stays halted (halt-stuck on engine 2)',
    opts: { workload: 'mixed:gbps=10', engines: 4, fault: ['halt-stuck@100:2'] },
    atMs: 200,
    stepMs: 600,
    health: 2,
    code: 'SD102',
    alerts: [
      {
        alertname: 'Hfi1SdmaEngineHalted',
        engine: '2',
        reason: 'status-halted',
        severity: 'critical',
        unit: 'hfi1_0',
        verdict: 'halted',
      },
    ],
    verdict: { engine: 2, is: /^halted$/ },
  },
  {
    what: 'port 2 of a CN5000 (hfi2, engines 8-15) goes down while port 1 stays up',
    opts: {
      workload: 'mixed:gbps=10',
      chip: 'jkr',
      driver: 'hfi2',
      ports: 2,
      firstEngine: 8,
      engines: 8,
      fault: ['link-down@700:2'],
    },
    atMs: 100,
    health: 1,
    code: 'SD306',
    alerts: [{ alertname: 'Hfi1SdmaPortDown', port: '2', severity: 'warning', unit: 'hfi2_0' }],
  },
  {
    what: 'a device that fell off the bus',
    opts: { workload: 'mixed:gbps=10', engines: 4, fault: ['device-gone@100'] },
    atMs: 200,
    health: 2,
    code: 'SD301',
    alerts: [{ alertname: 'Hfi1SdmaDeviceGone', severity: 'critical', unit: 'hfi1_0' }],
  },
  {
    what: 'fabric-stall on port 1: stalled by the fabric, XmitWait rising, never chip-not-fetching',
    opts: { workload: 'mixed:gbps=10', engines: 4, fault: ['fabric-stall@100:1'] },
    atMs: 200,
    health: 2,
    code: 'SD109',
    alerts: [{ alertname: 'Hfi1SdmaFabricStall', device: 'hfi1_0', port: '1', cause: 'fabric', severity: 'critical' }],
    verdict: { engine: 0, is: /^stalled$/ },
    cause: { is: 'fabric', port: 1 },
    mustNot: /chip-not-fetching|SD101/,
  },
  {
    what: 'link-down on port 2 of a two-port CN5000: the port lost its link, naming port 2, no host stall',
    opts: { workload: 'mixed:gbps=2', chip: 'jkr', driver: 'cornelis', ports: 2, engines: 4, fault: ['link-down@100:2'] },
    atMs: 200,
    health: 1,
    code: 'SD309',
    alerts: [{ alertname: 'Hfi1SdmaPortLost', device: 'hfi1_0', port: '2', severity: 'warning' }],
    mustNot: /SD101|chip-not-fetching|SD109/,
  },
  {
    what: 'link-flap on port 2 of a two-port CN5000: down and back, naming port 2, no host stall',
    opts: { workload: 'mixed:gbps=2', chip: 'jkr', driver: 'cornelis', ports: 2, engines: 4, fault: ['link-flap@500:2'] },
    atMs: 200,
    health: 1,
    code: 'SD307',
    alerts: [{ alertname: 'Hfi1SdmaLinkFlap', device: 'hfi1_0', port: '2', severity: 'warning' }],
    mustNot: /SD101|chip-not-fetching|SD109/,
  },
  {
    what: 'ipoib-timeout on engine 3: the IPoIB queue stuck on engine 3, IPoIB visible',
    opts: { workload: 'mixed:ipoib=1,sl=3,gbps=2', engines: 4, fault: ['ipoib-timeout@100:3'] }, // SL 3: VL 3's engine 3
    atMs: 2100,
    health: 2,
    code: 'SD207',
    alerts: [{ alertname: 'Hfi1SdmaIpoibQueueStuck', engine: '3', severity: 'critical', unit: 'hfi1_0' }],
    mustNot: /not visible|cannot be seen/,
  },
  {
    what: 'the bulk service on (use_bulksvc=Y) under verbs load: its engines idle, said as normal',
    opts: { workload: 'line-rate:gbps=25', chip: 'jkr', driver: 'cornelis', param: ['use_bulksvc=Y'] },
    atMs: 100,
    health: 0,
    code: 'SD403',
    alerts: [],
    verdict: { engine: 15, is: /^idle$/ },
    mustNot: /stalled|stranded/,
  },
];

/** What each scenario's exporter served, round by round: the shipped rules' input, run once for every scenario. */
const served = new Map<Scenario, string[]>();

describe('the matrix: health, the exporter with the shipped rules, and watch agree and say what happened', {
  shuffle: false,
}, () => {
  for (const s of SCENARIOS) {
    it(s.what, async () => {
      const [{ texts, ndjson }, h] = await Promise.all([watchedAndExported(s), checked(s)]);
      served.set(s, texts);
      const text = texts.at(-1) as string;
      // health, by the third run.
      expect(h.last.code, h.last.stdout).toBe(s.health);
      if (s.code) expect(h.doc.findings[0]?.code, h.last.stdout).toBe(s.code);
      // Notes of what cannot be seen (a kind of waiter, the reduced view, a busy unit's PSM writers whose engine
      // nothing names) are no findings about the host.
      else
        expect(
          h.doc.findings.filter((f) => f.kind !== 'invisible' && f.kind !== 'reduced' && f.kind !== 'psmUnjudged'),
          h.last.stdout,
        ).toEqual([]);
      if (s.alsoCode)
        expect(
          h.doc.findings.map((f) => f.code),
          h.last.stdout,
        ).toContain(s.alsoCode);
      if (s.mustNot) {
        for (const f of h.doc.findings) expect(`${f.code} ${f.text}`).not.toMatch(s.mustNot);
        for (const l of ndjson.trim().split('\n')) {
          const e = JSON.parse(l);
          expect(`${e.verdict} ${e.reason} ${e.cause?.why ?? ''}`).not.toMatch(s.mustNot);
        }
      }
      if (s.code === 'SD301') return;
      if (s.xmitWaitRises) {
        const wait = (t: string) => Number(/^hfi1_sdma_port_xmit_wait_total\{device="hfi1_0",port="1"\} (\d+)$/m.exec(t)?.[1]);
        expect(wait(text)).toBeGreaterThan(wait(texts[0] as string));
      }
      // The same samples, the same verdicts: watch's last round is what the exporter serves.
      const w = watchVerdicts(ndjson);
      const x = exportedVerdicts(text);
      expect(new Map([...w].map(([e, v]) => [e, v.verdict]))).toEqual(x.verdicts);
      expect([...w].filter(([, v]) => (v.strandedWaiters ?? 0) > 0).map(([e]) => e)).toEqual(x.stranded);
      const stalledByWatch = [...w].filter(([, v]) => v.verdict === 'stalled').map(([e]) => e);
      if (s.cause?.is === 'fabric' || s.cause?.is === 'link') {
        // Said once for the port, with every engine it stalled.
        const byPort = h.doc.findings.filter((f) => f.code === s.code);
        expect(byPort.map((f) => f.port)).toEqual([s.cause.port]);
        expect(h.doc.findings.filter((f) => f.kind === 'stalled')).toEqual([]);
      } else {
        const stalledByHealth = h.doc.findings.filter((f) => f.kind === 'stalled').map((f) => f.engine);
        // health's last run saw later samples; a stall is the same stall in both.
        expect(stalledByHealth).toEqual(stalledByWatch);
      }
      if (s.cause) {
        expect(stalledByWatch.length).toBeGreaterThan(0);
        for (const e of stalledByWatch) expect(w.get(e)?.cause).toMatchObject({ cause: s.cause.is, port: s.cause.port });
      }
      if (s.verdict) expect(w.get(s.verdict.engine)?.verdict).toMatch(s.verdict.is);
    });
  }

  // One promtool run for every scenario (a test group each): promtool's start and the rules' load are most of a run.
  it.skipIf(!hasPromtool)(
    "the shipped rules fire, over each scenario's rounds, nothing on a healthy host and on a faulted one only what the fault is (skipped only when promtool is not installed)",
    () => {
      expect(
        SCENARIOS.filter((s) => !served.has(s)).map((s) => s.what),
        'scenarios whose exporter served nothing',
      ).toEqual([]);
      const verdicts = promtoolAlertsEach(
        tmp(),
        SCENARIOS.map((s) => ({ text: served.get(s) as string[], alerts: s.alerts })),
      );
      expect(verdicts.flatMap((v, i) => (v.ok ? [] : [`${SCENARIOS[i]?.what}:\n${v.out}`])).join('\n')).toBe('');
    },
  );
});
