// The Prometheus metrics of hfi1-sdma: names with the hfi1_sdma_ prefix (hfi2 units too), units in the names,
// counters ending in _total, labelled by unit (its name) and engine (its absolute index) or port. Every round
// starts from nothing: a series is served only when this round read it, so nothing stale survives a source
// that stopped answering. Counters carry the kernel's own cumulative values (DQF, the interrupt and error
// counters, DH), so rate() and increase() are right across exporter restarts, and a kernel-side reset (a
// clean-up zeroing DH, a driver reload) is a counter reset as Prometheus expects. A state, a verdict and a
// port's link are one series each holding the current value as a label (no 0/1 fan-out over every value),
// which keeps a 16-engine unit under 400 series.
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  type OpenMetricsContentType,
  openMetricsContentType,
  Registry,
} from 'prom-client';
import type { PortCounterName, PortCounters, PortLink, SourceWarning, UnitInfo } from '../backend.js';
import type { Captures } from '../monitor/capture.js';
import { ipoibStuckNow } from '../monitor/findings-ports.js';
import type { EngineRound, Round, UnitRound, UnitWaitersRound } from '../monitor/round.js';
import { seesStrandable } from '../monitor/waiters.js';
import { STALL_CAUSES } from '../progress/cause.js';
import { freeCount, inFlight } from '../progress/ring.js';

/** The classifier's verdict while it has too few samples to confirm one (warming up). */
export const WARMING_UP = 'unknown';

/** What `hfi1_sdma_build_info` says about this exporter. */
export interface BuildInfo {
  version: string;
  /** `hw`, `emu` or `snapshot`: what the numbers come from. */
  backend: string;
  /** The numbers describe the emulator (in process, an emulated sysroot, or a capture of one). */
  emulated?: boolean;
}

/** What prom-client's registry renders one metric with (not in its typings). */
type RenderOne = (metric: object) => Promise<string>;

/**
 * An OpenMetrics registry that leaves the metric objects alone. prom-client 15's own renders OpenMetrics by
 * renaming every counter object in place (`_total` stripped, added back to each sample), and the text registry,
 * which shares those objects, then serves every counter without its `_total` until the process restarts. This one
 * renders each counter through a view carrying the stripped name, so both formats keep the names the rules and
 * dashboards use, whatever order scrapers ask in.
 */
class StableOpenMetricsRegistry extends Registry<OpenMetricsContentType> {
  constructor() {
    super();
    this.setContentType(openMetricsContentType);
  }

  override async metrics(): Promise<string> {
    const one = (this as unknown as { getMetricsAsString: RenderOne }).getMetricsAsString.bind(this);
    const texts = await Promise.all(
      this.getMetricsAsArray().map((m) => {
        const { type, name } = m as unknown as { type: string; name: string };
        return one(type === 'counter' ? Object.create(m, { name: { value: name.replace(/_total$/, '') } }) : m);
      }),
    );
    return `${texts.join('\n')}\n# EOF\n`;
  }
}

const L = ['unit', 'engine'] as const;
const P = ['unit', 'port'] as const;
/** The port counters' labels: those of node_exporter's infiniband collector, so the series join without relabelling. */
const D = ['device', 'port'] as const;

/** The port counter series: the contract's counter, its series name and help. */
const PORT_SERIES: readonly [PortCounterName, string, string][] = [
  [
    'xmitWait',
    'hfi1_sdma_port_xmit_wait_total',
    "Flit times the port had data and no credit to send it (the driver's TxWait, XmitWait)",
  ],
  ['xmitData', 'hfi1_sdma_port_xmit_data_flits_total', 'Flits (8 bytes) the port sent'],
  ['xmitPackets', 'hfi1_sdma_port_xmit_packets_total', 'Packets the port sent'],
  ['xmitDiscards', 'hfi1_sdma_port_xmit_discards_total', 'Packets the port discarded instead of sending them (XmitDiscards)'],
  ['linkDowned', 'hfi1_sdma_port_link_downed_total', 'Times the port lost its link (LinkDowned, SwLinkDown)'],
  ['linkErrorRecovery', 'hfi1_sdma_port_link_error_recovery_total', "Times the port's link retrained (LinkErrorRecovery)"],
  ['rcvErrors', 'hfi1_sdma_port_rcv_errors_total', 'Packets the port received with errors (PortRcvErrors)'],
  [
    'dmaWait',
    'hfi1_sdma_port_dma_wait_total',
    "Times a QP or an IPoIB queue slept on an engine's dmawait list for this port (DmaWait)",
  ],
];

/** The product each chip is sold as (the `name` label of hfi1_sdma_unit_info). */
const PRODUCT: Readonly<Record<UnitInfo['flavour']['chip'], string>> = { wfr: 'Omni-Path 100', jkr: 'CN5000' };

/** The metric objects, registered in a text-format and an OpenMetrics registry. */
export class SdmaMetrics {
  readonly text = new Registry();
  readonly openMetrics: Registry<OpenMetricsContentType> = new StableOpenMetricsRegistry();

  private readonly registers = [this.text, this.openMetrics];
  private gauge<T extends string>(name: string, help: string, labelNames: readonly T[]): Gauge<T> {
    return new Gauge({ name, help, labelNames, registers: this.registers });
  }
  private counter<T extends string>(name: string, help: string, labelNames: readonly T[]): Counter<T> {
    return new Counter({ name, help, labelNames, registers: this.registers });
  }

  /** `processMetrics`: also serve the process's own process_* and nodejs_* series (the served exporter does). */
  constructor(processMetrics = false) {
    if (processMetrics) {
      collectDefaultMetrics({ register: this.text });
      collectDefaultMetrics({ register: this.openMetrics });
    }
  }

  readonly buildInfo = this.gauge(
    'hfi1_sdma_build_info',
    "Always 1: the exporter version, the backend it reads (hw, emu, snapshot) and whether the numbers are the emulator's",
    ['version', 'backend', 'emulated'],
  );
  readonly units = this.gauge('hfi1_sdma_units', 'Units found (and units gone since); 0 when no hfi1 or hfi2 unit is found', []);
  readonly up = this.gauge('hfi1_sdma_up', 'Whether the unit could be read this round (1) or not (0)', ['unit']);
  readonly unitInfo = this.gauge(
    'hfi1_sdma_unit_info',
    'Always 1: what kind of unit this is: the product name (Omni-Path 100 or CN5000), module hfi1|hfi2, chip wfr|jkr, driver upstream|cornelis|hfi2, ports; engine labels are absolute hardware indexes',
    ['unit', 'name', 'module', 'chip', 'driver', 'ports'],
  );
  readonly deviceGone = this.gauge('hfi1_sdma_device_gone', 'The unit reads all-ones, or vanished: the device is gone', ['unit']);
  readonly sourceWarnings = this.gauge(
    'hfi1_sdma_source_warnings',
    'Each distinct warning a source raised since the unit was opened (the known part was used)',
    ['unit', 'source', 'key'],
  );
  readonly ringSize = this.gauge('hfi1_sdma_ring_size_descriptors', 'Ring size of every engine of the unit (descq_cnt)', [
    'unit',
  ]);
  readonly linkUp = this.gauge(
    'hfi1_sdma_link_up',
    "The port's logical state is ACTIVE (1) or not (0); absent when the port's state is not readable",
    P,
  );
  readonly linkState = this.gauge(
    'hfi1_sdma_link_state',
    "Always 1: the port's logical and physical state now (sysfs ports/<port>/state, phys_state) as labels",
    [...P, 'state', 'phys_state'],
  );
  readonly linkActiveSeen = this.gauge(
    'hfi1_sdma_link_active_seen',
    'The port was seen ACTIVE (1) since the exporter started, or in the state it carries: a port never ACTIVE (an unused port) never pages',
    P,
  );
  readonly state = this.gauge('hfi1_sdma_engine_state', 'Always 1: the engine state name now, as the state label', [
    ...L,
    'state',
  ]);
  readonly running = this.gauge('hfi1_sdma_engine_running', 'Engine in s99_Running', L);
  readonly verdict = this.gauge('hfi1_sdma_verdict', 'Always 1: the classifier verdict and its reason now, as labels', [
    ...L,
    'verdict',
    'reason',
  ]);
  readonly stalled = this.gauge(
    'hfi1_sdma_stalled',
    'Engine stalled (1) or not (0), confirmed by two samples; absent while the verdict is unknown',
    L,
  );
  readonly inFlight = this.gauge(
    'hfi1_sdma_in_flight_descriptors',
    'Descriptors written and not retired (descq_tail - descq_head)',
    L,
  );
  readonly free = this.gauge('hfi1_sdma_free_descriptors', 'Free descriptors (sdma_descq_freecnt)', L);
  readonly descqFull = this.counter(
    'hfi1_sdma_descq_full_total',
    "Submissions that found the ring full: the kernel's descq_full_count (DQF)",
    L,
  );
  readonly retired = this.counter(
    'hfi1_sdma_descriptors_retired_total',
    "Descriptors retired: the kernel's descq_head (DH), reset to 0 by a clean-up",
    L,
  );
  readonly interrupts = this.counter(
    'hfi1_sdma_interrupts_total',
    'Interrupt-handler passes by kind: the kernel counters SDMAInt, SDMAPrIntCn, SDMAIdInt',
    [...L, 'kind'],
  );
  readonly engineErrors = this.counter(
    'hfi1_sdma_engine_errors_total',
    'Engine-error interrupts since driver load: the kernel counter SDMAErrCt',
    L,
  );
  readonly errorBit = this.gauge('hfi1_sdma_error_bit_active', 'SEND_DMA_ENG_ERR_STATUS bits set now, by name', [
    ...L,
    'bit',
    'name',
    'halts',
  ]);
  readonly stalls = this.counter('hfi1_sdma_stalls_total', 'Stalls detected since the exporter started', L);
  readonly longestStall = this.gauge(
    'hfi1_sdma_longest_stall_seconds',
    'Longest stall seen since the exporter started, in seconds',
    L,
  );
  readonly waiters = this.gauge(
    'hfi1_sdma_waiters',
    'Senders asleep waiting (for ring space or another I/O wait) by engine and kind; engine "unknown" where the source does not say; absent for a kind that cannot be seen here',
    [...L, 'kind'],
  );
  readonly strandedWaiters = this.gauge(
    'hfi1_sdma_stranded_waiters',
    'Waiters certainly stranded: asleep on a running, empty, quiet engine for 3 samples spanning --strand-ms, every other engine of the VL idle or retiring with room (a lost wake-up); absent when no QP or IPoIB waiter can be seen or before the third round',
    L,
  );
  readonly probablyStrandedWaiters = this.gauge(
    'hfi1_sdma_probably_stranded_waiters',
    'As hfi1_sdma_stranded_waiters, where another engine of the VL was busy and short of room, so the waiter may sleep there',
    L,
  );
  readonly waitersVisible = this.gauge(
    'hfi1_sdma_waiters_visible',
    'Whether this kind of waiter (qp, psm, ipoib) can be seen here (1) or not (0)',
    ['unit', 'kind'],
  );
  readonly psmStalls = this.counter(
    'hfi1_sdma_psm_stalls_total',
    'PSM writer stalls of up to 1 s (a lost wake-up on an idle unit) seen since the exporter started',
    ['unit'],
  );
  readonly scrapeDuration = this.gauge('hfi1_sdma_scrape_duration_seconds', 'Time taken to sample every unit', []);
  /** The port counters, by the contract's name (counters carrying the driver's cumulative values). */
  readonly portCounters = new Map(PORT_SERIES.map(([n, name, help]) => [n, this.counter(name, help, D)]));
  readonly portStalled = this.gauge(
    'hfi1_sdma_port_stalled_engines',
    'Engines stalled now whose cause (host, fabric: the far end returns no credits, link: the port lost its link or retrains) this port shows',
    [...D, 'cause'],
  );
  readonly ipoibStuck = this.gauge(
    'hfi1_sdma_ipoib_stuck_queues',
    'IPoIB transmit queues on the engine that the netdev watchdog timed out (stopped over 1 s) within the last 3 s; engine "unknown" where the source does not say; absent when none',
    L,
  );
  readonly bulkService = this.gauge(
    'hfi1_sdma_bulk_service_engines',
    "Engines the Cornelis hfi1's bulk service owns (use_bulksvc=Y): it carries verbs messages over 2 KB off SDMA, so idle engines are expected; 0 when it is off; absent without the parameter",
    ['unit'],
  );

  /** Forget every series of the previous round and state the build info. */
  /** The capture series, registered with the first capture counts (an exporter without --capture-dir has none). */
  private captureSeries: ReturnType<SdmaMetrics['makeCaptureSeries']> | null = null;

  private makeCaptureSeries() {
    return {
      written: this.counter(
        'hfi1_sdma_captures_total',
        'Snapshots written into the capture directory (--capture-dir) when an engine first turned stalled, halted or stranded, or a unit went',
        ['dir'],
      ),
      failed: this.counter(
        'hfi1_sdma_capture_failures_total',
        'Captures started and not written (the reason is in the log); nothing partial is left',
        ['dir'],
      ),
      suppressed: this.counter(
        'hfi1_sdma_captures_suppressed_total',
        'Bad verdicts not captured: the same finding on the same engine was captured less than 10 minutes before',
        ['dir'],
      ),
      last: this.gauge(
        'hfi1_sdma_last_capture_info',
        'Always 1: the last capture written, its file and the finding that started it (code, unit, engine)',
        ['dir', 'file', 'code', 'unit', 'engine'],
      ),
      lastTime: this.gauge('hfi1_sdma_last_capture_timestamp_seconds', 'When the last capture started (Unix seconds)', ['dir']),
    };
  }

  /** The captures' counts (export --capture-dir). */
  recordCaptures(c: Captures): void {
    this.captureSeries ??= this.makeCaptureSeries();
    const m = this.captureSeries;
    const dir = { dir: c.dir };
    const n = c.counts;
    m.written.inc(dir, n.written);
    m.failed.inc(dir, n.failed);
    m.suppressed.inc(dir, n.suppressed);
    if (n.last) {
      const t = n.last.trigger;
      m.last.set(
        { ...dir, file: n.last.file, code: t.code, unit: t.unit ?? '', engine: t.engine === null ? '' : String(t.engine) },
        1,
      );
      m.lastTime.set(dir, n.last.atMs / 1000);
    }
  }

  beginRound(info: BuildInfo): void {
    this.text.resetMetrics();
    this.buildInfo.set({ version: info.version, backend: info.backend, emulated: String(info.emulated === true) }, 1);
  }

  /** Every series of one round of the monitor. */
  recordRound(r: Round): void {
    this.units.set(r.units.length + r.vanished.length);
    for (const u of r.units) this.recordUnit(u);
    for (const info of r.vanished) {
      this.up.set({ unit: info.name }, 0);
      this.deviceGone.set({ unit: info.name }, 1);
      this.recordUnitInfo(info.name, info);
    }
  }

  private recordUnit(u: UnitRound): void {
    const unit = u.info.name;
    this.up.set({ unit }, u.status === 'up' ? 1 : 0);
    this.deviceGone.set({ unit }, u.status === 'gone' ? 1 : 0);
    this.recordWarnings(unit, u.warnings);
    this.recordUnitInfo(unit, u.info);
    if (u.status !== 'gone') this.recordPorts(unit, u.ports, u.activeSeen);
    // Unreadable: nothing of its engines is served.
    if (u.status !== 'up') return;
    this.recordPortCounters(u);
    this.ringSize.set({ unit }, u.info.descqCnt);
    for (const e of u.engines) this.recordEngine(unit, u.info.descqCnt, e);
    this.recordWaiters(
      unit,
      u.engines.map((e) => e.sample.engine),
      u.waiters,
    );
  }

  private recordWarnings(unit: string, warnings: readonly SourceWarning[]): void {
    for (const w of warnings) this.sourceWarnings.set({ unit, source: w.source, key: w.key }, 1);
  }

  /** What kind of unit `unit` is (served whether or not it could be sampled: it is known from discovery). */
  private recordUnitInfo(unit: string, info: Pick<UnitInfo, 'flavour'>): void {
    const f = info.flavour;
    const name = PRODUCT[f.chip];
    this.unitInfo.set({ unit, name, module: f.module, chip: f.chip, driver: f.driver, ports: String(f.ports) }, 1);
  }

  /** Every port whose state was read (nothing is served for an unreadable one). */
  private recordPorts(unit: string, ports: readonly PortLink[], activeSeen: readonly number[]): void {
    for (const p of ports) {
      if (!p.state) continue;
      const port = String(p.port);
      this.linkUp.set({ unit, port }, p.state === 'ACTIVE' ? 1 : 0);
      this.linkState.set({ unit, port, state: p.state, phys_state: p.physState ?? '' }, 1);
      this.linkActiveSeen.set({ unit, port }, activeSeen.includes(p.port) ? 1 : 0);
    }
  }

  /** Every port's counters, the engines each port's cause stalls, IPoIB queues stuck, the bulk service. */
  private recordPortCounters(u: UnitRound): void {
    const device = u.info.name;
    for (const p of u.portCounters as PortCounters[]) {
      const lab = { device, port: String(p.port) };
      for (const [n, c] of this.portCounters) {
        const v = p.values[n];
        if (v !== null) c.inc(lab, Number(v));
      }
    }
    const ports = new Set([...u.ports.map((p) => p.port), ...u.portCounters.map((p) => p.port)]);
    for (const port of ports) {
      for (const cause of STALL_CAUSES) {
        const n = u.engines.filter((e) => e.verdict.verdict === 'stalled' && e.cause?.cause === cause && e.cause.port === port);
        this.portStalled.set({ device, port: String(port), cause }, n.length);
      }
    }
    const now = u.waiters.timeMs;
    const stuck = new Map<string, number>();
    for (const j of u.waiters.judgements) {
      const w = j.waiter;
      if (!ipoibStuckNow(w, now)) continue;
      const engine = w.engine === null ? 'unknown' : String(w.engine);
      stuck.set(engine, (stuck.get(engine) ?? 0) + 1);
    }
    for (const [engine, n] of stuck) this.ipoibStuck.set({ unit: device, engine }, n);
    const s = u.info.settings;
    if (s?.useBulksvc !== null && s?.useBulksvc !== undefined) {
      this.bulkService.set({ unit: device }, s.useBulksvc ? s.bulkServiceEngines.length : 0);
    }
  }

  /** The waiters of one readable unit: per engine and visible kind, stranded counts, visibility, PSM stalls. */
  private recordWaiters(unit: string, engines: readonly number[], uw: UnitWaitersRound): void {
    for (const v of uw.visibility) this.waitersVisible.set({ unit, kind: v.kind }, v.visible ? 1 : 0);
    if (!uw.listed) return;
    const visible = uw.visibility.filter((v) => v.visible).map((v) => v.kind);
    // Only a QP or an IPoIB queue can be stranded (a PSM writer stalls instead): with neither visible, no
    // stranded series rather than a 0 nobody could see; before the third round neither.
    const strandable = uw.confirmable && seesStrandable(uw);
    const per = new Map<string, number>();
    const stranded = new Map<string, number>();
    const probable = new Map<string, number>();
    for (const j of uw.judgements) {
      const engine = j.waiter.engine === null ? 'unknown' : String(j.waiter.engine);
      const k = `${engine}\0${j.waiter.kind}`;
      per.set(k, (per.get(k) ?? 0) + 1);
      if (j.verdict === 'stranded') {
        const m = j.probable ? probable : stranded;
        m.set(engine, (m.get(engine) ?? 0) + 1);
      }
    }
    for (const e of engines.map(String)) {
      for (const kind of visible) this.waiters.set({ unit, engine: e, kind }, per.get(`${e}\0${kind}`) ?? 0);
      if (!strandable) continue;
      this.strandedWaiters.set({ unit, engine: e }, stranded.get(e) ?? 0);
      this.probablyStrandedWaiters.set({ unit, engine: e }, probable.get(e) ?? 0);
    }
    for (const [k, n] of per) {
      const [engine, kind] = k.split('\0') as [string, string];
      if (engine === 'unknown') this.waiters.set({ unit, engine, kind }, n);
    }
    this.psmStalls.inc({ unit }, uw.psmStalls);
  }

  /** One engine of a readable unit, and its classification. */
  private recordEngine(unit: string, descqCnt: number, e: EngineRound): void {
    const { sample: s, verdict: c } = e;
    const engine = String(s.engine);
    // Every label set written out in full: V8 (Node 20) adds each property that follows an object spread
    // (`{ ...lab, kind }`) through its runtime, and this runs for every engine of every scrape.
    const lab = { unit, engine };
    // A state not read (no sdes: a reduced view) is not a state other than running: no series.
    if (s.state !== null) {
      this.state.set({ unit, engine, state: s.state }, 1);
      this.running.set(lab, s.state === 's99_Running' ? 1 : 0);
    }
    if (s.sw) {
      this.inFlight.set(lab, inFlight(s.sw.descqHead, s.sw.descqTail));
      this.free.set(lab, freeCount(descqCnt, s.sw.descqHead, s.sw.descqTail));
      this.descqFull.inc(lab, s.sw.descqFullCount);
      this.retired.inc(lab, s.sw.descqHead >>> 0);
    }
    if (s.counters) {
      this.interrupts.inc({ unit, engine, kind: 'sdma' }, Number(s.counters.sdmaInt));
      this.interrupts.inc({ unit, engine, kind: 'progress' }, Number(s.counters.progressInt));
      this.interrupts.inc({ unit, engine, kind: 'idle' }, Number(s.counters.idleInt));
      this.engineErrors.inc(lab, Number(s.counters.errCount));
    }
    for (const b of c.errors) this.errorBit.set({ unit, engine, bit: String(b.bit), name: b.name, halts: String(b.halts) }, 1);
    this.verdict.set({ unit, engine, verdict: c.verdict, reason: c.reason }, 1);
    // Unknown is neither stalled nor healthy: no series, so no alert and no false all-clear.
    if ((c.verdict as string) !== WARMING_UP) this.stalled.set(lab, c.verdict === 'stalled' ? 1 : 0);
    this.stalls.inc(lab, c.stallCount);
    this.longestStall.set(lab, c.stallMaxMs / 1000);
  }
}
