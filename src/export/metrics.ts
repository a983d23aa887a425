// The Prometheus metrics of hfi1-sdma: names with the hfi1_sdma_ prefix, units in the names,
// counters ending in _total, labelled by unit and engine. Every round starts from nothing: a series
// is served only when this round read it, so nothing stale survives a source that stopped
// answering. Counters carry the kernel's own cumulative values (DQF, the interrupt and error
// counters, DH), so rate() and increase() are right across exporter restarts, and a kernel-side
// reset (a clean-up zeroing DH, a driver reload) is a counter reset as Prometheus expects.
import { Counter, Gauge, type OpenMetricsContentType, openMetricsContentType, Registry } from 'prom-client';
import type { EngineSample, LinkState, SourceWarning, UnitInfo } from '../backend.js';
import type { Classification } from '../progress/classify.js';
import { freeCount, inFlight } from '../progress/ring.js';
import { STATE_NAMES } from '../progress/state.js';
import { ALL_REASONS, ALL_VERDICTS } from '../progress/verdicts.js';
import type { UnitWaiters } from './waiters.js';

/** The classifier's verdict while it has too few samples to confirm one (warming up). */
export const WARMING_UP = 'unknown';

/** The port's logical states (sysfs ports/1/state), each served 0/1 while the link is readable. */
export const LINK_STATES = ['DOWN', 'INIT', 'ARMED', 'ACTIVE', 'ACTIVE_DEFER'] as const;

/** What `hfi1_sdma_build_info` says about this exporter. */
export interface BuildInfo {
  version: string;
  /** `hw`, `emu` or `snapshot`: what the numbers come from. */
  backend: string;
}

function openMetricsRegistry(): Registry<OpenMetricsContentType> {
  const r = new Registry<OpenMetricsContentType>();
  r.setContentType(openMetricsContentType);
  return r;
}

const L = ['unit', 'engine'] as const;

/** The product each chip is sold as (the `name` label of hfi1_sdma_unit_info). */
const PRODUCT: Readonly<Record<UnitInfo['flavour']['chip'], string>> = { wfr: 'Omni-Path 100', jkr: 'CN5000' };

/** The metric objects, registered in a text-format and an OpenMetrics registry. */
export class SdmaMetrics {
  readonly text = new Registry();
  readonly openMetrics = openMetricsRegistry();
  /** Verdicts and reasons shown as 0/1: the classifier's lists plus any it returned since. */
  private readonly verdicts = new Set<string>(ALL_VERDICTS);
  private readonly reasons = new Set<string>(ALL_REASONS);
  /** Link states shown as 0/1: the known ones plus any other a port reported since. */
  private readonly linkStates = new Set<string>(LINK_STATES);

  private readonly registers = [this.text, this.openMetrics];
  private gauge<T extends string>(name: string, help: string, labelNames: readonly T[]): Gauge<T> {
    return new Gauge({ name, help, labelNames, registers: this.registers });
  }
  private counter<T extends string>(name: string, help: string, labelNames: readonly T[]): Counter<T> {
    return new Counter({ name, help, labelNames, registers: this.registers });
  }

  readonly buildInfo = this.gauge('hfi1_sdma_build_info', 'Always 1: the exporter version and the backend it reads', [
    'version',
    'backend',
  ]);
  readonly up = this.gauge(
    'hfi1_sdma_up',
    'Whether the unit could be sampled (1) or not (0); without a unit label, 0 when no unit was found',
    ['unit'],
  );
  readonly unitInfo = this.gauge(
    'hfi1_sdma_unit_info',
    'Always 1: what kind of unit this is: the product name (Omni-Path 100 or CN5000), module hfi1|hfi2, chip wfr|jkr, driver upstream|cornelis|hfi2, ports; engine labels are absolute hardware indexes',
    ['unit', 'name', 'module', 'chip', 'driver', 'ports'],
  );
  readonly deviceGone = this.gauge('hfi1_sdma_device_gone', 'The unit reads all-ones: the device is gone', ['unit']);
  readonly sourceWarnings = this.gauge(
    'hfi1_sdma_source_warnings',
    'Each distinct warning a source raised since the unit was opened (the known part was used)',
    ['unit', 'source', 'key'],
  );
  readonly linkUp = this.gauge(
    'hfi1_sdma_link_up',
    "The port's logical state is ACTIVE (1) or not (0); absent when the link is not readable",
    ['unit'],
  );
  readonly linkState = this.gauge(
    'hfi1_sdma_link_state',
    "The port's logical state (sysfs ports/1/state): 1 for the current one, 0 for the others; absent when not readable",
    ['unit', 'state'],
  );
  readonly state = this.gauge('hfi1_sdma_engine_state', 'Engine state: 1 for the current state name', [...L, 'state']);
  readonly running = this.gauge('hfi1_sdma_engine_running', 'Engine in s99_Running', L);
  readonly inFlight = this.gauge(
    'hfi1_sdma_in_flight_descriptors',
    'Descriptors written and not retired (descq_tail - descq_head)',
    L,
  );
  readonly free = this.gauge('hfi1_sdma_free_descriptors', 'Free descriptors (sdma_descq_freecnt)', L);
  readonly ringSize = this.gauge('hfi1_sdma_ring_size_descriptors', 'Ring size (descq_cnt)', L);
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
  readonly verdict = this.gauge('hfi1_sdma_verdict', 'Classifier verdict: 1 for the current one, 0 for the others', [
    ...L,
    'verdict',
  ]);
  readonly reason = this.gauge('hfi1_sdma_verdict_reason', 'Classifier reason: 1 for the current one, 0 for the others', [
    ...L,
    'reason',
  ]);
  readonly stalled = this.gauge(
    'hfi1_sdma_stalled',
    'Engine stalled (1) or not (0), confirmed by two samples; absent while the verdict is unknown',
    L,
  );
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
    'Waiters asleep on a running, empty, quiet engine for 3 samples spanning --strand-ms (a lost wake-up); absent when no QP or IPoIB waiter can be seen or before the third round',
    L,
  );
  readonly probablyStrandedWaiters = this.gauge(
    'hfi1_sdma_probably_stranded_waiters',
    'As hfi1_sdma_stranded_waiters, where the engine is the one qp_stats printed and another engine of its VL was busy',
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

  /** Forget every series of the previous round and state the build info. */
  beginRound(info: BuildInfo): void {
    this.text.resetMetrics();
    this.buildInfo.set({ version: info.version, backend: info.backend }, 1);
  }

  /** No unit was found (or the units could not be listed): `hfi1_sdma_up 0` without a unit label. */
  noUnit(): void {
    this.up.set({}, 0);
  }

  /** The unit-level series of one unit: whether it was read, whether the device is gone, its warnings. */
  recordUnit(unit: string, up: boolean, gone: boolean, warnings: readonly SourceWarning[]): void {
    this.up.set({ unit }, up ? 1 : 0);
    this.deviceGone.set({ unit }, gone ? 1 : 0);
    for (const w of warnings) this.sourceWarnings.set({ unit, source: w.source, key: w.key }, 1);
  }

  /** What kind of unit `unit` is (served whether or not it could be sampled: it is known from discovery). */
  recordUnitInfo(unit: string, info: Pick<UnitInfo, 'flavour'>): void {
    const f = info.flavour;
    const name = PRODUCT[f.chip];
    this.unitInfo.set({ unit, name, module: f.module, chip: f.chip, driver: f.driver, ports: String(f.ports) }, 1);
  }

  /** The link of one unit, when its state was read (nothing is served for an unreadable link). */
  recordLink(unit: string, link: LinkState | null): void {
    const state = link?.state;
    if (!state) return;
    this.linkStates.add(state);
    this.linkUp.set({ unit }, state === 'ACTIVE' ? 1 : 0);
    for (const st of this.linkStates) this.linkState.set({ unit, state: st }, state === st ? 1 : 0);
  }

  /** The waiters of one readable unit: per engine and visible kind, stranded counts, visibility, PSM stalls. */
  recordWaiters(unit: string, engines: readonly number[], uw: UnitWaiters): void {
    for (const v of uw.visibility) this.waitersVisible.set({ unit, kind: v.kind }, v.visible ? 1 : 0);
    if (!uw.listed) return;
    const visible = uw.visibility.filter((v) => v.visible).map((v) => v.kind);
    // Only a QP or an IPoIB queue can be stranded (a PSM writer stalls instead): with neither visible, no
    // stranded series rather than a 0 nobody could see.
    const strandable = uw.confirmable && visible.some((k) => k !== 'psm');
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
      // Fewer than 3 rounds cannot show a stranded waiter: no series rather than a 0 nobody checked.
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

  /** Record one sample of one engine of a readable unit, and its classification. */
  recordEngine(unit: string, descqCnt: number, s: EngineSample, c: Classification): void {
    const lab = { unit, engine: String(s.engine) };
    // A state not read (no sdes: a reduced view) is not a state other than running: no series.
    if (s.state !== null) {
      for (const st of STATE_NAMES) this.state.set({ ...lab, state: st }, s.state === st ? 1 : 0);
      this.running.set(lab, s.state === 's99_Running' ? 1 : 0);
    }
    this.ringSize.set(lab, descqCnt);
    if (s.sw) {
      this.inFlight.set(lab, inFlight(s.sw.descqHead, s.sw.descqTail));
      this.free.set(lab, freeCount(descqCnt, s.sw.descqHead, s.sw.descqTail));
      this.descqFull.inc(lab, s.sw.descqFullCount);
      this.retired.inc(lab, s.sw.descqHead >>> 0);
    }
    if (s.counters) {
      this.interrupts.inc({ ...lab, kind: 'sdma' }, Number(s.counters.sdmaInt));
      this.interrupts.inc({ ...lab, kind: 'progress' }, Number(s.counters.progressInt));
      this.interrupts.inc({ ...lab, kind: 'idle' }, Number(s.counters.idleInt));
      this.engineErrors.inc(lab, Number(s.counters.errCount));
    }
    for (const e of c.errors) this.errorBit.set({ ...lab, bit: String(e.bit), name: e.name, halts: String(e.halts) }, 1);
    this.verdicts.add(c.verdict);
    this.reasons.add(c.reason);
    for (const v of this.verdicts) this.verdict.set({ ...lab, verdict: v }, c.verdict === v ? 1 : 0);
    for (const r of this.reasons) this.reason.set({ ...lab, reason: r }, c.reason === r ? 1 : 0);
    // Unknown is neither stalled nor healthy: no series, so no alert and no false all-clear.
    if ((c.verdict as string) !== WARMING_UP) this.stalled.set(lab, c.verdict === 'stalled' ? 1 : 0);
    this.stalls.inc(lab, c.stallCount);
    this.longestStall.set(lab, c.stallMaxMs / 1000);
  }
}
