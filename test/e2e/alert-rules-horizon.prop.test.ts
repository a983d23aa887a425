// The shipped alert rules over hours, not seconds: each scenario of the README's table as an emulated host, rendered
// and read back through src/hw by the exporter at every scrape of a Prometheus scraping every 15 s of virtual time,
// the scrapes turned into promtool's input and the rules evaluated every 15 s (prometheus.yml's intervals). Asserted:
// exactly which alerts go pending or fire, where, and that no other ever does, pending included: a rule that goes
// pending on a healthy host is one that will cry wolf once its `for:` is reached.
//
// HORIZON_MS is the one parameter: how long the exporter is scraped (virtual time; nothing here waits on the wall
// clock). An alert whose `for:` the horizon reaches must have fired; one it does not reach must at least be pending.
// npm test runs three scenarios for HORIZON_MS; `npm run soak` every scenario for an hour.
import { describe, expect, it } from 'vitest';
import type { EmuCliOptions } from '../../src/emu/index.js';
import { hasPromtool } from '../support/promtool.js';
import { type AlertSeen, alertFors, alertsOver, SCRAPE_MS, scrapesOver } from '../support/rules-horizon.js';
import { SOAK } from '../support/runs.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('rules-horizon-');

/** How long Prometheus scrapes each host (virtual ms): an hour under soak; in npm test what a few seconds of CPU buy today. */
const HORIZON_MS = SOAK ? 3_600_000 : 120_000;

/** The exporter starts once the host has run this long; the faults come FAULT_MS after it (virtual ms). */
const START_MS = 1000;
const FAULT_MS = START_MS + 10_000;

interface Expected {
  alertname: string;
  where: Record<string, string>;
  /** Virtual ms after the exporter started by which the alert's condition holds. */
  byMs: number;
  /** False: it may go pending on the way (the evidence is still coming in), and must never fire. */
  fires?: false;
}

interface Scenario {
  what: string;
  opts: Partial<EmuCliOptions>;
  alerts: Expected[];
  /** Run in npm test too (the rest under soak only). */
  ci?: boolean;
}

const at = (ms: number) => `@${ms}`;
const CN5000_HFI2 = { chip: 'jkr', driver: 'hfi2', ports: 2, firstEngine: 8, engines: 8 } as const;
const CN5000_TWO_PORTS = { chip: 'jkr', driver: 'cornelis', ports: 2, engines: 4 } as const;

// Light loads of each workload's shape (`gbps` scales the link, so a hot engine of `mixed` is still offered 111 % of
// its share and every ring of `line-rate` is full): the verdicts are those of the full rate, with less to emulate.
const SCENARIOS: Scenario[] = [
  {
    what: 'a healthy host (mixed: engines 2 and 9 offered 111 %, their rings full)',
    opts: { workload: 'mixed:gbps=0.5' },
    alerts: [],
  },
  {
    what: 'a healthy host at line rate (every ring full and retiring)',
    opts: { workload: 'line-rate:gbps=0.5' },
    alerts: [],
    ci: true,
  },
  {
    what: 'a healthy CN5000 (hfi2, engines 8-15), port 1 unused and port 2 ACTIVE',
    opts: { workload: 'mixed:gbps=0.5', ...CN5000_HFI2, activePorts: [2] },
    alerts: [],
  },
  {
    what: 'the bulk service on (use_bulksvc=Y) under verbs load',
    opts: { workload: 'qp:gbps=0.5', chip: 'jkr', driver: 'cornelis', param: ['use_bulksvc=Y'] },
    alerts: [],
  },
  {
    what: 'a QP lost wake-up on engine 5 (the default map, engine 4 busy)',
    opts: { workload: 'mixed:gbps=0.2', fault: [`lost-wakeup${at(FAULT_MS)}:5`] },
    alerts: [
      { alertname: 'Hfi1SdmaStrandedWaiter', where: { unit: 'hfi1_0', engine: '5' }, byMs: 30_000 },
      // Probable until engine 4, busy, has retired a ring with room: certain from then on.
      { alertname: 'Hfi1SdmaProbablyStrandedWaiter', where: { unit: 'hfi1_0', engine: '5' }, byMs: 0, fires: false },
    ],
    ci: true,
  },
  {
    // A writer's stall lasts 1 s: only a scrape that lands in it sees it (then it takes the samples that confirm it).
    what: "a PSM writer's lost wake-up on an idle one-engine unit, a scrape landing in its 1 s stall",
    opts: { workload: 'psm:gbps=0.2', engines: 1, fault: [`lost-wakeup:psm${at(START_MS + 15_000 - 300)}:0`] },
    alerts: [{ alertname: 'Hfi1SdmaPsmStalls', where: { unit: 'hfi1_0' }, byMs: 30_000 }],
    ci: true,
  },
  {
    what: 'stop-fetch on engine 3',
    opts: { workload: 'mixed:gbps=0.5', engines: 4, fault: [`stop-fetch${at(FAULT_MS)}:3`] },
    alerts: [{ alertname: 'Hfi1SdmaEngineStalled', where: { unit: 'hfi1_0', engine: '3' }, byMs: 60_000 }],
  },
  {
    what: 'halt-stuck on engine 2',
    opts: { workload: 'mixed:gbps=0.5', engines: 4, fault: [`halt-stuck${at(FAULT_MS)}:2`] },
    alerts: [{ alertname: 'Hfi1SdmaEngineHalted', where: { unit: 'hfi1_0', engine: '2' }, byMs: 45_000 }],
  },
  {
    what: 'fabric-stall on port 1',
    opts: { workload: 'mixed:gbps=0.5', engines: 4, fault: [`fabric-stall${at(FAULT_MS)}:1`] },
    alerts: [{ alertname: 'Hfi1SdmaFabricStall', where: { device: 'hfi1_0', port: '1' }, byMs: 60_000 }],
  },
  {
    what: 'link-down on port 2 of a CN5000 (hfi2, engines 8-15) after it was seen ACTIVE, port 1 up',
    opts: { workload: 'mixed:gbps=0.5', ...CN5000_HFI2, fault: [`link-down${at(FAULT_MS)}:2`] },
    alerts: [{ alertname: 'Hfi1SdmaPortDown', where: { unit: 'hfi2_0', port: '2' }, byMs: 30_000 }],
  },
  {
    what: 'link-down on port 2 of a two-port CN5000 (Cornelis hfi1) before it is watched',
    opts: { workload: 'mixed:gbps=0.5', ...CN5000_TWO_PORTS, fault: [`link-down${at(START_MS / 2)}:2`] },
    alerts: [{ alertname: 'Hfi1SdmaPortLost', where: { device: 'hfi1_0', port: '2' }, byMs: 0 }],
  },
  {
    what: 'link-flap on port 2 of a two-port CN5000',
    opts: { workload: 'mixed:gbps=0.5', ...CN5000_TWO_PORTS, fault: [`link-flap${at(FAULT_MS)}:2`] },
    alerts: [{ alertname: 'Hfi1SdmaLinkFlap', where: { device: 'hfi1_0', port: '2' }, byMs: 30_000 }],
  },
  {
    // (Queue 0 sends on VL 0's first engine, engine 0.)
    what: 'ipoib-timeout on engine 0',
    opts: { workload: 'mixed:ipoib=1,gbps=0.5', engines: 4, fault: [`ipoib-timeout${at(FAULT_MS)}:0`] },
    alerts: [{ alertname: 'Hfi1SdmaIpoibQueueStuck', where: { unit: 'hfi1_0', engine: '0' }, byMs: 30_000 }],
  },
  {
    what: 'a device that falls off the bus',
    opts: { workload: 'mixed:gbps=0.5', engines: 4, fault: [`device-gone${at(FAULT_MS)}`] },
    alerts: [{ alertname: 'Hfi1SdmaDeviceGone', where: { unit: 'hfi1_0' }, byMs: 30_000 }],
  },
];

/** npm test's hosts have small rings (each scrape renders and reads every ring whole); the soak's, the driver's 2048. */
const RING: Partial<EmuCliOptions> = SOAK ? {} : { descqCnt: 256 };

const FOR = alertFors();
const key = (a: { alertname: string; where: Record<string, string> }) => `${a.alertname} ${JSON.stringify(a.where)}`;

/** What is wrong with what promtool saw against what the scenario expects at this horizon, or [] when nothing. */
function problems(seen: readonly AlertSeen[], expected: readonly Expected[], horizonMs: number): string[] {
  const out: string[] = [];
  const want = new Map(expected.map((e) => [key(e), e]));
  for (const s of seen)
    if (!want.has(key(s))) out.push(`${s.alertname} ${s.alertstate} at ${JSON.stringify(s.where)}, never expected`);
  for (const e of expected) {
    const states = seen.filter((s) => key(s) === key(e)).map((s) => s.alertstate);
    const forMs = FOR.get(e.alertname);
    if (forMs === undefined) out.push(`${e.alertname} is no alert of the shipped rules`);
    else if (e.fires === false) {
      if (states.includes('firing')) out.push(`${key(e)} fired; it may only go pending on the way`);
    } else if (horizonMs >= e.byMs + forMs + 2 * SCRAPE_MS && !states.includes('firing'))
      out.push(
        `${key(e)} never fired (for: ${forMs / 1000} s, horizon ${horizonMs / 1000} s; seen: ${states.join(',') || 'nothing'})`,
      );
    else if (horizonMs >= e.byMs + SCRAPE_MS && states.length === 0) out.push(`${key(e)} was never even pending`);
  }
  return out;
}

describe.skipIf(!hasPromtool)(
  `the shipped alert rules over ${HORIZON_MS / 60_000} virtual minutes of 15 s scrapes (skipped only when promtool is not installed)`,
  () => {
    for (const s of SCENARIOS.filter((x) => SOAK || x.ci)) {
      it(s.what, { timeout: SOAK ? 3_600_000 : 60_000 }, async () => {
        const scrapes = await scrapesOver(tmp(), { opts: { ...RING, ...s.opts }, startMs: START_MS, horizonMs: HORIZON_MS });
        const seen = alertsOver(tmp(), scrapes);
        expect(problems(seen, s.alerts, HORIZON_MS), JSON.stringify(seen)).toEqual([]);
      });
    }
  },
);
