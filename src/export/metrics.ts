// The Prometheus metrics of hfi1-sdma: names with the hfi1_sdma_ prefix, units in the names,
// counters ending in _total, labelled by unit and engine. Counters are fed by deltas so that they
// stay monotonic across the DT/DH reset of a software clean-up (§b.12) and across restarts of
// the sources' own counters.
import { Counter, Gauge, type OpenMetricsContentType, openMetricsContentType, Registry } from 'prom-client';
import type { EngineSample } from '../backend.js';
import type { Classification, Verdict } from '../progress/classify.js';
import { freeCount, inFlight } from '../progress/ring.js';
import { STATE_NAMES } from '../progress/state.js';

function openMetricsRegistry(): Registry<OpenMetricsContentType> {
  const r = new Registry<OpenMetricsContentType>();
  r.setContentType(openMetricsContentType);
  return r;
}

const VERDICTS: readonly Verdict[] = ['idle', 'progressing', 'stalled', 'halted', 'backpressure', 'gone'];
const L = ['unit', 'engine'] as const;

/** The metric objects, registered in a text-format and an OpenMetrics registry. */
export class SdmaMetrics {
  readonly text = new Registry();
  readonly openMetrics = openMetricsRegistry();
  private readonly prev = new Map<string, { sample: EngineSample; stallCount: number }>();

  private readonly registers = [this.text, this.openMetrics];
  readonly up = new Gauge({
    name: 'hfi1_sdma_up',
    help: 'Whether the unit could be sampled (1) or its sources failed (0)',
    labelNames: ['unit'],
    registers: this.registers,
  });
  readonly state = new Gauge({
    name: 'hfi1_sdma_engine_state',
    help: 'Engine state (§d.1): 1 for the current state name',
    labelNames: [...L, 'state'],
    registers: this.registers,
  });
  readonly running = new Gauge({
    name: 'hfi1_sdma_engine_running',
    help: 'Engine in s99_Running',
    labelNames: L,
    registers: this.registers,
  });
  readonly inFlight = new Gauge({
    name: 'hfi1_sdma_in_flight_descriptors',
    help: 'Descriptors written and not retired (descq_tail - descq_head)',
    labelNames: L,
    registers: this.registers,
  });
  readonly free = new Gauge({
    name: 'hfi1_sdma_free_descriptors',
    help: 'Free descriptors (sdma_descq_freecnt, §b.1)',
    labelNames: L,
    registers: this.registers,
  });
  readonly ringSize = new Gauge({
    name: 'hfi1_sdma_ring_size_descriptors',
    help: 'Ring size (descq_cnt)',
    labelNames: L,
    registers: this.registers,
  });
  readonly descqFull = new Counter({
    name: 'hfi1_sdma_descq_full_total',
    help: 'Submissions that found the ring full (descq_full_count, DQF)',
    labelNames: L,
    registers: this.registers,
  });
  readonly retired = new Counter({
    name: 'hfi1_sdma_descriptors_retired_total',
    help: 'Descriptors retired by software, monotonic across clean-ups',
    labelNames: L,
    registers: this.registers,
  });
  readonly interrupts = new Counter({
    name: 'hfi1_sdma_interrupts_total',
    help: 'Interrupt-handler passes by kind (SDMAInt, SDMAPrIntCn, SDMAIdInt)',
    labelNames: [...L, 'kind'],
    registers: this.registers,
  });
  readonly engineErrors = new Counter({
    name: 'hfi1_sdma_engine_errors_total',
    help: 'Engine-error interrupts (SDMAErrCt)',
    labelNames: L,
    registers: this.registers,
  });
  readonly errorBit = new Gauge({
    name: 'hfi1_sdma_error_bit_active',
    help: 'SEND_DMA_ENG_ERR_STATUS bits set now, by name (§f.4)',
    labelNames: [...L, 'bit', 'name', 'halts'],
    registers: this.registers,
  });
  readonly verdict = new Gauge({
    name: 'hfi1_sdma_verdict',
    help: 'Classifier verdict: 1 for the current one',
    labelNames: [...L, 'verdict'],
    registers: this.registers,
  });
  readonly reason = new Gauge({
    name: 'hfi1_sdma_verdict_reason',
    help: 'Classifier reason: 1 for the current one',
    labelNames: [...L, 'reason'],
    registers: this.registers,
  });
  readonly stalled = new Gauge({
    name: 'hfi1_sdma_stalled',
    help: 'Engine stalled (in flight, running, no head movement, confirmed twice)',
    labelNames: L,
    registers: this.registers,
  });
  readonly stalls = new Counter({
    name: 'hfi1_sdma_stalls_total',
    help: 'Stalls detected',
    labelNames: L,
    registers: this.registers,
  });
  readonly longestStall = new Gauge({
    name: 'hfi1_sdma_longest_stall_seconds',
    help: 'Longest stall seen, in seconds',
    labelNames: L,
    registers: this.registers,
  });
  readonly scrapeDuration = new Gauge({
    name: 'hfi1_sdma_scrape_duration_seconds',
    help: 'Time taken to sample every engine',
    registers: this.registers,
  });

  /** Record one sample of one engine and its classification. */
  record(unitName: string, descqCnt: number, s: EngineSample, c: Classification): void {
    const unit = unitName;
    const engine = String(s.engine);
    const lab = { unit, engine };
    const key = `${unit}/${engine}`;
    const prev = this.prev.get(key);
    for (const st of STATE_NAMES) this.state.set({ ...lab, state: st }, s.state === st ? 1 : 0);
    this.running.set(lab, s.state === 's99_Running' ? 1 : 0);
    this.ringSize.set(lab, descqCnt);
    if (s.sw) {
      this.inFlight.set(lab, inFlight(s.sw.descqHead, s.sw.descqTail));
      this.free.set(lab, freeCount(descqCnt, s.sw.descqHead, s.sw.descqTail));
      const dqfDelta = prev?.sample.sw ? s.sw.descqFullCount - prev.sample.sw.descqFullCount : 0;
      if (dqfDelta > 0) this.descqFull.inc(lab, dqfDelta);
      else this.descqFull.inc(lab, 0);
    }
    if (prev && c.descPerSec !== null) {
      const dt = (s.timeMs - prev.sample.timeMs) / 1000;
      this.retired.inc(lab, Math.max(0, Math.round(c.descPerSec * dt)));
    } else {
      this.retired.inc(lab, 0);
    }
    if (s.counters) {
      const p = prev?.sample.counters;
      const d = (a: bigint, b: bigint | undefined) => (b === undefined || a < b ? 0 : Number(a - b));
      this.interrupts.inc({ ...lab, kind: 'sdma' }, d(s.counters.sdmaInt, p?.sdmaInt));
      this.interrupts.inc({ ...lab, kind: 'progress' }, d(s.counters.progressInt, p?.progressInt));
      this.interrupts.inc({ ...lab, kind: 'idle' }, d(s.counters.idleInt, p?.idleInt));
      this.engineErrors.inc(lab, d(s.counters.errCount, p?.errCount));
    }
    for (const e of c.errors) this.errorBit.set({ ...lab, bit: String(e.bit), name: e.name, halts: String(e.halts) }, 1);
    for (const v of VERDICTS) this.verdict.set({ ...lab, verdict: v }, c.verdict === v ? 1 : 0);
    this.reason.set({ ...lab, reason: c.reason }, 1);
    this.stalled.set(lab, c.verdict === 'stalled' ? 1 : 0);
    const stallDelta = c.stallCount - (prev?.stallCount ?? 0);
    this.stalls.inc(lab, Math.max(0, stallDelta));
    this.longestStall.set(lab, c.stallMaxMs / 1000);
    this.prev.set(key, { sample: s, stallCount: c.stallCount });
  }

  /** Clear the per-sample gauges whose label sets change (error bits, reasons) before a round. */
  beginRound(): void {
    this.errorBit.reset();
    this.reason.reset();
  }
}
