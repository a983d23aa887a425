// The matrix an operator relies on, through the rendered sysroot and the live reader: for each scenario, health
// (three runs carrying a state), the exporter's series under the shipped rules (promtool) and watch agree with each
// other (the same samples give the same verdicts on every path, the monitor being the one loop) and say what the
// scenario is. Here the healthy hosts (nothing) and the faults of an engine or a sender: a lost wake-up a certain
// strand, a stop-fetch a stall of the host, a halt a halt; matrix-port.test.ts holds the ports, the fabric, the
// device, IPoIB and the bulk service (two files, so that neither holds a worker long).
// Short virtual spans here; the soak runs every flavour and workload at length.
import { tempDirs } from '../support/temp.js';
import { describeMatrix, type Scenario } from './matrix-support.js';

const tmp = tempDirs('matrix-');

// Light loads (`gbps` scales the link, so each workload keeps its shape: the hot engines of `mixed` are still offered
// more than their share and their rings as full, and every ring of `line-rate` is full): the verdicts of a faster
// link, with less to emulate.
const SCENARIOS: Scenario[] = [
  { what: 'a healthy host (mixed)', opts: { workload: 'mixed:gbps=2' }, atMs: 100, health: 0, alerts: [] },
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
    opts: { workload: 'mixed:gbps=2', chip: 'jkr', driver: 'hfi2', ports: 2, activePorts: [2], firstEngine: 8, engines: 8 },
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
    opts: { workload: 'mixed:gbps=2', fault: ['lost-wakeup@300:5'] },
    atMs: 400,
    health: 2,
    code: 'SD201',
    alerts: [{ alertname: 'Hfi1SdmaStrandedWaiter', engine: '5', severity: 'critical', unit: 'hfi1_0' }],
    verdict: { engine: 5, is: /^(idle|unknown)$/ },
  },
  {
    what: 'stop-fetch on engine 3: the host, never the fabric',
    opts: { workload: 'mixed:gbps=2', engines: 4, fault: ['stop-fetch@100:3'] },
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
    opts: { workload: 'mixed:gbps=2', engines: 4, fault: ['halt-stuck@100:2'] },
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
];

describeMatrix(
  'the matrix, healthy hosts and faults of an engine or a sender: health, the exporter with the shipped rules, and watch agree and say what happened',
  SCENARIOS,
  tmp,
);
