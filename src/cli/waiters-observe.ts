// Observing the waiters of each unit beside its engines, shared by waiters, engines, watch and
// health: one stranded-rule track per unit, fed with the same round's engine samples.
import type { EngineSample, Unit } from '../backend.js';
import { DEFAULT_STRAND_MS, newStrandTrack, type StrandTrack } from '../progress/strand.js';
import { NO_WAITERS_REASON, type ObservedWaiters, observeWaiters } from '../waiter-observer.js';
import { parseIntArg } from './args.js';

/** The waiters of one unit in one round. */
export interface UnitWaiters extends ObservedWaiters {
  unit: Unit;
}

export { NO_WAITERS_REASON };

/** Parse --strand-ms (default 200). */
export function strandMsArg(raw: unknown): number {
  return raw === undefined ? DEFAULT_STRAND_MS : parseIntArg('--strand-ms', raw, 1, 3_600_000);
}

/** Reads each unit's waiters every round and judges them against that round's engine samples. */
export class WaiterObserver {
  private readonly tracks = new Map<Unit, StrandTrack>();

  /**
   * `strict`: a failed waiters() read rejects (the waiters command); otherwise the unit is shown as
   * not listing its waiters, with the error as the reason (engines, watch, health: the engines still show).
   */
  constructor(private readonly opts: { strandMs: number; frozen?: boolean; strict?: boolean }) {}

  /** Read and judge the waiters of every unit of `rows` (a round of engine samples). */
  async round(units: readonly Unit[], rows: readonly { unit: Unit; s: EngineSample }[]): Promise<UnitWaiters[]> {
    const out: UnitWaiters[] = [];
    for (const unit of units) {
      let track = this.tracks.get(unit);
      if (!track) {
        track = newStrandTrack();
        this.tracks.set(unit, track);
      }
      const engines = rows.filter((r) => r.unit === unit).map((r) => r.s);
      out.push({ unit, ...(await observeWaiters(unit, engines, track, this.opts)) });
    }
    return out;
  }
}

/** Waiters on one engine and how many of them are stranded (for the engines and watch columns). */
export interface EngineWaitCount {
  count: number;
  stranded: number;
}

/** The key of one engine in `waitCounts`: the unit's name (numbers repeat across modules: hfi1_0, hfi2_0) and the engine. */
export function waitKey(unit: Unit, engine: number): string {
  return `${unit.info.name}/${engine}`;
}

/** Per engine (`waitKey`): waiters and stranded ones. */
export function waitCounts(uws: readonly UnitWaiters[]): Map<string, EngineWaitCount> {
  const m = new Map<string, EngineWaitCount>();
  for (const uw of uws) {
    for (const j of uw.judgements) {
      if (j.waiter.engine === null) continue;
      const key = waitKey(uw.unit, j.waiter.engine);
      const c = m.get(key) ?? { count: 0, stranded: 0 };
      c.count += 1;
      if (j.verdict === 'stranded') c.stranded += 1;
      m.set(key, c);
    }
  }
  return m;
}

/** Whether any kind of waiter can be seen on the unit: listed, and at least one kind visible. */
export function seesWaiters(uw: UnitWaiters | undefined): uw is UnitWaiters {
  return uw?.listed === true && uw.visibility.some((v) => v.visible);
}

/** Whether a kind that can be stranded (a QP, an IPoIB queue; a PSM writer stalls instead) can be seen. */
export function seesStrandable(uw: UnitWaiters | undefined): boolean {
  return uw?.listed === true && uw.visibility.some((v) => v.visible && v.kind !== 'psm');
}

/** The `wait` cell: `-` when no waiter can be seen, the count, `!` after it when one is stranded. */
export function waitCell(uw: UnitWaiters | undefined, c: EngineWaitCount | undefined): string {
  if (!seesWaiters(uw)) return '-';
  if (!c) return '0';
  return c.stranded > 0 ? `${c.count}!` : String(c.count);
}

/** One line per kind that cannot be seen: `hfi1_0: psm waiters not visible: reason (fix)`. */
export function invisibleLines(uws: readonly UnitWaiters[]): string[] {
  const out: string[] = [];
  for (const uw of uws) {
    if (!uw.listed) {
      out.push(`${uw.unit.info.name}: waiters not visible: ${uw.visibility[0]?.reason ?? NO_WAITERS_REASON}`);
      continue;
    }
    for (const v of uw.visibility) {
      if (v.visible) continue;
      out.push(`${uw.unit.info.name}: ${v.kind} waiters not visible: ${v.reason ?? 'unknown'}${v.fix ? ` (${v.fix})` : ''}`);
    }
  }
  return out;
}

/** The waiter fields of one engine in EngineJson (`engines`, `watch`): null when no waiter can be seen. */
export function waiterFields(
  uw: UnitWaiters | undefined,
  counts: ReadonlyMap<string, EngineWaitCount>,
  unit: Unit,
  engine: number,
) {
  if (!seesWaiters(uw)) return { waiters: null, strandedWaiters: null };
  const c = counts.get(waitKey(unit, engine));
  // Before the third sample, or with no QP or IPoIB queue visible, nothing can be called stranded: null,
  // not a 0 nobody could check.
  return { waiters: c?.count ?? 0, strandedWaiters: uw.confirmable && seesStrandable(uw) ? (c?.stranded ?? 0) : null };
}
