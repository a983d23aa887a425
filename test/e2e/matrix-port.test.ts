// The matrix an operator relies on (see matrix.test.ts), for what lies beyond one engine: a stall the port explains is
// the fabric's or the link's, by port, never the host's; a port down or flapping is named by port; a gone device is
// gone; an IPoIB queue the watchdog timed out is stuck on its engine; the bulk service's idle engines are normal.
// Health (three runs carrying a state), the exporter's series under the shipped rules (promtool) and watch agree with
// each other and say what the scenario is. Short virtual spans here; the soak runs every flavour and workload at length.
import { tempDirs } from '../support/temp.js';
import { describeMatrix, type Scenario } from './matrix-support.js';

const tmp = tempDirs('matrix-port-');

// Light loads (`gbps` scales the link, so each workload keeps its shape: the hot engines of `mixed` are still offered
// more than their share and their rings as full, and every ring of `line-rate` is full): the verdicts of a faster
// link, with less to emulate.
const SCENARIOS: Scenario[] = [
  {
    what: 'port 2 of a CN5000 (hfi2, engines 8-15) goes down while port 1 stays up',
    opts: {
      workload: 'mixed:gbps=2',
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
    opts: { workload: 'mixed:gbps=2', engines: 4, fault: ['device-gone@100'] },
    atMs: 200,
    health: 2,
    code: 'SD301',
    alerts: [{ alertname: 'Hfi1SdmaDeviceGone', severity: 'critical', unit: 'hfi1_0' }],
  },
  {
    what: 'fabric-stall on port 1: stalled by the fabric, XmitWait rising, never chip-not-fetching',
    opts: { workload: 'mixed:gbps=2', engines: 4, fault: ['fabric-stall@100:1'] },
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
    opts: { workload: 'line-rate:gbps=5', chip: 'jkr', driver: 'cornelis', param: ['use_bulksvc=Y'] },
    atMs: 100,
    health: 0,
    code: 'SD403',
    alerts: [],
    verdict: { engine: 15, is: /^idle$/ },
    mustNot: /stalled|stranded/,
  },
];

describeMatrix(
  'the matrix, ports, the fabric, the device, IPoIB and the bulk service: health, the exporter with the shipped rules, and watch agree and say what happened',
  SCENARIOS,
  tmp,
);
