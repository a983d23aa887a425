// A restorable copy of one engine's domain (domain.ts): what lets the fast model skip to any point of a period, not
// only to whole periods from where a repeat was found.
//
// A capture (Domain.capture) is a key for comparison: positions relative to the head, requests as template numbers,
// objects as small identities. It says whether two instants repeat, not what the objects held. A snapshot holds the
// objects' own fields: the engine's, its chip's and fetch step's, every sender's with its waiter, generator, pool and
// lists, the fields of every request the domain holds (in the ring or on a list; a pool's only as its members), and
// the domain's pending events. Put back and moved on by whole periods (Domain.shift), it is the domain at that point
// of a later period: the domain is exactly periodic from where the repeat was found, and the snapshot was taken
// within the period.
//
// What is history rather than state stays as it is when a snapshot is put back: the engine's skew log and its counts
// (read only by Domain.availRun, over placements logged since a kept state), and the ring's descriptor words outside
// the requests in flight (never read again; Domain.shift writes those in flight from their records).
import type { Domain } from './domain.js';
import { Ev } from './host.js';
import type { IoWait } from './iowait.js';
import { refill, type Sender, type SenderCopy } from './sender.js';
import type { EmuTx } from './tx.js';

/** One pending event of the domain as the snapshot holds it. */
export interface SnapshotEvent {
  readonly timeNs: number;
  readonly kind: number;
  readonly a: number;
  readonly b: number;
  /** Its handle when the snapshot was taken (the domain's objects hold it). */
  readonly handle: number;
}

/** The domain at one instant, as objects' fields. */
export interface DomainSnapshot {
  readonly atNs: number;
  /** The counters as capture() lists them at the instant. */
  readonly counters: readonly number[];
  readonly vectorCount: number;
  readonly engine: object;
  readonly stats: object;
  readonly rng: object;
  /** The requests in flight, from txHead. */
  readonly inFlight: readonly EmuTx[];
  readonly dmawait: readonly IoWait[];
  readonly harvest: readonly IoWait[];
  readonly flushlist: readonly EmuTx[];
  readonly chip: object;
  readonly step: object;
  readonly traffic: object;
  readonly senders: readonly SenderCopy[];
  /** The requests the domain held outside its senders' pools, with their fields (TX_NUMBERS, then TX_REFS). */
  readonly txs: readonly EmuTx[];
  readonly txNumbers: readonly number[];
  readonly txRefs: readonly unknown[];
  readonly events: readonly SnapshotEvent[];
}

/**
 * An EmuTx's fields, numbers and references apart (structure.test.ts checks that they are all of them). A request in a
 * sender's pool needs none of them: the pool's next request is loaded and placed before any is read.
 */
export const TX_NUMBERS = [
  'serial',
  'numDesc',
  'numPad',
  'slots',
  'tlen',
  'packetLen',
  'flags',
  'template',
  'padWritten',
  'nextDescqIdx',
  'phase',
  'status',
] as const satisfies readonly (keyof EmuTx)[];
export const TX_REFS = ['wait', 'words', 'chipWords'] as const satisfies readonly (keyof EmuTx)[];
/** Set when the request is made, never again. */
export const TX_FIXED = ['owner'] as const satisfies readonly (keyof EmuTx)[];

/** Request `t`'s fields written at place `i` of `nums` and `refs` (TX_NUMBERS and TX_REFS, in that order). */
export function saveTx(t: EmuTx, nums: number[], refs: unknown[], i: number): void {
  const n = i * TX_NUMBERS.length;
  nums[n] = t.serial;
  nums[n + 1] = t.numDesc;
  nums[n + 2] = t.numPad;
  nums[n + 3] = t.slots;
  nums[n + 4] = t.tlen;
  nums[n + 5] = t.packetLen;
  nums[n + 6] = t.flags;
  nums[n + 7] = t.template;
  nums[n + 8] = t.padWritten;
  nums[n + 9] = t.nextDescqIdx;
  nums[n + 10] = t.phase;
  nums[n + 11] = t.status;
  const r = i * TX_REFS.length;
  refs[r] = t.wait;
  refs[r + 1] = t.words;
  refs[r + 2] = t.chipWords;
}

/** Request `t`'s fields as saveTx() wrote them at place `i`. */
export function loadTx(t: EmuTx, nums: readonly number[], refs: readonly unknown[], i: number): void {
  const n = i * TX_NUMBERS.length;
  t.serial = nums[n] as number;
  t.numDesc = nums[n + 1] as number;
  t.numPad = nums[n + 2] as number;
  t.slots = nums[n + 3] as number;
  t.tlen = nums[n + 4] as number;
  t.packetLen = nums[n + 5] as number;
  t.flags = nums[n + 6] as number;
  t.template = nums[n + 7] as number;
  t.padWritten = nums[n + 8] as number;
  t.nextDescqIdx = nums[n + 9] as number;
  t.phase = nums[n + 10] as number;
  t.status = nums[n + 11] as number;
  const r = i * TX_REFS.length;
  t.wait = refs[r] as EmuTx['wait'];
  t.words = refs[r + 1] as Uint32Array;
  t.chipWords = refs[r + 2] as Uint32Array | null;
}

/** The domain as it is at `atNs` (now, or where a skip just moved it), `counters` as capture() lists them. */
export function takeSnapshot(dom: Domain, atNs: number, counters: readonly number[]): DomainSnapshot {
  const { u, e } = dom;
  const c = e.chip;
  const sched = u.host.sched;
  const inFlight: EmuTx[] = [];
  for (let i = e.txHead; i !== e.txTail; i = (i + 1) & 0xffff) inFlight.push(e.txRing[i & e.mask] as EmuTx);
  const txs: EmuTx[] = [...inFlight, ...e.flushlist];
  for (const s of dom.senders) s.heldTxs(txs);
  // Plain arrays: V8 makes one on its heap far sooner than a typed array's backing store of this size.
  const txNumbers: number[] = new Array(txs.length * TX_NUMBERS.length);
  const txRefs: unknown[] = new Array(txs.length * TX_REFS.length);
  for (let i = 0; i < txs.length; i++) saveTx(txs[i] as EmuTx, txNumbers, txRefs, i);
  return {
    atNs,
    counters: counters.slice(),
    vectorCount: u.vectorCounts[e.pos] ?? 0,
    engine: { ...e },
    stats: { ...e.stats },
    rng: { ...e.rng },
    inFlight,
    dmawait: e.dmawait.slice(),
    harvest: e.harvest.slice(),
    flushlist: e.flushlist.slice(),
    chip: { ...c },
    step: { ...c.step },
    traffic: { ...c.traffic },
    senders: dom.senders.map((s) => s.save()),
    txs,
    txNumbers,
    txRefs,
    events: sched.eventsOf(e.pos).map(([handle, timeNs, kind, a, b]) => ({ handle, timeNs, kind, a, b })),
  };
}

/** What the domain has counted on its port (the ports' counters hold it, with the other engines'). */
function portCounts(dom: Domain): [number, number, number, number] {
  const c = dom.e.chip;
  let bytes = c.traffic.bytes;
  let packets = c.traffic.packets;
  let waits = c.traffic.waits;
  for (const s of dom.senders) {
    bytes += s.bulkTraffic.bytes;
    packets += s.bulkTraffic.packets;
    waits += s.bulkTraffic.waits;
  }
  return [bytes, packets, waits, dom.e.dmaWaitCount];
}

/**
 * Put `snap` back and move it on to `landingNs`, its counters to `target` (the kept state's counters carried to that
 * instant, in capture()'s order): Domain.shift() from the instant it was taken, as one period. The caller sets the
 * event log's stream.
 */
export function restoreSnapshot(dom: Domain, snap: DomainSnapshot, landingNs: number, target: readonly number[]): void {
  const { u, e } = dom;
  const c = e.chip;
  const host = u.host;
  const sched = host.sched;
  const counted = portCounts(dom);
  for (const [handle] of sched.eventsOf(e.pos)) sched.cancel(handle);
  for (let i = e.txHead; i !== e.txTail; i = (i + 1) & 0xffff) e.txRing[i & e.mask] = null;
  // History, not state: kept as it is now.
  const { skewLog, skewCount, deepChecks } = e;
  Object.assign(e, snap.engine);
  e.skewLog = skewLog;
  e.skewCount = skewCount;
  e.deepChecks = deepChecks;
  Object.assign(e.stats, snap.stats);
  Object.assign(e.rng, snap.rng);
  refill(e.dmawait, snap.dmawait);
  refill(e.harvest, snap.harvest);
  refill(e.flushlist, snap.flushlist);
  snap.inFlight.forEach((t, j) => {
    e.txRing[(e.txHead + j) & e.mask] = t;
  });
  Object.assign(c, snap.chip);
  Object.assign(c.step, snap.step);
  Object.assign(c.traffic, snap.traffic);
  dom.senders.forEach((s, i) => {
    s.restore(snap.senders[i] as SenderCopy);
  });
  for (let i = 0; i < snap.txs.length; i++) loadTx(snap.txs[i] as EmuTx, snap.txNumbers, snap.txRefs, i);
  u.vectorCounts[e.pos] = snap.vectorCount;
  // The ports have counted the domain up to now: taken back to the snapshot's, as shift() adds from there.
  const back = portCounts(dom).map((v, i) => (counted[i] as number) - v);
  const port = c.txPort;
  if (port !== null) {
    const p = port.counters;
    p.xmitBytes -= back[0] as number;
    p.rcvBytes -= back[0] as number;
    p.xmitPackets -= back[1] as number;
    p.rcvPackets -= back[1] as number;
    p.xmitWait -= back[2] as number;
  }
  const dmaPort = port ?? host.ports[0];
  if (dmaPort) dmaPort.counters.dmaWait -= back[3] as number;
  const epoch = c.epoch;
  const idleEpoch = c.idleEpoch;
  const tokens = dom.senders.map((s) => s.token);
  dom.shift({ atNs: snap.atNs, counters: snap.counters }, { atNs: landingNs, counters: target }, 1, e.descAvail);
  // The snapshot's pending events, moved on as shift() moves pending events, under new handles.
  const shiftNs = landingNs - snap.atNs;
  const handles = new Map<number, number>();
  for (const v of snap.events) {
    let b = v.b;
    if (v.kind === Ev.chipDone) b += c.epoch - epoch;
    else if (v.kind === Ev.idleTimer) b += c.idleEpoch - idleEpoch;
    else if (v.kind === Ev.senderTimeout) {
      const i = dom.senders.findIndex((s) => s.id === v.a);
      if (i >= 0) b += (dom.senders[i] as Sender).token - (tokens[i] as number);
    }
    handles.set(v.handle, sched.at(v.timeNs + shiftNs, v.kind, v.a, b, e.pos));
  }
  const rename = (h: number): number => handles.get(h) ?? h;
  c.doneEvent = rename(c.doneEvent);
  c.idleEvent = rename(c.idleEvent);
  for (const s of dom.senders) s.renameEvents(rename);
}
