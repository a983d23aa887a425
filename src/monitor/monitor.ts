// The one observation loop. A round samples every selected unit (engines, waiters, every port), bounded
// where asked, classifies each engine against its own history and judges each unit's waiters against the
// same round's engines, keeps every track keyed by unit name (numbers repeat across modules: hfi1_0 and
// hfi2_0), follows units that appear, vanish or reload, and states the round's findings. Every command and
// the exporter render its rounds; its state can be carried between runs (state.ts).
import type { Backend, EngineSample, PortLink, QpOwner, SourceWarning, Unit, UnitInfo } from '../backend.js';
import { Hfi1SdmaError, isHfi1SdmaError, usageError } from '../errors.js';
import { type Classification, classify, DEFAULT_CLASSIFY_OPTIONS, type EngineTrack, newTrack } from '../progress/classify.js';
import { DEFAULT_STRAND_MS, newStrandTrack, type StrandTrack } from '../progress/strand.js';
import { lookupUnit, type UnitId } from '../unit-id.js';
import { UnitDiscovery } from './discovery.js';
import { type FindingHistory, finding, findingsOf, newFindingHistory, rememberRound } from './findings.js';
import { nextInstant, realSleep, type Sleep } from './pace.js';
import { judgeCauses, markBulkService, type PortSample, readPortCounters, rememberLinkCounters, rememberPorts } from './ports.js';
import { BoundedReads, type Timer } from './read.js';
import type { Draft, EngineRound, Provenance, Round, UnitRound, UnitWaitersRound } from './round.js';
import { blindWaiters, engineWaiters, NO_WAITERS_REASON, observeWaiters, qpsToOwn } from './waiters.js';

/** How the monitor reads and judges. */
export interface MonitorOptions {
  /** No head movement this long while in flight is a stall (default 1000). */
  stallMs?: number;
  /** A halt shorter than this is a recovery (default: the stall window, so a halt is judged as a stall is). */
  recoveryMs?: number;
  /** A waiter candidate must hold this long and 3 samples to be stranded (default 200). */
  strandMs?: number;
  /** Only this unit (number or name); every unit when absent. */
  unit?: UnitId | undefined;
  /** Waiters: read each round (a failed read makes the unit unlisted), `strict` (a failed read rejects) or `off`. */
  waiters?: 'read' | 'strict' | 'off';
  /** Ports: read every port's link each round (default true). */
  ports?: boolean;
  /** Bound every read of a unit to this long; unbounded when absent (ms). */
  readTimeoutMs?: number;
  timer?: Timer;
  /** No unit (or none that --unit names) rejects with E_NO_DEVICE (commands); otherwise the round says noUnit. */
  requireUnit?: boolean;
  /** Open the backend afresh (see UnitDiscovery): units that appear, vanish or reload are followed. */
  reopen?: () => Promise<Backend>;
  rediscoverMs?: number;
  /** The wall clock for the rediscovery period (ms). */
  wallNowMs?: () => number;
  /** This host's name, for the provenance of a live read. */
  host?: string | null;
  /** What a reduced view lacks, as a note for a unit (null when nothing that matters is missing). */
  reduced?: (info: UnitInfo) => string | null;
  /** The classifier (injected for tests of verdicts it does not give yet). */
  classify?: (
    track: EngineTrack,
    s: EngineSample,
    opts: typeof DEFAULT_CLASSIFY_OPTIONS & { descqCnt: number },
  ) => Classification;
  /** Called when a listing problem appears or clears (null). */
  onListingProblem?: (message: string | null) => void;
}

/** What the monitor carries from round to round (and, through state.ts, from run to run). */
export interface MonitorTracks {
  index: number;
  engines: Map<string, EngineTrack>;
  strands: Map<string, StrandTrack>;
  history: FindingHistory;
}

/** Fresh tracks. */
export function newMonitorTracks(): MonitorTracks {
  return { index: 0, engines: new Map(), strands: new Map(), history: newFindingHistory() };
}

/** The provenance of a backend's numbers. */
export function provenanceOf(backend: Backend, host: string | null = null): Provenance {
  const o = backend.origin;
  const rec = backend.recording;
  return {
    backend: rec ? 'snapshot' : backend.kind,
    emulated: backend.kind === 'emu' || o?.emulated === true,
    host: o?.host ?? (backend.kind === 'emu' ? null : host),
    source: rec?.source ?? null,
    capturedAtMs: o?.capturedAtMs ?? null,
    instants: rec ? rec.timesMs.length : null,
    toolVersion: o?.toolVersion ?? null,
  };
}

/** A unit selection that matches no unit, or several, is the commands' no-device or usage error; null when it matches one. */
export function selectionError(infos: readonly UnitInfo[], unit: UnitId): Hfi1SdmaError | null {
  const hit = lookupUnit(infos, unit);
  if ('ambiguous' in hit) {
    const names = hit.ambiguous.map((u) => u.name);
    return usageError(
      `--unit ${unit} matches ${names.join(' and ')} on this host: give the name (--unit ${names[names.length - 1]})`,
    );
  }
  if ('none' in hit) {
    const have = infos.map((u) => u.name).join(', ') || 'no unit';
    const asked = typeof unit === 'string' ? unit : `hfi1_${unit} or hfi2_${unit}`;
    return new Hfi1SdmaError('E_NO_DEVICE', `no unit ${asked}: this host has ${have}`);
  }
  return null;
}

/** Every port's link of a unit: links(), else link() as port 1; empty when neither answers. */
async function readPorts(unit: Unit, reads: BoundedReads): Promise<PortLink[]> {
  try {
    if (unit.links) return (await reads.within(unit.links())) ?? [];
    if (unit.link) {
      const l = await reads.within(unit.link());
      return l ? [{ port: 1, state: l.state, physState: l.physState, rate: l.rate }] : [];
    }
  } catch {
    // a port file that cannot be read is not shown; the engines are what the round is about
  }
  return [];
}

/** The one observation loop over a backend. */
export class Monitor {
  readonly provenance: Provenance;
  /** A recording of one instant: nothing moves, so no time-based verdict. */
  readonly frozen: boolean;
  private tracks: MonitorTracks;
  private readonly reads: BoundedReads;
  private readonly discovery: UnitDiscovery;
  private readonly said = new Map<string, Set<string>>();
  /** Owners of the QPs findings name, per unit, by QPN and creator (kept while the QP stays judged). */
  private readonly owners = new Map<string, Map<string, QpOwner>>();
  private missed = false;
  private listingProblem: string | null = null;
  /** Each unit's recent port counters, by unit name (the span of a stall's cause). */
  private readonly portHistory = new Map<string, PortSample[]>();

  constructor(
    readonly backend: Backend,
    private readonly o: MonitorOptions = {},
    tracks: MonitorTracks = newMonitorTracks(),
  ) {
    this.tracks = tracks;
    this.provenance = provenanceOf(backend, o.host ?? null);
    this.frozen = backend.recording !== undefined && backend.recording.timesMs.length <= 1;
    this.reads = new BoundedReads(o.readTimeoutMs ?? null, o.timer);
    this.discovery = new UnitDiscovery({
      backend,
      reopen: o.reopen,
      rediscoverMs: o.rediscoverMs ?? 30_000,
      problem: (message) => {
        this.listingProblem = message;
        o.onListingProblem?.(message);
      },
    });
  }

  /** The stall window (ms). */
  get stallMs(): number {
    return this.o.stallMs ?? DEFAULT_CLASSIFY_OPTIONS.stallMs;
  }

  /** The strand window (ms). */
  get strandMs(): number {
    return this.o.strandMs ?? DEFAULT_STRAND_MS;
  }

  /** What the monitor carries now (to save between runs). */
  state(): MonitorTracks {
    return this.tracks;
  }

  /** Close what the monitor opened itself (a reopened backend); the caller's backend stays open. */
  async close(): Promise<void> {
    await this.discovery.close();
  }

  /** The units of this round, selected; a selection that matches none rejects (requireUnit) or is empty. */
  private async units(): Promise<Unit[]> {
    const all = await this.discovery.units(this.o.wallNowMs?.() ?? 0, this.missed, this.reads.busy());
    if (this.o.requireUnit && all.length === 0 && this.discovery.vanished.size === 0) {
      const why = this.listingProblem?.startsWith('cannot list units') ? `: ${this.listingProblem}` : '';
      throw new Hfi1SdmaError(
        'E_NO_DEVICE',
        `no hfi1 or hfi2 unit found (${this.backend.kind} backend)${why}; run 'hfi1-sdma doctor', or try --backend emu`,
      );
    }
    const unit = this.o.unit;
    if (unit === undefined) return all;
    const infos = all.map((u) => u.info);
    const err = infos.length > 0 ? selectionError(infos, unit) : null;
    if (err && this.o.requireUnit) throw err;
    const hit = infos.length > 0 ? lookupUnit(infos, unit) : { none: true as const };
    return 'found' in hit ? all.filter((u) => u.info.name === hit.found.name) : [];
  }

  /**
   * Whose the QPs are that the findings will name: asked of the unit once per QP (and creator) while it stays
   * judged, and forgotten when it goes; within the read timeout, and nothing when the unit cannot tell.
   */
  private async ownersOf(unit: Unit, uw: UnitWaitersRound): Promise<QpOwner[]> {
    const name = unit.info.name;
    const want = qpsToOwn(uw);
    const known = this.owners.get(name) ?? new Map<string, QpOwner>();
    const key = (q: { qpn: number; creatorPid: number | null }) => `${q.qpn}:${q.creatorPid ?? ''}`;
    const kept = new Map([...known].filter(([k]) => want.some((q) => key(q) === k)));
    const ask = want.filter((q) => !kept.has(key(q)));
    if (ask.length > 0 && unit.qpOwners) {
      try {
        const got = await this.reads.within(unit.qpOwners(ask));
        for (const [i, o] of (got ?? []).entries()) {
          const q = ask[i];
          if (q && o) kept.set(key(q), o);
        }
      } catch (e) {
        if (!isHfi1SdmaError(e)) throw e;
      }
    }
    this.owners.set(name, kept);
    return want.map((q) => kept.get(key(q))).filter((o): o is QpOwner => o !== undefined);
  }

  /** Forget a unit's tracks: it warms up afresh once readable. */
  private forget(name: string): void {
    this.owners.delete(name);
    this.tracks.strands.delete(name);
    for (const key of [...this.tracks.engines.keys()]) if (key.startsWith(`${name}/`)) this.tracks.engines.delete(key);
  }

  private classifyAll(unit: Unit, samples: readonly EngineSample[]): Draft<EngineRound>[] {
    const name = unit.info.name;
    const opts = {
      ...DEFAULT_CLASSIFY_OPTIONS,
      stallMs: this.stallMs,
      recoveryMs: this.o.recoveryMs ?? this.stallMs,
      descqCnt: unit.info.descqCnt,
      frozen: this.frozen,
    };
    return samples.map((s) => {
      const key = `${name}/${s.engine}`;
      let track = this.tracks.engines.get(key);
      if (!track) {
        track = newTrack();
        this.tracks.engines.set(key, track);
      }
      return { sample: s, verdict: (this.o.classify ?? classify)(track, s, opts), waiters: null, cause: null };
    });
  }

  private newWarnings(unit: Unit): { all: readonly SourceWarning[]; fresh: SourceWarning[] } {
    let all: readonly SourceWarning[] = [];
    try {
      all = unit.warnings?.() ?? [];
    } catch {
      // a unit that cannot list its warnings has none to show
    }
    const name = unit.info.name;
    const said = this.said.get(name) ?? new Set<string>();
    this.said.set(name, said);
    const fresh: SourceWarning[] = [];
    for (const w of all) {
      const key = `${w.key}\0${w.path}`;
      if (said.has(key)) continue;
      said.add(key);
      fresh.push(w);
    }
    return { all, fresh };
  }

  private async readUnit(unit: Unit): Promise<UnitRound> {
    const name = unit.info.name;
    const r = await this.reads.sample(unit);
    // A command reports a defect as one (exit 70, with its stack); the exporter serves the unit as not read.
    if (!r.ok && r.defect !== undefined && this.o.requireUnit) throw r.defect;
    const gone = r.ok ? r.samples.some((s) => s.gone) : r.gone;
    const status = r.ok ? (gone ? 'gone' : 'up') : gone ? 'gone' : 'failed';
    const engines = r.ok ? this.classifyAll(unit, r.samples) : [];
    let waiters = blindWaiters(status === 'up' ? NO_WAITERS_REASON : `${name} was not read this round`);
    if (status === 'up' && this.o.waiters !== 'off') {
      let track = this.tracks.strands.get(name);
      if (!track) {
        track = newStrandTrack();
        this.tracks.strands.set(name, track);
      }
      const samples = engines.map((e) => e.sample);
      waiters = await observeWaiters(unit, samples, track, {
        strandMs: this.strandMs,
        frozen: this.frozen,
        descqCnt: unit.info.descqCnt,
        strict: this.o.waiters === 'strict',
        ...(this.o.readTimeoutMs === undefined ? {} : { read: (p) => this.reads.within(p) }),
      });
      const per = engineWaiters(
        waiters,
        engines.map((e) => e.sample.engine),
      );
      for (const e of engines) e.waiters = per.get(e.sample.engine) ?? null;
      waiters = { ...waiters, owners: await this.ownersOf(unit, waiters) };
    }
    if (status !== 'up') this.forget(name);
    const ports = status === 'gone' || this.o.ports === false ? [] : await readPorts(unit, this.reads);
    const portCounters = status !== 'up' || this.o.ports === false ? [] : await readPortCounters(unit, this.reads);
    if (status === 'up') {
      markBulkService(unit.info, engines);
      let history = this.portHistory.get(name);
      if (!history) {
        history = [];
        this.portHistory.set(name, history);
      }
      const timeMs = engines[0]?.sample.timeMs ?? 0;
      if (portCounters.length > 0) rememberPorts(history, { timeMs, ports: portCounters });
      const seen = ports.map((p) => p.port).filter((p) => this.tracks.history.activeSeen.has(`${name}/${p}`));
      judgeCauses(engines, history, ports, seen);
      // A state saved before the marks existed (or a bad one) starts them afresh.
      if (!(this.tracks.history.portMarks instanceof Map)) this.tracks.history.portMarks = new Map();
      rememberLinkCounters(this.tracks.history.portMarks, name, portCounters, timeMs);
    } else this.portHistory.delete(name);
    const { all, fresh } = this.newWarnings(unit);
    let problem: string | null = null;
    if (status === 'gone') problem = r.ok ? 'registers read all-ones' : r.message;
    else if (!r.ok) problem = r.message;
    return {
      unit,
      info: unit.info,
      status,
      error: r.ok ? null : r.error,
      problem,
      engines,
      waiters,
      ports,
      portCounters,
      activeSeen: [],
      warnings: all,
      newWarnings: fresh,
    };
  }

  /** One round: sample every selected unit once, judge, and state the findings. */
  async round(): Promise<Round> {
    const units = await this.units();
    const read = await Promise.all(units.map((u) => this.readUnit(u)));
    const vanished = [...this.discovery.vanished.values()].filter(
      (info) => this.o.unit === undefined || 'found' in lookupUnit([info], this.o.unit),
    );
    for (const info of vanished) this.forget(info.name);
    this.missed = units.length === 0 || read.some((u) => u.status !== 'up') || vanished.length > 0;
    this.tracks.index += 1;
    rememberRound(this.tracks.history, read);
    const seen = read.map((u) => ({
      ...u,
      activeSeen: u.ports.map((p) => p.port).filter((p) => this.tracks.history.activeSeen.has(`${u.info.name}/${p}`)),
    }));
    const first = seen.find((u) => u.engines.length > 0)?.engines[0]?.sample.timeMs;
    const rec = this.backend.recording;
    const noUnit = units.length === 0 && vanished.length === 0;
    return {
      index: this.tracks.index,
      timeMs: rec ? (rec.timesMs[rec.position()] ?? 0) : (first ?? 0),
      provenance: this.provenance,
      units: seen,
      vanished,
      noUnit,
      listingProblem: this.listingProblem,
      findings: noUnit ? [this.noUnitFinding()] : findingsOf(seen, vanished, this.tracks.history, this.o.reduced),
    };
  }

  /** SD304: no unit (or none that the selection names), so nothing was judged: never a healthy round. */
  private noUnitFinding() {
    const which = this.o.unit === undefined ? 'no hfi1 or hfi2 unit' : `no unit ${this.o.unit} (of those selected)`;
    return finding('noUnit', { unit: null }, `${which} found (${this.backend.kind} backend): nothing was judged`, {
      action: "run 'hfi1-sdma doctor' to see why (the driver not loaded, no adapter)",
    });
  }
}

/** How `rounds` paces itself. */
export interface RoundsOptions {
  /** Time between rounds (ms); a recording goes instant by instant instead. */
  intervalMs: number;
  /** Stops the rounds (a pending sleep ends at once). */
  signal?: AbortSignal;
  /** Stop after this many rounds. */
  count?: number;
  /** The wall-clock sleep (a fake in tests). */
  sleep?: Sleep;
}

/** The monitor's rounds, one per interval (per recorded instant), until the signal, the count or the recording ends. */
export async function* rounds(monitor: Monitor, o: RoundsOptions): AsyncGenerator<Round> {
  const count = o.count ?? Number.POSITIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    if (i > 0 && !(await nextInstant(monitor.backend, o.intervalMs, o.sleep ?? realSleep, o.signal))) return;
    if (o.signal?.aborted) return;
    yield await monitor.round();
  }
}
