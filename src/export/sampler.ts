// The exporter's sampling side: one round at most per min-interval, shared by concurrent scrapes.
// A round reads every unit; a unit that fails, times out or reads all-ones is `up 0` (and its
// engine series are dropped) while the others are served. No unit at all is `hfi1_sdma_up 0`.
import type { Backend, EngineSample, LinkState, SourceWarning, Unit, UnitInfo } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { type Classification, classify, DEFAULT_CLASSIFY_OPTIONS, type EngineTrack, newTrack } from '../progress/classify.js';
import { DEFAULT_STRAND_MS } from '../progress/strand.js';
import { UnitDiscovery } from './discovery.js';
import { type BuildInfo, SdmaMetrics } from './metrics.js';
import { ExportWaiters } from './waiters.js';

/** A timer that can be cancelled (injected so tests need no wall-clock waits). */
export type Timer = (ms: number) => { done: Promise<void>; cancel(): void };

/** The real timer; it never keeps the process alive. */
export const realTimer: Timer = (ms) => {
  let t: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    t = setTimeout(resolve, ms);
    t.unref();
  });
  return { done, cancel: () => clearTimeout(t) };
};

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
   * Open the backend afresh (the live host's units are found when it is opened). Called before a
   * round that follows one without any unit, or with a unit that was not read (gone, failed), so
   * that a unit which appears, or comes back under another driver build or engine window, is read
   * as it now is; also every `rediscoverMs` (30 s by default), which opens the units again only when
   * what they are changed (a driver reloaded between two rounds). The sampler closes what it opened
   * this way (`close`); `backend` stays the caller's.
   */
  reopen?: () => Promise<Backend>;
  rediscoverMs?: number;
  /** The classifier (injected for tests of verdicts it does not give yet). */
  classify?: (
    track: EngineTrack,
    s: EngineSample,
    opts: typeof DEFAULT_CLASSIFY_OPTIONS & { descqCnt: number },
  ) => Classification;
}

type Outcome = { ok: true; samples: EngineSample[] } | { ok: false; message: string; gone: boolean };

/** The sampling side: one round at most per min-interval, shared by concurrent scrapes. */
export class Sampler {
  readonly metrics = new SdmaMetrics();
  private readonly tracks = new Map<string, EngineTrack>();
  /** A sample still running after its timeout: the unit is not sampled again until it settles. */
  private readonly pending = new Map<string, Promise<unknown>>();
  private readonly lastProblem = new Map<string, string>();
  private readonly warned = new Set<string>();
  private lastRoundMs: number | null = null;
  private inflight: Promise<void> | null = null;
  private readonly waiters: ExportWaiters;
  private readonly discovery: UnitDiscovery;
  /** The last round missed a unit (none listed, or one not read): list them afresh before the next. */
  private missed = false;
  rounds = 0;

  constructor(private readonly o: ExporterOptions) {
    this.waiters = new ExportWaiters(o.strandMs ?? DEFAULT_STRAND_MS);
    this.discovery = new UnitDiscovery({
      backend: o.backend,
      reopen: o.reopen,
      rediscoverMs: o.rediscoverMs ?? 30_000,
      problem: (message) => this.problem('units', message),
    });
  }

  /** Close the backend this sampler opened itself, if any (after `settled`). */
  async close(): Promise<void> {
    await this.discovery.close();
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
    this.metrics.beginRound(this.o.buildInfo);
    const units = await this.discovery.units(now, this.missed, this.pending.size > 0);
    const vanished = [...this.discovery.vanished.values()];
    if (units.length === 0 && vanished.length === 0) this.metrics.noUnit();
    // Units are read side by side: one that blocks costs the round its timeout once, not per unit.
    const read = await Promise.all(units.map((unit) => this.sampleUnit(unit)));
    for (const info of vanished) this.recordVanished(info);
    this.missed = units.length === 0 || read.includes(false) || vanished.length > 0;
    this.metrics.scrapeDuration.set((this.o.nowMs() - t0) / 1000);
  }

  /** A unit that is no longer listed: up 0 and gone, as when its registers read all-ones, with nothing of its engines. */
  private recordVanished(info: UnitInfo): void {
    this.forget(info.name);
    this.metrics.recordUnit(info.name, false, true, []);
    this.metrics.recordUnitInfo(info.name, info);
    this.problem(info.name, 'the device is gone (registers read all-ones, or the device vanished): hfi1_sdma_device_gone is 1');
  }

  /** Forget what was tracked of a unit's engines and waiters: they warm up afresh once readable. */
  private forget(name: string): void {
    this.waiters.forget(name);
    for (const key of [...this.tracks.keys()]) if (key.startsWith(`${name}/`)) this.tracks.delete(key);
  }

  /** Sample one unit and record it; whether it was read (up). */
  private async sampleUnit(unit: Unit): Promise<boolean> {
    const name = unit.info.name;
    const r = await this.sampleBounded(unit);
    const gone = r.ok ? r.samples.some((s) => s.gone) : r.gone;
    const up = r.ok && !gone;
    if (up) {
      const opts = { ...DEFAULT_CLASSIFY_OPTIONS, stallMs: this.o.stallMs, descqCnt: unit.info.descqCnt };
      for (const s of r.samples) {
        const key = `${name}/${s.engine}`;
        const track = this.tracks.get(key) ?? newTrack();
        this.tracks.set(key, track);
        this.metrics.recordEngine(name, unit.info.descqCnt, s, (this.o.classify ?? classify)(track, s, opts));
      }
      const uw = await this.waiters.read(unit, r.samples, (p) => this.bounded(p));
      this.metrics.recordWaiters(
        name,
        r.samples.map((s) => s.engine),
        uw,
      );
    } else {
      // Unreadable: nothing of its engines is served, and they warm up afresh once readable.
      this.forget(name);
    }
    const warnings = this.warningsOf(unit);
    this.metrics.recordUnit(name, up, gone, warnings);
    this.metrics.recordUnitInfo(name, unit.info);
    if (!gone) this.metrics.recordLink(name, await this.linkBounded(unit));
    let problem: string | null = null;
    if (gone) problem = 'the device is gone (registers read all-ones, or the device vanished): hfi1_sdma_device_gone is 1';
    else if (!r.ok) problem = `sampling failed: ${r.message}`;
    this.problem(name, problem);
    return up;
  }

  /** Sample a unit, but never wait on it longer than the sample timeout. */
  private async sampleBounded(unit: Unit): Promise<Outcome> {
    const name = unit.info.name;
    if (this.pending.has(name)) return { ok: false, message: 'the previous sample has not finished yet', gone: false };
    const limitMs = this.o.sampleTimeoutMs ?? 5000;
    const timer = (this.o.timer ?? realTimer)(limitMs);
    let result: Outcome | null = null;
    const sample = unit.sample().then(
      (samples) => {
        result = { ok: true, samples };
      },
      (e: unknown) => {
        const gone = isHfi1SdmaError(e) && e.code === 'E_DEVICE_GONE';
        result = { ok: false, message: e instanceof Error ? e.message : String(e), gone };
      },
    );
    await Promise.race([sample, timer.done]);
    timer.cancel();
    if (result !== null) return result;
    this.pending.set(name, sample);
    void sample.finally(() => this.pending.delete(name));
    return { ok: false, message: `no answer within ${limitMs} ms (a source blocks)`, gone: false };
  }

  /** `p`, or null when it takes longer than the sample timeout (a late rejection is then ignored). */
  private async bounded<T>(p: Promise<T>): Promise<T | null> {
    p.catch(() => undefined);
    const timer = (this.o.timer ?? realTimer)(this.o.sampleTimeoutMs ?? 5000);
    try {
      return await Promise.race([p, timer.done.then(() => null)]);
    } finally {
      timer.cancel();
    }
  }

  /** The unit's link, or null when it has none, the read fails, or it takes longer than the sample timeout. */
  private async linkBounded(unit: Unit): Promise<LinkState | null> {
    if (!unit.link) return null;
    const timer = (this.o.timer ?? realTimer)(this.o.sampleTimeoutMs ?? 5000);
    try {
      const read = unit.link().catch(() => null);
      return await Promise.race([read, timer.done.then(() => null)]);
    } finally {
      timer.cancel();
    }
  }

  private warningsOf(unit: Unit): readonly SourceWarning[] {
    let warnings: readonly SourceWarning[] = [];
    try {
      warnings = unit.warnings?.() ?? [];
    } catch {
      // a unit that cannot list its warnings has none to show
    }
    for (const w of warnings) {
      const id = `${unit.info.name}/${w.key}`;
      if (this.warned.has(id)) continue;
      this.warned.add(id);
      // Most messages name their file already; the path is added only where one does not.
      const text = w.message.startsWith(w.path) ? w.message : `${w.path}: ${w.message}`;
      this.o.log(`hfi1-sdma export: ${unit.info.name}: ${text}`);
    }
    return warnings;
  }

  /** Log a unit's problem when it changes (not every round), and its recovery. */
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
