// `npm run dashboard`: write deploy/grafana/hfi1-sdma.json, the Grafana dashboard of the exporter's series, from
// the panel list below (its layout computed, so a panel added here lands in its row). The dashboard sits beside
// the alert rules in deploy/prometheus/, as a monitoring mixin's dashboards sit beside its alerts: each panel
// that an alert watches names that alert and the finding code `health` gives for the same condition.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the dashboard lives in the repository. */
export const DASHBOARD_FILE = 'deploy/grafana/hfi1-sdma.json';

/** The selectors every query starts from: the dashboard's variables. */
const JOB = 'job=~"$job"';
const UNIT = `${JOB},instance=~"$instance",unit=~"$unit"`;
const ENGINE = `${UNIT},engine=~"$engine"`;

/** One query of a panel. */
interface Query {
  expr: string;
  legend?: string;
  /** A table of the values now, not a series over time. */
  instant?: boolean;
}

/** One panel, before layout. */
interface PanelSpec {
  title: string;
  type: 'timeseries' | 'stat' | 'table' | 'state-timeline';
  description: string;
  queries: Query[];
  /** Width in grid columns (24 across) and height in rows. */
  w: number;
  h: number;
  unit?: string;
  min?: number;
  max?: number;
  mappings?: { value: string; text: string; color: string }[];
  /** Thresholds of a stat: the colour from each value up. */
  steps?: { value: number | null; color: string }[];
}

/** The verdicts as numbers for the timeline (the classifier's verdicts, worst last). */
const VERDICT_CODES = [
  ['idle', '#8e9aa6'],
  ['progressing', 'green'],
  ['backpressure', 'orange'],
  ['unknown', 'blue'],
  ['stalled', 'red'],
  ['halted', 'purple'],
] as const;

const verdictExpr = `max by (instance, unit, engine) (${VERDICT_CODES.map(
  ([v], i) => `hfi1_sdma_verdict{${ENGINE},verdict="${v}"} * ${i}`,
).join(' or ')})`;

const ALERT = (name: string, code: string) => `The alert ${name} (finding ${code} of 'hfi1-sdma health') fires on this.`;

/** A count that is green at 0 and red from 1 (a quarter of a row). */
function countStat(title: string, description: string, expr: string): PanelSpec {
  return {
    title,
    type: 'stat',
    description,
    queries: [{ expr }],
    w: 6,
    h: 4,
    steps: [
      { value: null, color: 'green' },
      { value: 1, color: 'red' },
    ],
  };
}

/** The rows of the dashboard, each with its panels. */
export const ROWS: { title: string; panels: PanelSpec[] }[] = [
  {
    title: 'Overview',
    panels: [
      countStat(
        'Engines stalled',
        `Engines with work in flight and no head movement, confirmed by two samples. ${ALERT('Hfi1SdmaEngineStalled', 'SD101')}`,
        `sum(hfi1_sdma_stalled{${ENGINE}})`,
      ),
      countStat(
        'Senders stranded',
        `Senders asleep on a running, empty, quiet engine: a lost wake-up. ${ALERT('Hfi1SdmaStrandedWaiter', 'SD201')}`,
        `sum(hfi1_sdma_stranded_waiters{${ENGINE}})`,
      ),
      {
        title: 'Units read',
        type: 'stat',
        description: 'Units read this round, of those the exporter knows (a unit that failed, blocked or is gone is not read).',
        queries: [
          { expr: `sum(hfi1_sdma_up{${UNIT}})`, legend: 'read' },
          { expr: `count(hfi1_sdma_up{${UNIT}})`, legend: 'known' },
        ],
        w: 6,
        h: 4,
      },
      countStat(
        'Devices gone',
        `Units whose registers read all-ones, or that vanished. ${ALERT('Hfi1SdmaDeviceGone', 'SD301')}`,
        `sum(hfi1_sdma_device_gone{${UNIT}})`,
      ),
      {
        title: 'hfi1-sdma alerts',
        type: 'table',
        description: 'The alerts of deploy/prometheus/hfi1-sdma.rules.yml now pending or firing for these hosts.',
        queries: [{ expr: 'ALERTS{alertname=~"Hfi1Sdma.*",job=~"$job",instance=~"$instance"}', instant: true }],
        w: 24,
        h: 5,
      },
    ],
  },
  {
    // On the recording rules of hfi1-sdma.recording.yml: what a global Prometheus federates from the sites.
    title: 'Fleet',
    panels: [
      {
        title: 'Hosts answering',
        type: 'stat',
        description:
          'Hosts whose exporter Prometheus scraped (job:hfi1_sdma_hosts:count, a recording rule of hfi1-sdma.recording.yml, which a global Prometheus federates).',
        queries: [{ expr: `sum(job:hfi1_sdma_hosts:count{${JOB}})` }],
        w: 6,
        h: 4,
      },
      countStat(
        'Hosts with stranded senders',
        `Hosts with a sender stranded by a lost wake-up (job:hfi1_sdma_hosts_stranded:count). ${ALERT('Hfi1SdmaStrandedWaiter', 'SD201')}`,
        `sum(job:hfi1_sdma_hosts_stranded:count{${JOB}})`,
      ),
      countStat(
        'Hosts with stalled engines',
        `Hosts with an engine stalled, whatever the cause (job:hfi1_sdma_hosts_stalled:count). ${ALERT('Hfi1SdmaEngineStalled', 'SD101')}`,
        `sum(job:hfi1_sdma_hosts_stalled:count{${JOB}})`,
      ),
      countStat(
        'Hosts stalled by the fabric',
        `Hosts whose engines a port's far end stalls by withholding credits: the fabric's, not the host's (job:hfi1_sdma_hosts_fabric_stalled:count). ${ALERT('Hfi1SdmaFabricStall', 'SD109')}`,
        `sum(job:hfi1_sdma_hosts_fabric_stalled:count{${JOB}})`,
      ),
      {
        title: 'Engines by verdict, fleet',
        type: 'timeseries',
        description: 'Engines of every host by verdict (job:hfi1_sdma_engines:count_by_verdict).',
        queries: [{ expr: `sum by (verdict) (job:hfi1_sdma_engines:count_by_verdict{${JOB}})`, legend: '{{verdict}}' }],
        w: 8,
        h: 7,
        min: 0,
      },
      {
        title: 'Stalled engines by cause, fleet',
        type: 'timeseries',
        description:
          'Stalled engines of every host by the cause their port shows: host, fabric (no credits) or link (job:hfi1_sdma_port_stalled_engines:sum_by_cause).',
        queries: [{ expr: `sum by (cause) (job:hfi1_sdma_port_stalled_engines:sum_by_cause{${JOB}})`, legend: '{{cause}}' }],
        w: 8,
        h: 7,
        min: 0,
      },
      {
        title: 'Hosts now',
        type: 'table',
        description:
          'Each host: senders stranded and engines stalled now (instance:hfi1_sdma_stranded_waiters:sum, instance:hfi1_sdma_stalled_engines:sum); sort by a column to find the sick.',
        queries: [
          { expr: `instance:hfi1_sdma_stranded_waiters:sum{${JOB},instance=~"$instance"}`, legend: 'stranded', instant: true },
          { expr: `instance:hfi1_sdma_stalled_engines:sum{${JOB},instance=~"$instance"}`, legend: 'stalled', instant: true },
        ],
        w: 8,
        h: 7,
      },
    ],
  },
  {
    title: 'Verdicts, stalls and strands',
    panels: [
      {
        title: 'Verdict per engine',
        type: 'state-timeline',
        description:
          "The monitor's verdict of each engine over time, as watch and health give it. Stalled and halted engines need a look; unknown is a verdict not yet confirmed.",
        queries: [{ expr: verdictExpr, legend: '{{instance}} {{unit}}/{{engine}}' }],
        w: 24,
        h: 8,
        mappings: VERDICT_CODES.map(([v, color], i) => ({ value: String(i), text: v, color })),
      },
      {
        title: 'Stalled',
        type: 'timeseries',
        description: `1 while the engine is stalled, 0 otherwise; absent while its verdict is unknown. ${ALERT('Hfi1SdmaEngineStalled', 'SD101')}`,
        queries: [{ expr: `hfi1_sdma_stalled{${ENGINE}}`, legend: '{{instance}} {{unit}}/{{engine}}' }],
        w: 8,
        h: 7,
        min: 0,
        max: 1,
      },
      {
        title: 'Stranded senders',
        type: 'timeseries',
        description: `Senders certainly stranded on the engine, and probably stranded (another engine of its VL was busy and short of room). ${ALERT('Hfi1SdmaStrandedWaiter', 'SD201')} Hfi1SdmaProbablyStrandedWaiter (SD202) watches the second.`,
        queries: [
          { expr: `hfi1_sdma_stranded_waiters{${ENGINE}}`, legend: '{{instance}} {{unit}}/{{engine}} stranded' },
          { expr: `hfi1_sdma_probably_stranded_waiters{${ENGINE}}`, legend: '{{instance}} {{unit}}/{{engine}} probably' },
        ],
        w: 8,
        h: 7,
        min: 0,
      },
      {
        title: 'Longest stall',
        type: 'timeseries',
        description: 'The longest stall of each engine since the exporter started, and stalls detected per interval.',
        queries: [
          { expr: `hfi1_sdma_longest_stall_seconds{${ENGINE}}`, legend: '{{instance}} {{unit}}/{{engine}} longest' },
          {
            expr: `increase(hfi1_sdma_stalls_total{${ENGINE}}[$__rate_interval])`,
            legend: '{{instance}} {{unit}}/{{engine}} stalls',
          },
        ],
        w: 8,
        h: 7,
        unit: 's',
        min: 0,
      },
      {
        title: 'Verdicts and states now',
        type: 'table',
        description: "Each engine's verdict with its reason, and its state name, now.",
        queries: [
          { expr: `hfi1_sdma_verdict{${ENGINE}}`, instant: true },
          { expr: `hfi1_sdma_engine_state{${ENGINE}}`, instant: true },
        ],
        w: 24,
        h: 7,
      },
    ],
  },
  {
    title: 'Rings',
    panels: [
      {
        title: 'Ring occupancy',
        type: 'timeseries',
        description:
          'Descriptors in flight as a share of the ring (descq_cnt): a ring near full with descriptors retiring is a busy link, not a fault.',
        queries: [
          {
            expr: `hfi1_sdma_in_flight_descriptors{${ENGINE}} / on(job, instance, unit) group_left hfi1_sdma_ring_size_descriptors{${UNIT}}`,
            legend: '{{instance}} {{unit}}/{{engine}}',
          },
        ],
        w: 12,
        h: 8,
        unit: 'percentunit',
        min: 0,
        max: 1,
      },
      {
        title: 'Descriptors retired',
        type: 'timeseries',
        description:
          "Descriptors retired per second: the rate of the kernel's descq_head (a clean-up resets it, which reads as a counter reset).",
        queries: [
          {
            expr: `rate(hfi1_sdma_descriptors_retired_total{${ENGINE}}[$__rate_interval])`,
            legend: '{{instance}} {{unit}}/{{engine}}',
          },
        ],
        w: 12,
        h: 8,
        unit: 'ops',
        min: 0,
      },
      {
        title: 'Ring full (DQF)',
        type: 'timeseries',
        description:
          "Submissions per second that found the ring full (the kernel's descq_full_count). A saturated link fills rings too, so no alert fires on it (finding SD106 is a note; health -w full=N counts it).",
        queries: [
          { expr: `rate(hfi1_sdma_descq_full_total{${ENGINE}}[$__rate_interval])`, legend: '{{instance}} {{unit}}/{{engine}}' },
        ],
        w: 8,
        h: 7,
        unit: 'ops',
        min: 0,
      },
      {
        title: 'Interrupts',
        type: 'timeseries',
        description: 'Interrupt-handler passes per second by kind (SDMAInt, SDMAPrIntCn, SDMAIdInt).',
        queries: [
          {
            expr: `sum by (instance, unit, engine, kind) (rate(hfi1_sdma_interrupts_total{${ENGINE}}[$__rate_interval]))`,
            legend: '{{instance}} {{unit}}/{{engine}} {{kind}}',
          },
        ],
        w: 8,
        h: 7,
        unit: 'ops',
        min: 0,
      },
      {
        title: 'Engine errors',
        type: 'timeseries',
        description: `Engine-error interrupts per interval (the kernel's SDMAErrCt). A halt-class error that the driver does not recover from makes the verdict halted: Hfi1SdmaEngineHalted (SD102).`,
        queries: [
          {
            expr: `increase(hfi1_sdma_engine_errors_total{${ENGINE}}[$__rate_interval])`,
            legend: '{{instance}} {{unit}}/{{engine}}',
          },
        ],
        w: 8,
        h: 7,
        min: 0,
      },
    ],
  },
  {
    title: 'Waiters',
    panels: [
      {
        title: 'Waiters',
        type: 'timeseries',
        description:
          'Senders asleep waiting for ring space, by engine and kind (a PSM writer whose engine is not shown has engine "unknown"). Waiters come and go under load; one that stays on an idle engine is stranded.',
        queries: [{ expr: `hfi1_sdma_waiters{${ENGINE}}`, legend: '{{instance}} {{unit}}/{{engine}} {{kind}}' }],
        w: 12,
        h: 8,
        min: 0,
      },
      {
        title: 'PSM writer stalls',
        type: 'timeseries',
        description: `PSM writers that waited out their 1 s timeout on an idle unit, per interval. Hfi1SdmaPsmStalls (SD203) fires on any in a quarter of an hour.`,
        queries: [{ expr: `increase(hfi1_sdma_psm_stalls_total{${UNIT}}[$__rate_interval])`, legend: '{{instance}} {{unit}}' }],
        w: 6,
        h: 8,
        min: 0,
      },
      {
        title: 'Waiter kinds visible',
        type: 'table',
        description: 'Which kinds of waiter (qp, psm, ipoib) can be seen on each host: a kind that cannot has no waiter series.',
        queries: [{ expr: `hfi1_sdma_waiters_visible{${UNIT}}`, instant: true }],
        w: 6,
        h: 8,
      },
    ],
  },
  {
    title: 'Links',
    panels: [
      {
        title: 'Link up per port',
        type: 'state-timeline',
        description:
          'Whether each port is ACTIVE. SDMA stays disabled while no port is: Hfi1SdmaNoActivePort (SD305); a port that was ACTIVE and is not: Hfi1SdmaPortDown (SD306).',
        queries: [{ expr: `hfi1_sdma_link_up{${UNIT}}`, legend: '{{instance}} {{unit}} port {{port}}' }],
        w: 12,
        h: 6,
        mappings: [
          { value: '1', text: 'ACTIVE', color: 'green' },
          { value: '0', text: 'not ACTIVE', color: 'red' },
        ],
      },
      {
        title: 'Link state now',
        type: 'table',
        description: "Each port's logical and physical state now.",
        queries: [{ expr: `hfi1_sdma_link_state{${UNIT}}`, instant: true }],
        w: 12,
        h: 6,
      },
    ],
  },
  {
    title: 'Exporter',
    panels: [
      {
        title: 'Exporter scraped',
        type: 'timeseries',
        description:
          'Whether Prometheus could scrape the exporter (1) or not (0). Hfi1SdmaExporterDown fires after five minutes.',
        queries: [{ expr: 'up{job=~"$job",instance=~"$instance"}', legend: '{{instance}}' }],
        w: 8,
        h: 6,
        min: 0,
        max: 1,
      },
      {
        title: 'Sampling time',
        type: 'timeseries',
        description: 'How long the exporter took to sample every unit.',
        queries: [{ expr: 'hfi1_sdma_scrape_duration_seconds{job=~"$job",instance=~"$instance"}', legend: '{{instance}}' }],
        w: 8,
        h: 6,
        unit: 's',
        min: 0,
      },
      {
        title: 'Build and units',
        type: 'table',
        description:
          "The exporter's version and backend (emulated true: the emulator, which Hfi1SdmaExporterEmulated says), the units it found (Hfi1SdmaNoUnit at 0), and what each unit is.",
        queries: [
          { expr: 'hfi1_sdma_build_info{job=~"$job",instance=~"$instance"}', instant: true },
          { expr: 'hfi1_sdma_units{job=~"$job",instance=~"$instance"}', instant: true },
          { expr: `hfi1_sdma_unit_info{${UNIT}}`, instant: true },
        ],
        w: 8,
        h: 6,
      },
    ],
  },
];

// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, substituted by Grafana.
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

function panelJson(p: PanelSpec, id: number, gridPos: { x: number; y: number; w: number; h: number }) {
  const defaults: Record<string, unknown> = {};
  if (p.unit) defaults.unit = p.unit;
  if (p.min !== undefined) defaults.min = p.min;
  if (p.max !== undefined) defaults.max = p.max;
  if (p.mappings) {
    defaults.mappings = [
      {
        type: 'value',
        options: Object.fromEntries(p.mappings.map((m, i) => [m.value, { text: m.text, color: m.color, index: i }])),
      },
    ];
    defaults.color = { mode: 'thresholds' };
  }
  if (p.steps) defaults.thresholds = { mode: 'absolute', steps: p.steps };
  return {
    id,
    type: p.type,
    title: p.title,
    description: p.description,
    datasource: DATASOURCE,
    gridPos,
    fieldConfig: { defaults, overrides: [] },
    options:
      p.type === 'table'
        ? { showHeader: true }
        : p.type === 'timeseries'
          ? { legend: { displayMode: 'table', placement: 'right' } }
          : {},
    ...(p.type === 'table' ? { transformations: [{ id: 'merge', options: {} }] } : {}),
    targets: p.queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DATASOURCE,
      expr: q.expr,
      ...(q.legend ? { legendFormat: q.legend } : {}),
      ...(q.instant ? { instant: true, range: false, format: 'table' } : { range: true }),
    })),
  };
}

function variable(name: string, label: string, query: string) {
  return {
    name,
    label,
    type: 'query',
    datasource: DATASOURCE,
    query: { query, refId: `${name}-variable` },
    definition: query,
    refresh: 2,
    multi: true,
    includeAll: true,
    allValue: '.*',
    current: { text: 'All', value: '$__all' },
    sort: 3,
  };
}

/** The dashboard as Grafana imports it. */
export function dashboard() {
  const panels: unknown[] = [];
  let id = 1;
  let y = 0;
  for (const row of ROWS) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] });
    y += 1;
    let x = 0;
    let rowH = 0;
    for (const p of row.panels) {
      if (x + p.w > 24) {
        y += rowH;
        x = 0;
        rowH = 0;
      }
      panels.push(panelJson(p, id++, { x, y, w: p.w, h: p.h }));
      x += p.w;
      rowH = Math.max(rowH, p.h);
    }
    y += rowH;
  }
  return {
    title: 'hfi1-sdma: Omni-Path send DMA',
    uid: 'hfi1-sdma',
    description:
      "The series of 'hfi1-sdma export': each engine's verdict, stalls and stranded senders, ring occupancy, DQF and descriptor rates, waiters, every port's link, and the exporter itself. Engines are absolute hardware indexes (an hfi2 window 8-15 shows 8 to 15).",
    tags: ['hfi1-sdma', 'omni-path', 'hfi1', 'hfi2'],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-1h', to: 'now' },
    timezone: 'browser',
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 },
        {
          ...variable('job', 'Job', 'label_values(hfi1_sdma_build_info, job)'),
          current: { text: 'hfi1-sdma', value: 'hfi1-sdma' },
        },
        variable('instance', 'Host', 'label_values(hfi1_sdma_build_info{job=~"$job"}, instance)'),
        variable('unit', 'Unit', 'label_values(hfi1_sdma_unit_info{job=~"$job",instance=~"$instance"}, unit)'),
        variable('engine', 'Engine', `label_values(hfi1_sdma_verdict{${UNIT}}, engine)`),
      ],
    },
    panels,
  };
}

/** The file's text: the dashboard as indented JSON. */
export function dashboardText(): string {
  return `${JSON.stringify(dashboard(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  writeFileSync(join(root, DASHBOARD_FILE), dashboardText());
  process.stdout.write(`wrote ${DASHBOARD_FILE}\n`);
}
