// The exporter's sampling side: one round of the monitor at most per min-interval, shared by concurrent
// scrapes, rendered into the metrics. The monitor bounds every read (a unit that fails, times out or reads
// all-ones is `up 0` and its engine series are dropped while the others are served) and follows units that
// appear, vanish or reload; the exporter only logs what changed.
import type { Backend, EngineSample } from '../backend.js';
import type { Captures } from '../monitor/capture.js';
import { Monitor, type MonitorTracks } from '../monitor/monitor.js';
import { confirming } from '../monitor/observation.js';
import { nextInstant, realSleep, type Sleep } from '../monitor/pace.js';
import { realTimer, type Timer } from '../monitor/read.js';
import type { Round } from '../monitor/round.js';
import type { Classification, DEFAULT_CLASSIFY_OPTIONS, EngineTrack } from '../progress/classify.js';
import { DEFAULT_STRAND_MS, STRAND_SAMPLES } from '../progress/strand.js';
import { type BuildInfo, SdmaMetrics } from './metrics.js';

export { realTimer, type Timer };

/** Exporter settings and the edges it touches. */
export interface ExporterOptions {
  backend: Backend;
  buildInfo: BuildInfo;
  minIntervalMs: number;
  stallMs: number;
  /** A waiter must hold this long (and 3 rounds) to be stranded (default 200). */
  strandMs?: number;
  /** A unit whose sample takes longer than this is `up 0` for the round (default 5000). */
  sampleTimeoutMs?: number;
  /** Wall clock in ms (injected for tests). */
  nowMs: () => number;
  log: (line: string) => void;
  /** Called before each sampling round with the wall time since the last one (the emulator advances). */
  beforeSample?: (elapsedMs: number) => unknown;
  timer?: Timer;
  /**
   * Open the backend afresh (the live host's units are found when it is opened): see UnitDiscovery. The
   * monitor closes what it opened this way; `backend` stays the caller's.
   */
  reopen?: () => Promise<Backend>;
  rediscoverMs?: number;
  /** The classifier (injected for tests of verdicts it does not give yet). */
  classify?: (
    track: EngineTrack,
    s: EngineSample,
    opts: typeof DEFAULT_CLASSIFY_OPTIONS & { descqCnt: number },
  ) => Classification;
  /** The wall-clock sleep between the samples of a round that confirms a waiter (a fake in tests). */
  sleep?: Sleep;
  /** Tracks to start from (the textfile exporter carries them between runs). */
  tracks?: MonitorTracks;
  /** Serve the process's own process_* and nodejs_* series. */
  processMetrics?: boolean;
  /** The captures of --capture-dir: fed every round, their counts served. */
  captures?: Captures;
}

const GONE = 'the device is gone (registers read all-ones, or the device vanished): hfi1_sdma_device_gone is 1';

/** The sampling side: one round at most per min-interval, shared by concurrent scrapes. */
export class Sampler {
  readonly metrics: SdmaMetrics;
  readonly monitor: Monitor;
  private readonly lastProblem = new Map<string, string>();
  private lastRoundMs: number | null = null;
  private inflight: Promise<void> | null = null;
  /** The last round rendered (null before the first). */
  last: Round | null = null;
  rounds = 0;

  constructor(private readonly o: ExporterOptions) {
    this.metrics = new SdmaMetrics(o.processMetrics === true);
    this.monitor = new Monitor(
      o.backend,
      {
        stallMs: o.stallMs,
        strandMs: o.strandMs ?? DEFAULT_STRAND_MS,
        readTimeoutMs: o.sampleTimeoutMs ?? 5000,
        timer: o.timer ?? realTimer,
        rediscoverMs: o.rediscoverMs ?? 30_000,
        wallNowMs: o.nowMs,
        ...(o.reopen ? { reopen: o.reopen } : {}),
        ...(o.classify ? { classify: o.classify } : {}),
        onListingProblem: (message) => this.problem('units', message),
      },
      o.tracks,
    );
  }

  /** Close the backend the monitor opened itself, if any (after `settled`). */
  async close(): Promise<void> {
    await this.monitor.close();
  }

  /** Make sure the metrics are at most min-interval old. */
  refresh(): Promise<void> {
    const now = this.o.nowMs();
    if (this.inflight) return this.inflight;
    if (this.lastRoundMs !== null && now - this.lastRoundMs < this.o.minIntervalMs) return Promise.resolve();
    this.inflight = this.round(now).finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /** Resolves once no round is running (for a clean stop). */
  async settled(): Promise<void> {
    await this.inflight?.catch(() => undefined);
  }

  private async round(now: number): Promise<void> {
    const t0 = this.o.nowMs();
    await this.o.beforeSample?.(this.lastRoundMs === null ? 0 : now - this.lastRoundMs);
    this.lastRoundMs = now;
    this.rounds += 1;
    const first = await this.monitor.round();
    const r = await this.confirmed(first);
    // The samples that confirmed a writer let the backend's time pass already (an emulator advanced by as much).
    if (r !== first) this.lastRoundMs = this.o.nowMs();
    this.last = r;
    this.o.captures?.observe(r);
    this.metrics.beginRound(this.o.buildInfo);
    this.metrics.recordRound(r);
    if (this.o.captures) this.metrics.recordCaptures(this.o.captures);
    this.logRound(r);
    this.metrics.scrapeDuration.set((this.o.nowMs() - t0) / 1000);
  }

  /**
   * A round that left a PSM writer's verdict being confirmed gets its three samples now, --strand-ms/2 apart: scrapes
   * come 15 s or more apart, and a writer's stall ends by itself within 1 s, so across scrapes it would never be
   * confirmed (a QP or an IPoIB queue stays stranded: the next scrapes confirm it). Not on a recording (its instants
   * are the scrapes').
   */
  private async confirmed(first: Round): Promise<Round> {
    let r = first;
    const stepMs = Math.max(1, Math.ceil(this.monitor.strandMs / 2));
    for (let i = 1; i < STRAND_SAMPLES && !this.o.backend.recording && confirming(r, 'psm'); i++) {
      if (r.units.some((u) => u.status === 'gone')) break;
      if (!(await nextInstant(this.o.backend, stepMs, this.o.sleep ?? realSleep))) break;
      r = await this.monitor.round();
    }
    return r;
  }

  /** Log each unit's problem when it changes (not every round), its recovery, and each new source warning. */
  private logRound(r: Round): void {
    for (const u of r.units) {
      for (const w of u.newWarnings) {
        // Most messages name their file already; the path is added only where one does not.
        const text = w.message.startsWith(w.path) ? w.message : `${w.path}: ${w.message}`;
        this.o.log(`hfi1-sdma export: ${u.info.name}: ${text}`);
      }
      const problem =
        u.status === 'gone' ? GONE : u.status === 'failed' ? `sampling failed: ${u.problem ?? 'unknown error'}` : null;
      this.problem(u.info.name, problem);
    }
    for (const info of r.vanished) this.problem(info.name, GONE);
  }

  /** Log a problem when it changes (not every round), and its recovery. */
  private problem(what: string, message: string | null): void {
    const before = this.lastProblem.get(what);
    if (message === (before ?? null)) return;
    if (message === null) {
      this.lastProblem.delete(what);
      if (what !== 'units') this.o.log(`hfi1-sdma export: ${what}: readable again`);
      return;
    }
    this.lastProblem.set(what, message);
    this.o.log(`hfi1-sdma export: ${what === 'units' ? '' : `${what}: `}${message}`);
  }
}
