// A unit built from a state instead of from driver load: a second way to reach the state the model runs from. The
// seed says what an instant of a host showed (each engine's free-running counters, sequence, interrupt counts and
// the requests in its ring; the senders asleep on dmawait with what they need and who they are; every port's link
// and counters) and which conditions were in force then (a chip that fetches nothing, a port without credits, a
// halt whose work never runs, a device gone, a link down). seedUnit() writes that state into a unit the constructor
// has just built, in place of the driver's load sequence, and from there the ordinary model runs: nothing below
// depends on how the state was reached.
//
// The engines start in s99_Running (as after e30_GoRunning); the other states a capture shows come from the
// conditions, applied at the seed as the faults of the same name apply them, so every transition taken is one of
// the driver's table. Senders the seed names have no traffic of their own: once woken they send the request they
// waited with and nothing more (a workload adds traffic).
import { Hfi1SdmaError, usageError } from '../errors.js';
import { ctrlOnEntry } from '../progress/state.js';
import { buildTx, isTxFailure, type TxReq } from '../progress/txreq.js';
import { applyFault } from './dispatch.js';
import type { Engine } from './engine.js';
import type { FaultName, FaultSpec } from './faults.js';
import { Ev } from './host.js';
import { computePriority, SleepKind } from './iowait.js';
import { assignTransmitPorts } from './link.js';
import type { PhysStateName, PortStateName } from './ports.js';
import { senderQpOwnerPid } from './qp-owners.js';
import { Sender, type SenderIdentity, txOptions } from './sender.js';
import { EmuTx, type TxOwner, TxPhase } from './tx.js';
import type { EmuUnit } from './unit.js';
import { senderPsmPid, senderQpn } from './waiters.js';
import type { SenderSpec } from './workload.js';

/** One request in an engine's ring: its descriptors' byte counts when the source listed them, else only how many. */
export interface SeedTx {
  readonly numDesc: number;
  /** BYTE_COUNT of each descriptor, first to last (pads left out), when known. */
  readonly lens?: readonly number[];
}

/** One engine at the seed instant (an engine the seed does not list starts as at driver load, running and empty). */
export interface SeedEngine {
  /** Absolute index. */
  readonly engine: number;
  /** descq_head (u32) and tx_head (u16): the ring's requests follow from here, so tail = head + what is in flight. */
  readonly descqHead: number;
  readonly txHead: number;
  /** The head-lock sequence (an odd value is taken as the even one before it: no write section is open). */
  readonly headSeq: number;
  readonly descqFullCount: number;
  readonly lastStatus: number;
  /** Handler calls by kind, engine-error interrupts, descriptors fetched, and the engine's interrupt vector count. */
  readonly sdmaInt: number;
  readonly progressInt: number;
  readonly idleInt: number;
  readonly errCount: number;
  readonly descFetched: number;
  readonly interrupts: number;
  /** The requests between head and tail, oldest first. */
  readonly inFlight: readonly SeedTx[];
}

/** A sender asleep on an engine's dmawait list at the seed instant, with who it is. */
export interface SeedWaiter {
  readonly kind: 'qp' | 'psm' | 'ipoib';
  readonly engine: number;
  /** Descriptors of the request it waits to place (its num_desc). */
  readonly need: number;
  /** Its own requests still in flight: the newest of its engine's ring. */
  readonly ownPending: number;
  /** How long it had been asleep at the seed instant (ms, at least). */
  readonly asleepMs: number;
  /** An IPoIB queue whose wake-up is lost (the netdev watchdog times it out): passed over by sdma_desc_avail. */
  readonly stuck?: boolean;
  /** Netdev watchdog timeouts the queue had (an IPoIB queue). */
  readonly timeouts?: number;
  readonly identity: SenderIdentity;
  /**
   * Not asleep: the sender runs from the start, offering this fraction of its engine's rate in packets of its
   * request's size (a twin replaying how a waiter came to sleep gives it traffic of its own).
   */
  readonly awake?: { readonly load: number };
}

/** One port at the seed instant, with its counters (XmitData in flits, as the counters report it). */
export interface SeedPort {
  readonly port: number;
  readonly state: PortStateName;
  readonly physState: PhysStateName;
  readonly xmitData: number;
  readonly xmitPackets: number;
  readonly xmitWait: number;
  readonly xmitDiscards: number;
  readonly linkDowned: number;
  readonly linkErrorRecovery: number;
  readonly rcvErrors: number;
  readonly dmaWait: number;
}

/** The faults a seed's conditions are applied as. */
export type SeedConditionFault = 'stop-fetch' | 'halt-stuck' | 'fabric-stall' | 'device-gone' | 'link-down';
export const SEED_CONDITIONS: readonly SeedConditionFault[] = [
  'stop-fetch',
  'halt-stuck',
  'fabric-stall',
  'device-gone',
  'link-down',
];

/** A condition in force at the seed instant: the fault of that name, applied at once (on an engine, or a port). */
export interface SeedCondition {
  readonly fault: SeedConditionFault;
  readonly engine?: number;
  readonly port?: number;
}

/** The state a unit starts from. */
export interface UnitSeed {
  readonly engines: readonly SeedEngine[];
  readonly waiters: readonly SeedWaiter[];
  readonly ports: readonly SeedPort[];
  readonly conditions: readonly SeedCondition[];
}

/** Bytes of the header every seeded request starts with when its descriptors were not listed. */
const HEADER_BYTES = 64;
/** A page descriptor's bytes in a request made to a count. */
const PAGE_BYTES = 4096;
/** The most payload a seeded packet carries (within MAX_SDMA_PKT_SIZE, 16383, with its header). */
const MAX_PAYLOAD = 16_256;
/** Packets an awake seeded sender keeps outstanding at most. */
const AWAKE_WINDOW = 64;
/** A PSM writer's wait (SDMA_IOWAIT_TIMEOUT, user_sdma.c). */
const PSM_WAIT_NS = 1_000_000_000;
/** The earliest a seeded PSM writer's wait runs out (ns): a writer seen at the end of its wait still sleeps a little. */
const PSM_WAIT_MIN_NS = 1_000_000;

function bad(what: string): never {
  throw usageError(`the seed: ${what}`);
}

/** A request of exactly `numDesc` descriptors, from the listed byte counts when they build it, else a header and pages. */
export function seedRequest(u: EmuUnit, t: SeedTx): TxReq {
  const own = txOptions(u.host);
  const fits = (r: TxReq | ReturnType<typeof buildTx>): r is TxReq => !isTxFailure(r) && r.numDesc === t.numDesc;
  // A listing taken under sdma_align shows its fragments split already (a PSM batch listed as one request, too):
  // built again without the split, the request keeps the listing's count.
  for (const options of own.sdmaAlign ? [own, { ...own, sdmaAlign: 0 as const }] : [own]) {
    if (t.lens && t.lens.length === t.numDesc && t.lens.every((l) => l > 0)) {
      const fragments = t.lens.map((len, i) => ({ kind: i === 0 ? ('single' as const) : ('page' as const), len }));
      const r = buildTx({ tlen: t.lens.reduce((a, b) => a + b, 0), fragments, options });
      if (fits(r)) return r;
    }
    for (let pages = t.numDesc - 1; pages >= 0; pages--) {
      const page = pageBytes(pages + 1);
      const fragments: { kind: 'single' | 'page'; len: number }[] = [{ kind: 'single', len: HEADER_BYTES }];
      for (let k = 0; k < pages; k++) fragments.push({ kind: 'page', len: page });
      const r = buildTx({ tlen: HEADER_BYTES + pages * page, fragments, options });
      if (fits(r)) return r;
    }
  }
  return bad(`no request of ${t.numDesc} descriptor(s) can be built on ${u.info.name}`);
}

/** The bytes of a packet a seeded sender sends when it takes `numDesc` descriptors (header and payload). */
export function seedPacketBytes(numDesc: number): number {
  return HEADER_BYTES + Math.max(0, numDesc - 1) * pageBytes(numDesc);
}

/** The page descriptor's bytes in a request of `numDesc` made to a count: 4 KiB, less where the packet would exceed its limit. */
function pageBytes(numDesc: number): number {
  return numDesc <= 1 ? PAGE_BYTES : Math.min(PAGE_BYTES, Math.floor(MAX_PAYLOAD / (numDesc - 1) / 64) * 64);
}

/** The engine leaves driver load behind: s99_Running with the CTRL bits written on entry (sdma_set_state, sdma.c). */
function running(e: Engine): void {
  const ctrl = ctrlOnEntry('s99_Running');
  const extra = e.host.cfg.extraCtrl;
  e.state = 's99_Running';
  e.previousState = 's99_Running';
  e.go = true;
  e.pSendDmaCtrl = Number(ctrl.shadow) | extra;
  e.chip.ctrl = Number(ctrl.shadow) | extra;
}

/** The counters and the ring of one engine; `owners` names the sender of each of its newest requests. */
function seedEngine(u: EmuUnit, e: Engine, s: SeedEngine, owners: readonly (Sender | null)[], direct: TxOwner): void {
  if (!Number.isInteger(s.descqHead) || s.descqHead < 0 || s.descqHead > 0xffff_ffff)
    bad(`sdma${e.idx}: descqHead ${s.descqHead}`);
  const inFlight = s.inFlight.reduce((n, t) => n + t.numDesc, 0);
  if (inFlight > e.descqCnt - 1) {
    bad(`sdma${e.idx}: ${inFlight} descriptors in flight do not fit a ring of ${e.descqCnt} (at most ${e.descqCnt - 1})`);
  }
  if (s.inFlight.length > 0xffff) bad(`sdma${e.idx}: ${s.inFlight.length} requests in flight`);
  const c = e.chip;
  e.descqHead = e.descqTail = s.descqHead >>> 0;
  e.txHead = e.txTail = s.txHead & 0xffff;
  c.hwHead = c.hwTail = e.descqHead & e.mask;
  c.genCount = e.descqHead;
  c.headDma = c.hwHead;
  e.headSeq = (s.headSeq >>> 0) & ~1;
  e.descqFullCount = s.descqFullCount >>> 0;
  // descq_full_count counts failed placements: the ones before the seed are the engine's too.
  e.stats.failedPlacements += e.descqFullCount;
  e.lastStatus = s.lastStatus;
  e.sdmaIntCnt = s.sdmaInt;
  e.progressIntCnt = s.progressInt;
  e.idleIntCnt = s.idleInt;
  e.errCnt = s.errCount;
  c.descFetched = s.descFetched >>> 0;
  u.vectorCounts[e.pos] = s.interrupts;
  const first = s.inFlight.length - owners.length;
  s.inFlight.forEach((t, i) => {
    const owner = i >= first ? (owners[i - first] ?? null) : null;
    const tx = new EmuTx(owner ?? direct).load(seedRequest(u, t));
    if (owner) {
      tx.wait = owner.wait;
      owner.wait.sdmaBusy++;
      owner.outstanding++;
      if (owner.ipoib) {
        owner.ipoib.taken++;
        owner.ipoib.placed++;
      }
    }
    e.submitTx(tx, tx.numPad);
  });
  c.hwTail = e.descqTail & e.mask;
  e.descAvail = e.freecnt();
}

/** The spec of a seeded sender: its kind on its engine's VL, packets of its request's size, no load of its own. */
function waiterSpec(u: EmuUnit, w: SeedWaiter, e: Engine): SenderSpec {
  const frag = pageBytes(w.need);
  const payload = Math.max(0, w.need - 1) * frag;
  const load = w.awake?.load ?? 0;
  if (!(load >= 0 && load <= 100)) bad(`a ${w.kind} sender on sdma${e.idx} offers load ${load} (0 to 100)`);
  return {
    kind: w.kind,
    selector: 0,
    vl: u.vlMap.engineToVl[e.pos] ?? 0,
    sizeLo: payload,
    sizeHi: payload,
    step: 64,
    header: HEADER_BYTES,
    frag,
    window: load > 0 ? AWAKE_WINDOW : Math.max(1, w.ownPending + 1),
    load,
  };
}

/** A sender for the waiter, asleep on its engine's dmawait with the request it waits with. */
function seedWaiter(u: EmuUnit, w: SeedWaiter, e: Engine, psmRank: number, txq: number): Sender {
  const host = u.host;
  if (!(w.need >= 1 && w.need <= e.descqCnt - 1)) bad(`a ${w.kind} waiter on sdma${e.idx} needs ${w.need} descriptors`);
  const s = new Sender(host, u.senders.length, waiterSpec(u, w, e), e, host.rng.fork());
  s.identity = w.identity;
  s.seeded = true;
  if (w.kind === 'psm') s.rank = psmRank;
  if (s.ipoib) s.ipoib.txq = w.identity.txq ?? txq;
  u.senders.push(s);
  if (w.awake) return s;
  const tx = new EmuTx(s).load(seedRequest(u, { numDesc: w.need }));
  tx.phase = TxPhase.idle;
  const io = s.wait;
  const sleptNs = -Math.round(Math.max(0, w.asleepMs) * 1e6);
  if (w.kind === 'qp') io.txHead.push(tx);
  else if (w.kind === 'psm') {
    s.batch.push(tx);
    io.deferred = true;
    const left = Math.max(PSM_WAIT_MIN_NS, PSM_WAIT_NS + sleptNs);
    s.timeoutEvent = host.sched.at(left, Ev.senderTimeout, s.id, ++s.token, e.pos);
  } else {
    const q = s.ipoib as NonNullable<Sender['ipoib']>;
    q.list.push(tx);
    q.taken++;
    q.subqueueStopped = true;
    q.stops = 1;
    q.stoppedAtNs = sleptNs;
    q.lastXmitNs = sleptNs;
    q.timeouts = w.timeouts ?? 0;
    io.stuck = w.stuck === true;
  }
  s.asleep = true;
  io.needDesc = w.need;
  io.nDmawait = io.sleepKind === SleepKind.psm ? 0 : 1;
  io.sleptAtNs = sleptNs;
  computePriority(io);
  io.queuedOn = e;
  e.dmawait.push(io);
  return s;
}

/**
 * The workload's senders take the emulator's numbers (QPN 0x100 + id, PIDs 20000 and 30000 + id); one whose number a
 * seeded sender already holds takes the next free one, so no two senders of the unit share a QPN or a PID.
 */
function renumberAround(u: EmuUnit, seeded: readonly Sender[]): void {
  const qpns = new Set<number>();
  const pids = new Set<number>();
  for (const s of seeded) {
    if (s.identity?.qpn !== undefined) qpns.add(s.identity.qpn);
    if (s.identity?.pid !== undefined) pids.add(s.identity.pid);
  }
  if (qpns.size === 0 && pids.size === 0) return;
  const unit = u.info.unit;
  const fresh = (used: Set<number>, from: number): number => {
    let n = from;
    while (used.has(n)) n++;
    used.add(n);
    return n;
  };
  // A seeded sender that names no number (captured traffic from an unnamed sender) takes one as the workload's do.
  const named = (s: Sender, key: 'qpn' | 'pid') => seeded.includes(s) && s.identity?.[key] !== undefined;
  for (const s of u.senders) {
    if (s.spec.kind === 'qp' && !named(s, 'qpn')) {
      const qpn = senderQpn(s);
      const pid = senderQpOwnerPid(s, unit);
      if (qpns.has(qpn) || pids.has(pid)) {
        s.identity = { ...s.identity, qpn: qpns.has(qpn) ? fresh(qpns, qpn) : qpn, pid: pids.has(pid) ? fresh(pids, pid) : pid };
      }
      qpns.add(senderQpn(s));
      pids.add(senderQpOwnerPid(s, unit));
    } else if (s.spec.kind === 'psm' && !named(s, 'pid')) {
      const pid = senderPsmPid(s, unit);
      if (pids.has(pid)) s.identity = { ...s.identity, pid: fresh(pids, pid) };
      pids.add(senderPsmPid(s, unit));
    }
  }
}

/** The fault a condition is applied as, parsed as the unit's own faults are (at time 0). */
function conditionFault(u: EmuUnit, c: SeedCondition): FaultSpec {
  if (!(SEED_CONDITIONS as readonly string[]).includes(c.fault)) bad(`unknown condition ${JSON.stringify(c.fault)}`);
  const port = c.port ?? null;
  const engine = c.engine ?? null;
  if (engine !== null) u.engineAt(engine);
  if (port !== null && !u.host.ports[port - 1]) bad(`${c.fault} names port ${port}; ${u.info.name} has ${u.host.ports.length}`);
  const name = c.fault as FaultName;
  return {
    name,
    param: 0,
    atMs: 0,
    engine,
    port,
    text: `${c.fault}@0${engine !== null ? `:${engine}` : port !== null ? `:${port}` : ''}`,
  };
}

/**
 * Write `seed` into `u`, just built and not yet run (its constructor calls this in place of driver load): ports,
 * engines, rings, the waiters (as senders of their own, added after the workload's), the conditions, and the start of
 * the workload's senders and of every chip. `direct` owns the requests of no seeded sender.
 */
export function seedUnit(u: EmuUnit, seed: UnitSeed, direct: TxOwner): void {
  const host = u.host;
  if (host.sched.nowNs !== 0) throw new Hfi1SdmaError('E_INTERNAL', 'a unit is seeded before it runs');
  const listedPorts = new Set<number>();
  for (const p of seed.ports) {
    const port = host.ports[p.port - 1];
    if (!port) bad(`port ${p.port}: ${u.info.name} has ${host.ports.length} port(s)`);
    if (listedPorts.has(p.port)) bad(`port ${p.port} is listed twice`);
    listedPorts.add(p.port);
    port.state = p.state;
    port.physState = p.physState;
    const k = port.counters;
    k.xmitBytes = p.xmitData * 8;
    k.xmitPackets = p.xmitPackets;
    k.rcvBytes = k.xmitBytes;
    k.rcvPackets = p.xmitPackets;
    k.xmitWait = p.xmitWait;
    k.xmitDiscards = p.xmitDiscards;
    k.linkDowned = p.linkDowned;
    k.linkUp = p.linkDowned + (p.state === 'ACTIVE' ? 1 : 0);
    k.linkErrorRecovery = p.linkErrorRecovery;
    k.rcvErrors = p.rcvErrors;
    k.dmaWait = p.dmaWait;
  }
  // A port the seed does not list is as driver load leaves it: up when in use, else disabled.
  for (const p of host.ports) if (!listedPorts.has(p.port) && p.used) p.state = 'ACTIVE';
  assignTransmitPorts(u);
  for (const e of u.engines) running(e);
  // The waiters first (their own requests are the newest of their engine's ring), then each engine's state.
  const owners = new Map<number, Sender[]>();
  const workload = u.senders.length;
  let psm = 0;
  let txq = u.senders.filter((s) => s.ipoib !== null).length;
  for (const w of seed.waiters) {
    const e = u.engineAt(w.engine);
    const s = seedWaiter(u, w, e, psm, txq);
    if (w.kind === 'psm') psm++;
    if (w.kind === 'ipoib') txq++;
    const list = owners.get(e.idx) ?? [];
    for (let k = 0; k < w.ownPending; k++) list.push(s);
    owners.set(e.idx, list);
  }
  renumberAround(u, u.senders.slice(workload));
  const seen = new Set<number>();
  for (const s of seed.engines) {
    const e = u.engineAt(s.engine);
    if (seen.has(e.idx)) bad(`sdma${e.idx} is listed twice`);
    seen.add(e.idx);
    const own = owners.get(e.idx) ?? [];
    if (own.length > s.inFlight.length) {
      bad(`sdma${e.idx}: its waiters have ${own.length} request(s) in flight, the ring ${s.inFlight.length}`);
    }
    seedEngine(u, e, s, own, direct);
  }
  for (const [idx, own] of owners) {
    if (own.length > 0 && !seen.has(idx)) bad(`sdma${idx}: its waiters have requests in flight and the ring is not given`);
  }
  for (const s of u.senders) if (!s.asleep) s.start(host.rng.int(0, 10_000));
  for (const c of seed.conditions) applyFault(u, conditionFault(u, c));
  for (const e of u.engines) if (e.running()) e.chip.kick();
}
