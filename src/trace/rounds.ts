// The monitor's rounds as a timeline: one process per host and unit, one thread track per engine and per port.
// On an engine's track its states are complete slices (one state at a time, back to back), its verdicts when not
// healthy (stalled, halted, backpressure, gone, stranded) are async spans with the engine's id and the findings'
// codes, and halts, recoveries and engine errors are instants; its in-flight and free counts and its rates are
// counters. Each waiter's sleep is an async span of its own id from when it was first seen asleep to when it left
// the list, with an async instant when the rule judges it stranded. A port's track holds its link states as
// slices and each change as an instant. A span still open when the timeline ends closes at the last round.
import type { EngineSample, PortLink, UnitInfo } from '../backend.js';
import type { Finding } from '../monitor/findings.js';
import type { EngineRound, Provenance, Round, UnitRound } from '../monitor/round.js';
import { linkStateText, whoText } from '../monitor/words.js';
import { freeCount } from '../progress/ring.js';
import { waiterKey } from '../progress/waiters.js';
import {
  asyncEvent,
  counter,
  instant,
  micros,
  processMeta,
  slice,
  type TraceClock,
  type TraceEvent,
  threadMeta,
} from './format.js';
import { PORT_TRACK, pidOf, tidOf } from './ids.js';

/** Where the events go. */
export interface TraceSink {
  add(e: TraceEvent): void;
}

/** The clock a provenance's round times count in. */
export function clockOf(p: Provenance): TraceClock {
  if (p.backend === 'emu') return 'virtual';
  if (p.backend === 'snapshot' && p.capturedAtMs === null) return 'relative';
  return 'epoch';
}

/**
 * The time of a round on its samples' clock: the first engine sample's (a recording's round carries the instant's
 * offset, its samples the recorded time), else the round's.
 */
export function roundTimeMs(round: Round, unit?: UnitRound): number {
  const u = unit ?? round.units.find((x) => x.engines.length > 0);
  return u?.engines[0]?.sample.timeMs ?? round.timeMs;
}

/** The host part of a process name: the provenance's host, else what was read. */
export function hostOf(p: Provenance): string {
  return p.host ?? (p.backend === 'emu' ? 'emulator' : p.emulated ? 'emulated host' : 'sysroot');
}

const CLOCK_WORDS: Readonly<Record<TraceClock, string>> = {
  epoch: 'epoch µs',
  virtual: "the emulator's virtual µs",
  relative: 'µs from the first instant',
  steps: 'race steps (1 µs each)',
};

/** The verdicts that open a span: the unhealthy ones (not idle, progressing, nor unknown while it warms up). */
const SPAN_VERDICTS = new Set(['stalled', 'halted', 'backpressure', 'gone']);
/** Waiter verdicts worth an instant when a waiter reaches them. */
const WAITER_ALERTS = new Set(['stranded', 'orphaned', 'psm-stall', 'error-state']);

interface Open {
  name: string;
  startUs: number;
  args: Record<string, unknown>;
}

interface EngineMark {
  tid: number;
  state: Open | null;
  verdict: Open | null;
  halts: number;
  recoveries: number;
  errCount: number | null;
  dqf: number | null;
  timeMs: number;
  lastUs: number;
}

interface WaiterMark {
  id: string;
  name: string;
  tid: number;
  verdict: string;
}

interface UnitMark {
  pid: number;
  name: string;
  engines: Map<number, EngineMark>;
  ports: Map<number, { open: Open; tid: number }>;
  waiters: Map<string, WaiterMark>;
  status: string;
  lastUs: number;
}

/** Builds the timeline of rounds added one at a time; `finish` closes what is still open. */
export class RoundTimeline {
  private readonly units = new Map<string, UnitMark>();
  private clock: TraceClock | null = null;

  constructor(private readonly sink: TraceSink) {}

  /** The clock of the rounds seen (null before the first). */
  get clockName(): TraceClock | null {
    return this.clock;
  }

  /** Add one round. */
  add(round: Round): void {
    this.clock ??= clockOf(round.provenance);
    for (const u of round.units) this.addUnit(round, u);
  }

  /** An instant on a unit's own track (a capture taken, a log line), or on an engine's when `engine` is given. */
  mark(unit: UnitInfo | string, timeMs: number, name: string, cat: string, args: Record<string, unknown>, engine?: number): void {
    const u = typeof unit === 'string' ? this.units.get(unit) : this.unitMark(unit, null);
    if (!u) return;
    const tid = engine === undefined ? tidOf(u.pid, 0) : (u.engines.get(engine)?.tid ?? tidOf(u.pid, 0));
    this.sink.add(instant(u.pid, tid, name, cat, micros(timeMs), args));
  }

  /** Close every open slice and span at the last time seen. */
  finish(): void {
    for (const u of this.units.values()) {
      for (const [engine, m] of u.engines) {
        this.closeState(u, m);
        if (m.verdict) this.closeVerdict(u, engine, m, m.lastUs);
      }
      for (const p of u.ports.values())
        this.sink.add(slice(u.pid, p.tid, p.open.name, 'link', p.open.startUs, u.lastUs, p.open.args));
      u.ports.clear();
      for (const w of u.waiters.values()) this.sink.add(asyncEvent('e', u.pid, w.tid, 'waiter', w.id, w.name, u.lastUs));
      u.waiters.clear();
    }
  }

  private unitMark(info: UnitInfo, p: Provenance | null): UnitMark {
    let u = this.units.get(info.name);
    if (u) return u;
    const host = p ? hostOf(p) : 'host';
    const pid = pidOf(`${host}\0${info.name}`);
    u = { pid, name: info.name, engines: new Map(), ports: new Map(), waiters: new Map(), status: 'up', lastUs: 0 };
    this.units.set(info.name, u);
    const f = info.flavour;
    const labels = [
      `${f.module} ${f.chip} ${f.driver}`,
      info.pci,
      `descq_cnt ${info.descqCnt}`,
      `clock ${CLOCK_WORDS[this.clock ?? 'epoch']}`,
    ]
      .filter((l) => l !== '')
      .join(', ');
    for (const e of processMeta(pid, `${host} ${info.name}`, labels, this.units.size)) this.sink.add(e);
    for (const e of threadMeta(pid, tidOf(pid, 0), `${info.name} (unit)`, 0)) this.sink.add(e);
    return u;
  }

  private addUnit(round: Round, ur: UnitRound): void {
    const u = this.unitMark(ur.info, round.provenance);
    const nowUs = micros(roundTimeMs(round, ur));
    u.lastUs = Math.max(u.lastUs, nowUs);
    if (ur.status !== u.status) {
      this.sink.add(instant(u.pid, tidOf(u.pid, 0), `unit ${ur.status}`, 'unit', nowUs, { problem: ur.problem }));
      u.status = ur.status;
    }
    const codes = findingCodes(round.findings, ur.info.name);
    for (const e of ur.engines) this.addEngine(u, ur.info, e, codes.get(e.sample.engine) ?? []);
    for (const p of ur.ports) this.addPort(u, p, nowUs);
    if (ur.waiters.listed) this.addWaiters(u, ur, nowUs);
  }

  private engineMark(u: UnitMark, s: EngineSample): EngineMark {
    let m = u.engines.get(s.engine);
    if (m) return m;
    const tid = tidOf(u.pid, 1 + s.engine);
    const where = [s.cpu === null ? null : `cpu ${s.cpu}`, s.vl === null ? null : `vl ${s.vl}`].filter(Boolean).join(', ');
    for (const e of threadMeta(u.pid, tid, `sdma${s.engine}${where ? ` (${where})` : ''}`, 1 + s.engine)) this.sink.add(e);
    m = { tid, state: null, verdict: null, halts: 0, recoveries: 0, errCount: null, dqf: null, timeMs: s.timeMs, lastUs: 0 };
    u.engines.set(s.engine, m);
    return m;
  }

  private addEngine(u: UnitMark, info: UnitInfo, e: EngineRound, codes: string[]): void {
    const s = e.sample;
    const c = e.verdict;
    const first = !u.engines.has(s.engine);
    const m = this.engineMark(u, s);
    const nowUs = micros(s.timeMs);
    const state = s.gone ? 'gone' : (s.state ?? 'unknown');
    if (m.state?.name !== state) {
      this.closeState(u, m, nowUs);
      m.state = { name: state, startUs: nowUs, args: { state } };
    }
    const label =
      (e.waiters?.stranded ?? 0) > 0
        ? 'stranded'
        : SPAN_VERDICTS.has(c.verdict)
          ? c.verdict
          : (e.waiters?.probable ?? 0) > 0
            ? 'probably stranded'
            : null;
    if ((m.verdict?.name ?? null) !== label) {
      if (m.verdict) this.closeVerdict(u, s.engine, m, nowUs);
      if (label !== null) {
        m.verdict = { name: label, startUs: nowUs, args: { verdict: c.verdict, reason: c.reason, codes } };
        this.sink.add(asyncEvent('b', u.pid, m.tid, 'verdict', verdictId(u, s.engine), label, nowUs, m.verdict.args));
      }
    }
    if (!first) {
      if (c.halts > m.halts) this.engineInstant(u, m, 'halt', nowUs, { state, errors: c.lastErrors.map((b) => b.name) });
      if (c.recoveries > m.recoveries) this.engineInstant(u, m, 'recovered', nowUs, { state });
      if (c.errCount !== null && m.errCount !== null && c.errCount > m.errCount)
        this.engineInstant(u, m, 'engine error', nowUs, { errCount: c.errCount, errors: c.lastErrors.map((b) => b.name) });
    }
    const w = s.gone ? null : s.sw;
    const ring: Record<string, number> = {};
    if (c.inFlight !== null) ring.in_flight = c.inFlight;
    if (w) ring.free = freeCount(info.descqCnt, w.descqHead, w.descqTail);
    if (Object.keys(ring).length > 0) this.sink.add(counter(u.pid, `sdma${s.engine} ring`, nowUs, ring));
    const rates: Record<string, number> = {};
    if (c.descPerSec !== null) rates.desc_per_s = Math.round(c.descPerSec);
    const dqf = w ? w.descqFullCount : null;
    if (!first && dqf !== null && m.dqf !== null && s.timeMs > m.timeMs)
      rates.dqf_per_s = Math.round(((dqf - m.dqf) * 1000) / (s.timeMs - m.timeMs));
    if (Object.keys(rates).length > 0) this.sink.add(counter(u.pid, `sdma${s.engine} rates`, nowUs, rates));
    m.halts = c.halts;
    m.recoveries = c.recoveries;
    m.errCount = c.errCount;
    m.dqf = dqf;
    m.timeMs = s.timeMs;
    m.lastUs = nowUs;
    u.lastUs = Math.max(u.lastUs, nowUs);
  }

  private engineInstant(u: UnitMark, m: EngineMark, name: string, ts: number, args: Record<string, unknown>): void {
    this.sink.add(instant(u.pid, m.tid, name, 'engine', ts, args));
  }

  private closeState(u: UnitMark, m: EngineMark, endUs = m.lastUs): void {
    if (!m.state) return;
    this.sink.add(slice(u.pid, m.tid, m.state.name, 'state', m.state.startUs, endUs, m.state.args));
    m.state = null;
  }

  private closeVerdict(u: UnitMark, engine: number, m: EngineMark, endUs: number): void {
    const v = m.verdict;
    if (!v) return;
    this.sink.add(asyncEvent('e', u.pid, m.tid, 'verdict', verdictId(u, engine), v.name, endUs));
    m.verdict = null;
  }

  private addPort(u: UnitMark, p: PortLink, nowUs: number): void {
    const name = linkStateText(p);
    const had = u.ports.get(p.port);
    if (had?.open.name === name) return;
    const tid = had?.tid ?? tidOf(u.pid, PORT_TRACK + p.port);
    if (had) {
      this.sink.add(slice(u.pid, tid, had.open.name, 'link', had.open.startUs, nowUs, had.open.args));
      this.sink.add(instant(u.pid, tid, `link ${had.open.name} → ${name}`, 'link', nowUs, { from: had.open.name, to: name }));
    } else {
      for (const e of threadMeta(u.pid, tid, `port ${p.port}`, PORT_TRACK + p.port)) this.sink.add(e);
    }
    u.ports.set(p.port, { tid, open: { name, startUs: nowUs, args: { state: p.state, physState: p.physState, rate: p.rate } } });
  }

  private addWaiters(u: UnitMark, ur: UnitRound, nowUs: number): void {
    const now = new Set<string>();
    for (const j of ur.waiters.judgements) {
      const w = j.waiter;
      const key = waiterKey(w);
      now.add(key);
      let mark = u.waiters.get(key);
      if (!mark) {
        const tid = w.engine !== null ? (u.engines.get(w.engine)?.tid ?? tidOf(u.pid, 0)) : tidOf(u.pid, 0);
        mark = { id: `${u.name}/${key}`, name: whoText(w), tid, verdict: 'waiting' };
        u.waiters.set(key, mark);
        const args = {
          kind: w.kind,
          engine: w.engine,
          waitsFor: w.waitsFor,
          descriptorsNeeded: w.descriptorsNeeded,
          source: w.source,
        };
        this.sink.add(asyncEvent('b', u.pid, mark.tid, 'waiter', mark.id, mark.name, Math.min(nowUs, micros(w.sinceMs)), args));
      }
      if (j.verdict !== mark.verdict && WAITER_ALERTS.has(j.verdict))
        this.sink.add(asyncEvent('n', u.pid, mark.tid, 'waiter', mark.id, j.verdict, nowUs, { reason: j.reason }));
      mark.verdict = j.verdict;
    }
    for (const [key, mark] of u.waiters) {
      if (now.has(key)) continue;
      this.sink.add(asyncEvent('e', u.pid, mark.tid, 'waiter', mark.id, mark.name, nowUs));
      u.waiters.delete(key);
    }
  }
}

function verdictId(u: UnitMark, engine: number): string {
  return `${u.name}/sdma${engine}`;
}

/** The codes of a round's findings per engine of one unit. */
function findingCodes(findings: readonly Finding[], unit: string): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const f of findings) {
    if (f.unit !== unit || f.engine === null) continue;
    const list = out.get(f.engine) ?? [];
    if (!list.includes(f.code)) list.push(f.code);
    out.set(f.engine, list);
  }
  return out;
}
