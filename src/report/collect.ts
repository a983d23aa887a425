// Gathering a report from the monitor's rounds, one round at a time: every number is the monitor's (its
// verdicts, its classifier's in-flight count and retirement rate, its findings); this only keeps them per unit
// and engine in time order, and remembers every finding a round stated, with when it was first and last seen.
import type { UnitInfo } from '../backend.js';
import { type Finding, sortFindings } from '../monitor/findings.js';
import type { Round, UnitRound } from '../monitor/round.js';
import { decodeEngErr } from '../progress/csr.js';
import type {
  EngineSeries,
  PortPoint,
  ReportData,
  ReportLog,
  SeenFinding,
  StatusPoint,
  UnitReport,
  WaitersAtEnd,
} from './model.js';

/** Findings kept per unit at most (worst first); a round rarely states more than a few per engine. */
export const MAX_FINDINGS_PER_UNIT = 200;

interface UnitAcc {
  info: UnitInfo;
  status: StatusPoint[];
  engines: Map<number, EngineSeries>;
  ports: Map<number, PortPoint[]>;
  waiters: WaitersAtEnd;
  warnings: UnitRound['warnings'];
}

function findingKey(f: Finding): string {
  return `${f.code}\0${f.unit ?? ''}\0${f.engine ?? ''}\0${f.port ?? ''}`;
}

/** What the report says about the capture besides the rounds. */
export interface ReportMeta {
  sourceLabel: string;
  toolVersion: string;
  renderedAtMs: number;
  stallMs: number;
  strandMs: number;
}

/** Collects the rounds of one capture into ReportData. */
export class ReportCollector {
  private first: Round | null = null;
  private last: Round | null = null;
  private t0 = 0;
  private readonly timesMs: number[] = [];
  private readonly units = new Map<string, UnitAcc>();
  private readonly seen = new Map<string, SeenFinding>();
  private readonly listing: string[] = [];
  /** The kernel's uptime (s) at each round, where known. */
  private readonly uptimes: { tMs: number; uptimeSec: number }[] = [];

  /** Keep one round; `uptimeSec` is the kernel's uptime when it was read, where known. */
  add(round: Round, uptimeSec: number | null = null): void {
    if (!this.first) {
      this.first = round;
      this.t0 = round.timeMs;
    }
    this.last = round;
    const tMs = round.timeMs - this.t0;
    this.timesMs.push(tMs);
    if (uptimeSec !== null && Number.isFinite(uptimeSec)) this.uptimes.push({ tMs, uptimeSec });
    if (round.listingProblem && !this.listing.includes(round.listingProblem)) this.listing.push(round.listingProblem);
    for (const u of round.units) this.addUnit(u, tMs);
    for (const info of round.vanished) this.acc(info).status.push({ tMs, status: 'vanished', problem: null });
    const now = new Set<string>();
    for (const f of round.findings) {
      const key = findingKey(f);
      now.add(key);
      const had = this.seen.get(key);
      this.seen.set(key, { finding: f, firstMs: had?.firstMs ?? tMs, lastMs: tMs, current: true });
    }
    for (const [key, s] of this.seen) if (!now.has(key)) s.current = false;
  }

  private acc(info: UnitInfo): UnitAcc {
    let a = this.units.get(info.name);
    if (!a) {
      a = {
        info,
        status: [],
        engines: new Map(),
        ports: new Map(),
        waiters: { tMs: null, readMs: null, judgements: [], owners: [], visibility: [], psmStalls: 0, listed: false },
        warnings: [],
      };
      this.units.set(info.name, a);
    }
    return a;
  }

  private addUnit(u: UnitRound, tMs: number): void {
    const a = this.acc(u.info);
    a.info = u.info;
    a.status.push({ tMs, status: u.status, problem: u.problem });
    a.warnings = u.warnings;
    for (const e of u.engines) {
      const s = e.sample;
      let series = a.engines.get(s.engine);
      if (!series) {
        series = { engine: s.engine, points: [] };
        a.engines.set(s.engine, series);
      }
      const bits = s.csr && !s.gone ? decodeEngErr(s.csr.errStatus).map((b) => (b.halts ? `${b.name}!` : b.name)) : [];
      series.points.push({
        tMs,
        verdict: e.verdict.verdict,
        reason: e.verdict.reason,
        state: s.state,
        inFlight: e.verdict.inFlight,
        descPerSec: e.verdict.descPerSec,
        descqFull: s.sw && !s.gone ? s.sw.descqFullCount : null,
        errCount: e.verdict.errCount,
        errorBits: bits,
        waiters: e.waiters?.count ?? null,
        stranded: e.waiters?.stranded ?? 0,
        probable: e.waiters?.probable ?? 0,
      });
    }
    for (const p of u.ports) {
      const list = a.ports.get(p.port) ?? [];
      list.push({ tMs, link: p });
      a.ports.set(p.port, list);
    }
    if (u.waiters.listed || !a.waiters.listed) {
      a.waiters = {
        tMs: u.waiters.listed ? tMs : a.waiters.tMs,
        readMs: u.waiters.timeMs,
        judgements: u.waiters.judgements,
        owners: u.waiters.owners,
        visibility: u.waiters.visibility,
        psmStalls: u.waiters.psmStalls,
        listed: u.waiters.listed,
      };
    }
  }

  /** The kernel's uptime mapped to the capture's axis: ms to add to a log timestamp (in ms), or null. */
  logOffsetMs(): number | null {
    if (this.uptimes.length === 0) return null;
    // The median of the instants' offsets: one uptime read late (a slow round) moves nothing.
    const offsets = this.uptimes.map((u) => u.tMs - u.uptimeSec * 1000).sort((a, b) => a - b);
    return offsets[Math.floor((offsets.length - 1) / 2)] ?? null;
  }

  /** The report, with the kernel log placed already (see log.ts). */
  finish(meta: ReportMeta, log: ReportLog): ReportData {
    const first = this.first;
    if (!first || !this.last) throw new Error('a report needs at least one round');
    const all = [...this.seen.values()];
    const order = (list: SeenFinding[]) => {
      const byFinding = new Map(list.map((s) => [s.finding, s]));
      return sortFindings(list.map((s) => s.finding)).map((f) => byFinding.get(f) as SeenFinding);
    };
    const ofUnit = (name: string | null) => {
      const mine = all.filter((s) => s.finding.unit === name);
      return [...order(mine.filter((s) => s.current)), ...order(mine.filter((s) => !s.current))];
    };
    const units: UnitReport[] = [...this.units.values()].map((a) => ({
      info: a.info,
      status: a.status,
      engines: [...a.engines.values()].sort((x, y) => x.engine - y.engine),
      ports: new Map([...a.ports.entries()].sort((x, y) => x[0] - y[0])),
      waiters: a.waiters,
      findings: ofUnit(a.info.name).slice(0, MAX_FINDINGS_PER_UNIT),
      warnings: a.warnings,
    }));
    const known = new Set(units.map((u) => u.info.name));
    return {
      provenance: first.provenance,
      ...meta,
      rounds: this.timesMs.length,
      spanMs: this.timesMs[this.timesMs.length - 1] ?? 0,
      timesMs: [...this.timesMs],
      units,
      otherFindings: all.filter((s) => s.finding.unit === null || !known.has(s.finding.unit)).slice(0, MAX_FINDINGS_PER_UNIT),
      listingProblems: [...this.listing],
      log,
    };
  }
}
