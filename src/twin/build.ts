// A capture's instant as the state a twin starts from. Each engine's counters, sequence and ring, each waiter with
// its need and identity, each port's link and counters are taken as recorded; what the capture shows only over time
// becomes a condition in force at the instant: a head that did not move with work in flight on either side of it (a
// chip that fetches nothing, or a port without credits when the port's counters say so), a halt that lasted, a port
// that lost its link, a device gone. What could not be taken is said, with what was assumed instead.
import type { EngineSample, PortCounters, PortLink, QpOwner, RingDump, Waiter } from '../backend.js';
import { EMU_CAP_MASK } from '../emu/context.js';
import { emuNetdev } from '../emu/ipoib.js';
import {
  type SeedCondition,
  type SeedEngine,
  type SeedPort,
  type SeedTx,
  type SeedWaiter,
  seedPacketBytes,
} from '../emu/seed.js';
import type { SenderIdentity } from '../emu/sender.js';
import type { Finding } from '../monitor/findings.js';
import type { EngineRound, UnitRound } from '../monitor/round.js';
import { chipModel } from '../progress/chip.js';
import { isEngHalted } from '../progress/csr.js';
import { engineIdsText } from '../progress/engine-ids.js';
import { inFlight } from '../progress/ring.js';
import type { WaiterJudgement, WaiterReason } from '../progress/strand.js';
import {
  type EngineView,
  TWIN_FORMAT,
  type TwinFinding,
  type TwinFixture,
  type TwinObservation,
  type TwinTraffic,
  type TwinUnit,
} from './fixture.js';
import type { CaptureReading, InstantRecord } from './read.js';

/** `n thing` or `n things`. */
function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function count(n: number, thing: string): string {
  return `${n} ${thing}${n === 1 ? '' : 's'}`;
}

/** What the notes collect while the seed is built. */
class Notes {
  readonly taken: string[] = [];
  readonly assumed: string[] = [];
  readonly notTaken: string[] = [];
}

/** A finding as the twin compares it. */
export function twinFinding(f: Finding): TwinFinding {
  return { code: f.code, severity: f.severity, unit: f.unit, engine: f.engine, port: f.port, text: f.text };
}

/** The findings a verdict is made of: every one but the notes. */
export function verdictOf(findings: readonly Finding[]): TwinFinding[] {
  return findings.filter((f) => f.severity !== 'note').map(twinFinding);
}

/** `kind who @engine`: a waiter as the replay compares it. */
export function waiterKey(w: Waiter): string {
  const who = w.kind === 'qp' ? `QP 0x${w.qpn.toString(16)}` : w.kind === 'psm' ? `PSM ${w.pid}` : `IPoIB txq ${w.txq ?? '?'}`;
  return `${who} on sdma${w.engine ?? '?'}`;
}

/** The key of a seeded waiter, as waiterKey() gives it for the waiter it was seeded from. */
export function seedWaiterKey(w: Pick<SeedWaiter, 'kind' | 'identity' | 'engine'>): string {
  const i = w.identity;
  const who =
    w.kind === 'qp'
      ? `QP 0x${(i.qpn ?? 0).toString(16)}`
      : w.kind === 'psm'
        ? `PSM ${i.pid ?? '?'}`
        : `IPoIB txq ${i.txq ?? '?'}`;
  return `${who} on sdma${w.engine}`;
}

/** Reasons a waiter sleeps that traffic decides from moment to moment (a busy engine's, or its own, in flight). */
const PASSING: ReadonlySet<WaiterReason> = new Set(['engine-busy', 'own-pending', 'unit-busy', 'off-list', 'other-list']);

/**
 * The waiters a replay compares: asleep on dmawait for a reason of their engine's state, not of passing traffic (a
 * sender asleep behind a full ring wakes at the next retirement, and the twin's traffic is not the capture's to the
 * packet).
 */
function compared(j: WaiterJudgement): boolean {
  return j.waiter.waitsFor === 'dma-desc' && !(j.verdict === 'waiting' && PASSING.has(j.reason));
}

/** Every engine's view, the waiters and the ports of one round (what the replay compares). */
export function observationOf(u: UnitRound, findings: readonly Finding[], instant: number, afterMs: number): TwinObservation {
  const engines: EngineView[] = u.engines.map((e) => {
    const sw = e.sample.sw;
    return {
      engine: e.sample.engine,
      state: e.sample.state,
      descqHead: sw ? sw.descqHead : null,
      inFlight: sw ? inFlight(sw.descqHead, sw.descqTail) : null,
    };
  });
  return {
    instant,
    afterMs,
    gone: u.status === 'gone',
    engines,
    waiters: u.waiters.judgements.filter(compared).map((j) => waiterKey(j.waiter)),
    ports: u.ports.map((p) => ({ port: p.port, state: p.state })),
    findings: verdictOf(findings),
  };
}

function num(v: bigint | null | undefined): number {
  return v === null || v === undefined ? 0 : Number(v);
}

/** The engine of `idx` in a round, or undefined. */
function engineOf(rec: InstantRecord | undefined, idx: number): EngineRound | undefined {
  return rec?.round.engines.find((e) => e.sample.engine === idx);
}

/** Halted: the halt-wait state, or STATUS.ENG_HALTED. */
function halted(s: EngineSample): boolean {
  return s.state === 's50_HwHaltWait' || (s.csr !== null && isEngHalted(s.csr.status));
}

/** Work in flight and a head that did not move from `a` to `b` (software and chip), both running. */
function stuckBetween(a: EngineSample | undefined, b: EngineSample | undefined): boolean {
  if (!a?.sw || !b?.sw || a.gone || b.gone) return false;
  if (a.state !== 's99_Running' || b.state !== 's99_Running') return false;
  if (inFlight(a.sw.descqHead, a.sw.descqTail) === 0 || inFlight(b.sw.descqHead, b.sw.descqTail) === 0) return false;
  if (a.sw.descqHead !== b.sw.descqHead) return false;
  return a.csr === null || b.csr === null || a.csr.hwHead === b.csr.hwHead;
}

/** The port whose counters show it without credits from `a` to `b`: XmitWait rose, next to no data left. */
function creditlessPort(a: readonly PortCounters[], b: readonly PortCounters[]): number | null {
  for (const pb of b) {
    const pa = a.find((p) => p.port === pb.port);
    const wait = num(pb.values.xmitWait) - num(pa?.values.xmitWait);
    const data = num(pb.values.xmitData) - num(pa?.values.xmitData);
    if (wait > 0 && data * 100 < wait) return pb.port;
  }
  return null;
}

/** The flavour and module parameters of the capture's unit. */
function twinUnit(r: CaptureReading, seedRound: UnitRound, notes: Notes): TwinUnit {
  const info = r.info;
  const ids = [...info.engineIds].sort((a, b) => a - b);
  const first = ids[0] ?? 0;
  const contiguous = ids.every((id, i) => id === first + i);
  if (!contiguous)
    notes.assumed.push(
      `engines ${engineIdsText(ids)} are not one window: the twin has engines ${first}-${first + ids.length - 1}`,
    );
  const ports = info.flavour.ports;
  const links = seedRound.ports;
  const used = Array.from({ length: ports }, (_, i) => i + 1).filter((p) => {
    const l = links.find((x) => x.port === p);
    const everActive = r.instants.some((rec) => rec.round.ports.some((x) => x.port === p && x.state === 'ACTIVE'));
    return everActive || (l !== undefined && l.physState !== 'Disabled');
  });
  const reload = seedRound.engines.find((e) => e.sample.csr !== null)?.sample.csr?.reloadCnt;
  const cclockPs = chipModel(info.flavour.chip).cclockPs;
  let idleCntNs = 250;
  if (reload === undefined) notes.assumed.push('sdma_idle_cnt: no RELOAD_CNT was captured; 250 ns assumed');
  else idleCntNs = reload === 0n ? 0 : Math.round((Number(reload) * cclockPs) / 1000);
  const params: string[] = [];
  const s = info.settings;
  if (s?.useBulksvc === true && info.flavour.driver === 'cornelis') {
    params.push('use_bulksvc=Y', ...Object.entries(s.bulksvc).map(([k, v]) => `${k}=${v}`));
  }
  if (s?.numVls !== null && s?.numVls !== undefined && s.numVls !== 8 && s.numVls >= 1 && s.numVls <= 8)
    params.push(`num_vls=${s.numVls}`);
  if (s?.capMask && Number(s.capMask) !== EMU_CAP_MASK) params.push(`cap_mask=${s.capMask}`);
  return {
    name: info.name,
    unit: info.unit,
    pci: info.pci,
    chip: info.flavour.chip,
    driver: info.flavour.driver,
    ports,
    activePorts: used.length > 0 ? used : Array.from({ length: ports }, (_, i) => i + 1),
    firstEngine: first,
    engines: ids.length,
    descqCnt: info.descqCnt,
    idleCntNs,
    params,
  };
}

/** The requests in an engine's ring: grouped FIRST to LAST from its listing, else assumed from its counters. */
function requestsOf(idx: number, sw: NonNullable<EngineSample['sw']>, dump: RingDump | null | undefined, notes: Notes): SeedTx[] {
  const n = inFlight(sw.descqHead, sw.descqTail);
  const count = (sw.txTail - sw.txHead) & 0xffff;
  if (n === 0) return [];
  if (dump && dump.descriptors.length === n) {
    const out: SeedTx[] = [];
    let cur: number[] | null = null;
    let sound = true;
    for (const d of dump.descriptors) {
      const first = d.flags[2] === 'F';
      const last = d.flags[3] === 'L';
      const pad = !first && !last && d.len === 0 && d.addr === 0n;
      if (first) {
        if (cur !== null) sound = false;
        cur = [];
      }
      if (cur === null) {
        sound = false;
        continue;
      }
      if (!pad) cur.push(d.len);
      if (last) {
        out.push({ numDesc: cur.length, lens: cur });
        cur = null;
      }
    }
    if (sound && cur === null && out.length > 0) {
      if (out.length !== count)
        notes.assumed.push(
          `sdma${idx}: the ring lists ${out.length} requests, tx_tail − tx_head says ${count}: the listing is taken`,
        );
      return out;
    }
    notes.assumed.push(
      `sdma${idx}: the ring listing is torn (a request without FIRST or LAST): its requests are assumed from the counters`,
    );
  } else {
    notes.assumed.push(
      `sdma${idx}: ${n} descriptors in flight without ${dump ? 'a whole' : 'a'} descriptor listing: ${Math.max(1, count)} request(s) of about ${Math.max(1, Math.round(n / Math.max(1, count)))} descriptors assumed`,
    );
  }
  const k = Math.max(1, Math.min(count, n));
  return Array.from({ length: k }, (_, i) => ({ numDesc: Math.floor(n / k) + (i < n % k ? 1 : 0) }));
}

/** One engine's counters and ring at the seed instant. */
function seedEngine(e: EngineRound, dump: RingDump | null | undefined, notes: Notes): SeedEngine | null {
  const s = e.sample;
  const sw = s.sw;
  if (!sw) {
    notes.notTaken.push(`sdma${s.engine}: no software state (no sdes): it starts empty, as after driver load`);
    return null;
  }
  const c = s.counters;
  const passes = s.seq !== null && s.seqSource !== 'head-lock' ? Math.floor(s.seq / 2) : null;
  return {
    engine: s.engine,
    descqHead: sw.descqHead >>> 0,
    txHead: sw.txHead & 0xffff,
    headSeq: (s.seq ?? 0) >>> 0,
    descqFullCount: sw.descqFullCount >>> 0,
    lastStatus: Math.min(Number(sw.lastStatus), 2 ** 48),
    sdmaInt: num(c?.sdmaInt),
    progressInt: num(c?.progressInt),
    idleInt: num(c?.idleInt),
    errCount: num(c?.errCount),
    descFetched: num(c?.descFetched ?? s.csr?.descFetchedCnt) >>> 0,
    interrupts: passes ?? num(c?.sdmaInt) + num(c?.progressInt) + num(c?.idleInt),
    inFlight: requestsOf(s.engine, sw, dump, notes),
  };
}

/** One port at the seed instant; a port to be taken down by a condition is seeded up, its LinkDowned one less. */
function seedPort(l: PortLink, counters: PortCounters | undefined, down: boolean): SeedPort {
  const v = counters?.values;
  const state = l.state === 'ACTIVE' ? 'ACTIVE' : l.state === 'INIT' || l.state === 'ARMED' ? 'INIT' : 'DOWN';
  const phys = l.physState === 'LinkUp' ? 'LinkUp' : l.physState === 'Disabled' ? 'Disabled' : 'Polling';
  const linkDowned = num(v?.linkDowned);
  return {
    port: l.port,
    state: down ? 'ACTIVE' : state,
    physState: down ? 'LinkUp' : phys,
    xmitData: num(v?.xmitData),
    xmitPackets: num(v?.xmitPackets),
    xmitWait: num(v?.xmitWait),
    xmitDiscards: num(v?.xmitDiscards),
    linkDowned: down ? Math.max(0, linkDowned - 1) : linkDowned,
    linkErrorRecovery: num(v?.linkErrorRecovery),
    rcvErrors: num(v?.rcvErrors),
    dmaWait: num(v?.dmaWait),
  };
}

/** Whom a waiter names, from the capture (and the owner it recorded for a QP). */
function identityOf(w: Waiter, r: CaptureReading, more: readonly QpOwner[] = []): SenderIdentity {
  if (w.kind === 'qp') {
    const o = r.owners.get(w.qpn) ?? more.find((x) => x.qpn === w.qpn);
    const pid = o?.pid ?? (w.creatorPid ? w.creatorPid : undefined);
    return {
      qpn: w.qpn,
      ...(w.qpState ? { qpState: w.qpState } : {}),
      ...(pid ? { pid } : {}),
      ...(o?.command ? { command: o.command } : {}),
      ...(o?.user ? { user: o.user } : {}),
    };
  }
  if (w.kind === 'psm') return { pid: w.pid, ...(w.command ? { command: w.command } : {}) };
  return w.txq === null ? {} : { txq: w.txq };
}

/** The waiters asleep at the seed instant, each with its engine, need and identity. */
function seedWaiters(
  u: UnitRound,
  r: CaptureReading,
  seeds: readonly SeedEngine[],
  notes: Notes,
  unitName: string,
): SeedWaiter[] {
  const out: SeedWaiter[] = [];
  const pending = new Map<number, number>();
  const now = u.waiters.timeMs;
  const only = u.engines.length === 1 ? u.engines[0]?.sample.engine : undefined;
  for (const j of u.waiters.judgements) {
    const w = j.waiter;
    const who = waiterKey(w).replace(/ on sdma.*$/, '');
    if (w.waitsFor !== 'dma-desc') {
      notes.notTaken.push(`${who}: it waits for ${w.waitsFor}, not for descriptors (the twin models dmawait only)`);
      continue;
    }
    if (w.onList === false) continue;
    const engine = w.engine ?? only;
    if (engine === undefined) {
      notes.notTaken.push(`${who}: its engine is not known (the capture does not say which engine it waits on)`);
      continue;
    }
    let need = w.descriptorsNeeded ?? 0;
    if (need < 1) {
      need = 1;
      notes.assumed.push(`${who} on sdma${engine}: how many descriptors it needs is not known; 1 assumed`);
    }
    const ring = seeds.find((s) => s.engine === engine)?.inFlight.length ?? 0;
    const used = pending.get(engine) ?? 0;
    let own = w.ownPending ?? 0;
    if (own > ring - used) {
      notes.assumed.push(
        `${who} on sdma${engine}: ${own} request(s) of its own in flight, the ring holds ${ring - used} more: ${Math.max(0, ring - used)} taken`,
      );
      own = Math.max(0, ring - used);
    }
    pending.set(engine, used + own);
    const asleepMs = now === null ? 0 : Math.max(0, now - w.sinceMs);
    const seed: { -readonly [K in keyof SeedWaiter]: SeedWaiter[K] } = {
      kind: w.kind,
      engine,
      need,
      ownPending: own,
      asleepMs: Math.round(asleepMs),
      identity: identityOf(w, r),
    };
    if (w.kind === 'ipoib') {
      const timeouts = w.evidence?.timeouts ?? 0;
      seed.timeouts = timeouts;
      if (timeouts > 0 || r.instants.some((rec) => rec.findings.some((f) => f.code === 'SD207' && f.engine === engine))) {
        seed.stuck = true;
        notes.assumed.push(
          `${who} on sdma${engine}: its wake-up is lost (the netdev watchdog timed it out ${timeouts} time(s)): the twin passes it over as sdma_desc_avail did`,
        );
      }
      const netdev = emuNetdev(r.info.unit, 1, r.info.flavour.ports);
      if (w.netdev && w.netdev !== netdev) notes.assumed.push(`${who}: its netdev ${w.netdev} is ${netdev} in the twin`);
    }
    if (w.kind === 'psm' && asleepMs >= 1000) {
      notes.assumed.push(
        `${who} on sdma${engine}: asleep ${Math.round(asleepMs)} ms, past its 1 s wait: it gives up at once in the twin`,
      );
    }
    out.push(seed);
  }
  if (out.length > 0) {
    const each = out.map(
      (w) => `${seedWaiterKey(w)} needing ${w.need}, asleep ${w.asleepMs >= 1000 ? secs(w.asleepMs) : `${w.asleepMs} ms`}`,
    );
    notes.taken.push(`${count(out.length, 'waiter')} on ${unitName}: ${each.join('; ')}`);
  }
  return out;
}

/** The conditions in force at the seed instant: the faults that hold the state the capture shows over time. */
function conditionsAt(r: CaptureReading, i: number, unit: TwinUnit, notes: Notes): SeedCondition[] {
  const out: SeedCondition[] = [];
  const recs = r.instants;
  const rec = recs[i] as InstantRecord;
  const u = rec.round;
  if (u.status === 'gone') {
    notes.taken.push('the device is gone (its registers read all-ones): the twin is too');
    return [{ fault: 'device-gone' }];
  }
  const single = recs.length === 1;
  for (const p of u.ports) {
    if (!unit.activePorts.includes(p.port) || p.state === 'ACTIVE' || p.state === null) continue;
    if (p.state === 'INIT' || p.state === 'ARMED') continue;
    out.push({ fault: 'link-down', port: p.port });
    notes.taken.push(
      `port ${p.port} ${p.state} (${p.physState ?? '?'}): the twin takes it down at 0 (its engines go through the link-down path)`,
    );
  }
  const fabric = new Set<number>();
  for (const e of u.engines) {
    const s = e.sample;
    const idx = s.engine;
    const before = engineOf(recs[i - 1], idx)?.sample;
    const after = engineOf(recs[i + 1], idx)?.sample;
    if (halted(s)) {
      if (single || (before && halted(before)) || (after && halted(after))) {
        out.push({ fault: 'halt-stuck', engine: idx });
        notes.taken.push(
          `sdma${idx}: halted (${s.state ?? '?'})${single ? '' : ' across instants'}: the twin halts it at 0 with its halt-wait work never run (halt-stuck)`,
        );
        if (single) notes.assumed.push(`sdma${idx}: one instant cannot tell a lasting halt from a recovery: taken as lasting`);
      } else notes.assumed.push(`sdma${idx}: halted at this instant only (it recovered): taken as running`);
      continue;
    }
    if (s.state !== null && s.state !== 's99_Running' && s.state !== 's20_Idle') {
      notes.assumed.push(`sdma${idx}: in ${s.state}, a passing state: taken as s99_Running`);
    }
    const sw = s.sw;
    if (!sw || inFlight(sw.descqHead, sw.descqTail) === 0) continue;
    const pair = stuckBetween(before, s) ? i - 1 : stuckBetween(s, after) ? i + 1 : null;
    if (pair === null) {
      if (single)
        notes.assumed.push(
          `sdma${idx}: one instant cannot tell whether its chip fetched: the twin lets it (--fault stop-fetch@0:${idx} holds it)`,
        );
      continue;
    }
    const [a, b] = pair < i ? [recs[pair], rec] : [rec, recs[pair]];
    const judged = [rec, recs[pair]].map((x) => engineOf(x, idx)?.cause).find((c) => c?.cause === 'fabric');
    const port = judged?.port ?? creditlessPort(a?.round.portCounters ?? [], b?.round.portCounters ?? []);
    if (port !== null && port !== undefined) {
      if (!fabric.has(port)) {
        fabric.add(port);
        out.push({ fault: 'fabric-stall', port });
        notes.taken.push(
          `port ${port}: no credits (XmitWait rose, no data left) while sdma${idx}'s head stood: the twin stops its credits at 0 (fabric-stall)`,
        );
      }
      continue;
    }
    out.push({ fault: 'stop-fetch', engine: idx });
    notes.taken.push(
      `sdma${idx}: ${inFlight(sw.descqHead, sw.descqTail)} descriptors in flight and a head that did not move between instants ${Math.min(i, pair)} and ${Math.max(i, pair)}: the twin's chip fetches nothing (stop-fetch)`,
    );
  }
  return out;
}

/** An engine's bytes per second in the emulator (its share of a 100 Gb/s link, the workloads' default). */
function engineBytesPerSec(engines: number): number {
  return 100e9 / 8 / engines;
}

/** A load given to three significant digits (the fixture stays readable). */
function round3(x: number): number {
  return Number(x.toPrecision(3));
}

/**
 * The traffic each engine carried around the seed instant: descriptors retired per second between it and the
 * instant before (or after), as packets of the engine's mean size, sent by the senders the capture saw waiting on
 * that engine at some instant (and not asleep at this one), else by one QP; a ring near full keeps its backlog.
 */
function trafficAt(
  r: CaptureReading,
  i: number,
  unit: TwinUnit,
  seeds: readonly SeedEngine[],
  asleep: readonly SeedWaiter[],
  notes: Notes,
): TwinTraffic[] {
  const recs = r.instants;
  const [a, b] = i > 0 ? [recs[i - 1], recs[i]] : [recs[i], recs[i + 1]];
  if (!a || !b || b.timeMs <= a.timeMs) {
    notes.notTaken.push('the traffic: one instant shows no rates; the twin carries none (--workload adds some)');
    return [];
  }
  const dt = (b.timeMs - a.timeMs) / 1000;
  // Who sleeps at the seed instant sends nothing else, on any engine (a QP's engine as qp_stats prints it can change).
  const who = (key: string) => key.replace(/ on sdma.*$/, '');
  const asleepWho = new Set(asleep.map((w) => who(seedWaiterKey(w))));
  const out: TwinTraffic[] = [];
  for (const eb of b.round.engines) {
    const ea = engineOf(a, eb.sample.engine);
    const sa = ea?.sample.sw;
    const sb = eb.sample.sw;
    if (!sa || !sb || eb.sample.gone || eb.sample.state !== 's99_Running') continue;
    const desc = (sb.descqHead - sa.descqHead) >>> 0;
    if (desc === 0 || desc > 0x7fff_ffff) continue;
    // tx_head is 16 bits and wraps within an instant at these rates: the ring's requests give the packets' size.
    const ring = seeds.find((e) => e.engine === eb.sample.engine)?.inFlight ?? [];
    const numDesc =
      ring.length > 0 ? Math.min(16, Math.max(1, Math.round(ring.reduce((n, t) => n + t.numDesc, 0) / ring.length))) : 2;
    const bytes = (desc / numDesc) * seedPacketBytes(numDesc);
    let load = bytes / dt / engineBytesPerSec(unit.engines);
    const full = [sa, sb].some((sw) => inFlight(sw.descqHead, sw.descqTail) >= (unit.descqCnt * 7) / 8);
    if (full) load = Math.max(load * 1.1, 1.05);
    const idx = eb.sample.engine;
    const senders = new Map<string, { kind: SeedWaiter['kind']; identity: SenderIdentity }>();
    for (const rec of recs) {
      for (const j of rec.round.waiters.judgements) {
        const w = j.waiter;
        if (w.engine !== idx || w.waitsFor !== 'dma-desc') continue;
        const identity = identityOf(w, r, rec.round.waiters.owners);
        const key = waiterKey(w);
        const known = senders.get(key);
        // The fullest identity seen (an owner is recorded only where a finding named the QP).
        if (!asleepWho.has(who(key)) && (!known || Object.keys(identity).length > Object.keys(known.identity).length)) {
          senders.set(key, { kind: w.kind, identity });
        }
      }
    }
    const each = senders.size > 0 ? [...senders.values()] : [{ kind: 'qp' as const, identity: {} }];
    for (const s of each)
      out.push({ engine: idx, kind: s.kind, load: round3(load / each.length), numDesc, identity: s.identity });
  }
  if (out.length > 0) {
    notes.taken.push(
      `the traffic between instants ${i > 0 ? i - 1 : i} and ${i > 0 ? i : i + 1}: ${count(out.length, 'sender')} on ${count(new Set(out.map((t) => t.engine)).size, 'engine')}, at the rates the capture shows`,
    );
  }
  return out;
}

/** The twin of `r` at its seed instant: the fixture every run of it starts from. */
export function twinOf(r: CaptureReading, toolVersion: string): TwinFixture {
  const notes = new Notes();
  const i = r.seedInstant;
  const rec = r.instants[i] as InstantRecord;
  const u = rec.round;
  const unit = twinUnit(r, u, notes);
  const m = r.manifest;
  const conditions = conditionsAt(r, i, unit, notes);
  const gone = u.status === 'gone';
  const engines: SeedEngine[] = [];
  const haltedAt = new Set(conditions.filter((c) => c.fault === 'halt-stuck').map((c) => c.engine));
  if (!gone) {
    for (const e of u.engines) {
      const s = seedEngine(e, r.rings.get(e.sample.engine), notes);
      // The halt the condition applies raises the error interrupt the capture counted already.
      if (s) engines.push(haltedAt.has(s.engine) ? { ...s, errCount: Math.max(0, s.errCount - 1) } : s);
    }
  } else notes.notTaken.push("the engines' state: a gone device shows none; they start as after driver load");
  const down = new Set(conditions.filter((c) => c.fault === 'link-down').map((c) => c.port));
  const ports = u.ports.map((l) =>
    seedPort(
      l,
      u.portCounters.find((p) => p.port === l.port),
      down.has(l.port),
    ),
  );
  const waiters = gone ? [] : seedWaiters(u, r, engines, notes, u.info.name);
  const traffic = gone ? [] : trafficAt(r, i, unit, engines, waiters, notes);
  const inflight = engines.reduce((n, e) => n + e.inFlight.length, 0);
  notes.taken.unshift(
    `${unit.chip.toUpperCase()}, ${unit.driver} driver, ${count(unit.ports, 'port')}, ${unit.engines === 1 ? `engine ${unit.firstEngine}` : `engines ${unit.firstEngine}-${unit.firstEngine + unit.engines - 1}`}, descq_cnt ${unit.descqCnt}, sdma_idle_cnt ${unit.idleCntNs} ns${unit.params.length ? `, ${unit.params.join(' ')}` : ''}`,
    `${count(engines.length, 'engine')}: heads, tails, sequence, counters, ${count(inflight, 'request')} in flight`,
    `${count(ports.length, 'port')}: links and counters`,
  );
  if (u.portCounters.length === 0 && ports.length > 0)
    notes.assumed.push("the ports' counters were not captured: they start at 0");
  const log = snapshotLogNote(r);
  if (log) notes.notTaken.push(log);
  const last = r.instants.at(-1) as InstantRecord;
  const t0 = rec.timeMs;
  return {
    format: TWIN_FORMAT,
    toolVersion,
    source: {
      file: r.file,
      format: m.format,
      host: m.host === '' ? null : m.host,
      capturedAt: m.time,
      toolVersion: m.toolVersion === '' ? null : m.toolVersion,
      emulated: 'emulated' in m && m.emulated === true,
      redacted: 'redacted' in m && m.redacted === true,
      instant: i,
      instants: r.instants.length,
      timeMs: t0,
      sha256: r.sha256,
    },
    unit,
    seed: { engines, waiters, ports, conditions },
    traffic,
    notes: { taken: notes.taken, assumed: notes.assumed, notTaken: notes.notTaken },
    verdict: verdictOf(last.findings),
    observations: r.instants.slice(i + 1).map((x, k) => observationOf(x.round, x.findings, i + 1 + k, x.timeMs - t0)),
  };
}

/** What the twin leaves of the capture's kernel log. */
function snapshotLogNote(r: CaptureReading): string | null {
  const sources = 'instants' in r.manifest ? (r.manifest.instants[0]?.sources ?? []) : [];
  return sources.some((s) => s.path === 'kmsg-hfi1.txt' && s.captured)
    ? "the kernel log: the twin's starts empty (the capture's lines stay in the capture)"
    : null;
}
