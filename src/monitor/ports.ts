// The ports' side of a round: every port's counters read with the engines, a short history of them per unit, the
// cause class of each stalled engine from the rises of its ports' counters over its stall (src/progress/cause.ts),
// the engines the bulk service owns (judged idle, never as SDMA rings), and the link events (LinkDowned and
// LinkErrorRecovery rises) remembered across rounds and runs.
import type { PortCounters, PortLink, Unit, UnitInfo } from '../backend.js';
import { type CauseJudgement, type PortSpan, stallCause } from '../progress/cause.js';
import type { Classification } from '../progress/classify.js';
import type { BoundedReads } from './read.js';
import type { Draft, EngineRound } from './round.js';

/** Rounds of port counters kept per unit: enough to span a stall's confirmation (a few rounds) with room. */
export const PORT_HISTORY = 64;

/** One round's port counters of a unit, with its time (ms, the backend's clock). */
export interface PortSample {
  timeMs: number;
  ports: PortCounters[];
}

/** Every port's counters of a unit now; empty when it has none or they could not be read in time. */
export async function readPortCounters(unit: Unit, reads: BoundedReads): Promise<PortCounters[]> {
  if (!unit.portCounters) return [];
  try {
    return (await reads.within(unit.portCounters())) ?? [];
  } catch {
    // the port counters are the cause's evidence, never a reason to fail the round
    return [];
  }
}

/** Keep `sample` in a unit's history, dropping the oldest past PORT_HISTORY. */
export function rememberPorts(history: PortSample[], sample: PortSample): void {
  history.push(sample);
  if (history.length > PORT_HISTORY) history.splice(0, history.length - PORT_HISTORY);
}

/** The rise of a counter from `a` to `b`, or null when either is unknown (a counter that went back was reset: null). */
function rise(a: bigint | null | undefined, b: bigint | null | undefined): bigint | null {
  if (a === null || a === undefined || b === null || b === undefined || b < a) return null;
  return b - a;
}

/** The first kept sample at or after `sinceMs` other than the last (the span of a stall), else the oldest. */
function spanStart(history: readonly PortSample[], sinceMs: number): PortSample | null {
  if (history.length < 2) return null;
  const last = history.length - 1;
  for (let i = 0; i < last; i++) if ((history[i] as PortSample).timeMs >= sinceMs) return history[i] as PortSample;
  return history[0] as PortSample;
}

/** The spans of every port over a stall that began at `sinceMs` (its head's last movement), for the cause. */
export function portSpans(
  history: readonly PortSample[],
  links: readonly PortLink[],
  activeSeen: readonly number[],
  sinceMs: number,
): PortSpan[] {
  const now = history[history.length - 1];
  const from = spanStart(history, sinceMs);
  const ports = new Set([...links.map((l) => l.port), ...(now?.ports.map((p) => p.port) ?? [])]);
  return [...ports]
    .sort((a, b) => a - b)
    .map((port) => {
      const cur = now?.ports.find((p) => p.port === port);
      const old = from?.ports.find((p) => p.port === port);
      const link = links.find((l) => l.port === port);
      const downed = cur?.values.linkDowned ?? null;
      return {
        port,
        state: link?.state ?? null,
        hadLink: activeSeen.includes(port) || (downed !== null && downed > 0n),
        // A port's own VL map is not in the contract: every port is taken to serve the engine (the driver maps every
        // port over the same engines, and an engine's sysfs vl names a VL on each).
        mapsEngine: true,
        xmitWait: rise(old?.values.xmitWait, cur?.values.xmitWait),
        xmitData: rise(old?.values.xmitData, cur?.values.xmitData),
        linkDowned: rise(old?.values.linkDowned, cur?.values.linkDowned),
        linkErrorRecovery: rise(old?.values.linkErrorRecovery, cur?.values.linkErrorRecovery),
      };
    });
}

/** The reason a stalled engine's verdict carries for its cause: the fabric's and the link's replace the host's. */
export function causedReason(c: Classification, cause: CauseJudgement | null): Classification {
  if (c.verdict !== 'stalled' || cause === null || cause.cause === 'host') return c;
  return { ...c, reason: cause.cause === 'fabric' ? 'no-credits' : 'link-lost' };
}

/** Judge the cause of every stalled engine of a round from its unit's port history; the others get none. */
export function judgeCauses(
  engines: Draft<EngineRound>[],
  history: readonly PortSample[],
  links: readonly PortLink[],
  activeSeen: readonly number[],
): void {
  for (const e of engines) {
    const c = e.verdict;
    if (c.verdict !== 'stalled') continue;
    const since = c.stuckSinceMs ?? e.sample.timeMs;
    e.cause = stallCause(portSpans(history, links, activeSeen, since));
    e.verdict = causedReason(c, e.cause);
  }
}

/**
 * Engines the bulk service owns (UnitInfo.settings.bulkServiceEngines): its own traffic moves their heads, so they are
 * never judged as SDMA rings: idle, reason bulk-service.
 */
export function markBulkService(info: UnitInfo, engines: Draft<EngineRound>[]): void {
  const bulk = info.settings?.bulkServiceEngines ?? [];
  if (bulk.length === 0) return;
  for (const e of engines) {
    if (!bulk.includes(e.sample.engine) || e.sample.gone) continue;
    e.verdict = { ...e.verdict, verdict: 'idle', reason: 'bulk-service', stuckSinceMs: null, stuckAtLeast: false };
  }
}

/** What a unit's links remember of each port across rounds (carried in the state): the counters and when they rose. */
export interface PortMark {
  linkDowned: bigint | null;
  linkErrorRecovery: bigint | null;
  /** When LinkDowned / LinkErrorRecovery were last seen to rise (ms, the backend's clock), and by how much in all. */
  downRiseMs: number | null;
  downRises: number;
  lerRiseMs: number | null;
  lerRises: number;
}

/** A mark as this version keeps it (a state of another makes a new one). */
function validMark(m: PortMark): boolean {
  const count = (v: unknown) => v === null || typeof v === 'bigint';
  const time = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));
  return (
    count(m.linkDowned) &&
    count(m.linkErrorRecovery) &&
    time(m.downRiseMs) &&
    time(m.lerRiseMs) &&
    Number.isFinite(m.downRises) &&
    Number.isFinite(m.lerRises)
  );
}

/** Note this round's link counters of a unit's ports in `marks` (keyed `unit/port`), recording any rise. */
export function rememberLinkCounters(
  marks: Map<string, PortMark>,
  unit: string,
  ports: readonly PortCounters[],
  nowMs: number,
): void {
  for (const p of ports) {
    const key = `${unit}/${p.port}`;
    const m = marks.get(key);
    const d = p.values.linkDowned;
    const l = p.values.linkErrorRecovery;
    if (!m || !validMark(m)) {
      marks.set(key, { linkDowned: d, linkErrorRecovery: l, downRiseMs: null, downRises: 0, lerRiseMs: null, lerRises: 0 });
      continue;
    }
    const dr = rise(m.linkDowned, d);
    if (dr !== null && dr > 0n) {
      m.downRiseMs = nowMs;
      m.downRises += Number(dr);
    }
    const lr = rise(m.linkErrorRecovery, l);
    if (lr !== null && lr > 0n) {
      m.lerRiseMs = nowMs;
      m.lerRises += Number(lr);
    }
    m.linkDowned = d;
    m.linkErrorRecovery = l;
  }
}
