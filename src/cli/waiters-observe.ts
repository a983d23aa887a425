// Observing the waiters of each unit beside its engines, shared by waiters, engines, watch and
// health: one stranded-rule track per unit, fed with the same round's engine samples.
import type { EngineSample, Unit, WaitersSample, WaiterVisibility } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import {
  DEFAULT_STRAND_MS,
  judgeWaiters,
  newStrandTrack,
  psmStallEpisodes,
  STRAND_SAMPLES,
  type StrandTrack,
  type WaiterJudgement,
} from '../progress/strand.js';
import { visibilityOf } from '../progress/waiters.js';
import { parseIntArg } from './args.js';

/** The waiters of one unit in one round. */
export interface UnitWaiters {
  unit: Unit;
  /** False when the backend cannot list waiters at all (no waiters() for this unit). */
  listed: boolean;
  /** When the waiters were read (ms, the backend's clock), or null when not listed. */
  timeMs: number | null;
  judgements: WaiterJudgement[];
  /** One entry per kind: visible or not, and why. */
  visibility: WaiterVisibility[];
  /** Confirmed PSM stall episodes seen so far (of writers still waiting and gone). */
  psmStalls: number;
  /** Enough samples were judged (3) for a stranded verdict to be possible. */
  confirmable: boolean;
}

/** Why a backend without waiters() sees none. */
export const NO_WAITERS_REASON = 'this backend does not list waiters';

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
      const blind = (reason: string): UnitWaiters => ({
        unit,
        listed: false,
        timeMs: null,
        judgements: [],
        visibility: visibilityOf([]).map((v) => ({ ...v, reason })),
        psmStalls: 0,
        confirmable: false,
      });
      if (!unit.waiters) {
        out.push(blind(NO_WAITERS_REASON));
        continue;
      }
      let sample: WaitersSample;
      try {
        sample = await unit.waiters();
      } catch (e) {
        if (this.opts.strict || !isHfi1SdmaError(e)) throw e;
        out.push(blind(`the waiters could not be read: ${e.message}`));
        continue;
      }
      let track = this.tracks.get(unit);
      if (!track) {
        track = newStrandTrack();
        this.tracks.set(unit, track);
      }
      const engines = rows.filter((r) => r.unit === unit).map((r) => r.s);
      const judgements = judgeWaiters(track, sample, engines, this.opts);
      out.push({
        unit,
        listed: true,
        timeMs: sample.timeMs,
        judgements,
        visibility: visibilityOf(sample.visibility),
        psmStalls: psmStallEpisodes(track),
        confirmable: !this.opts.frozen && track.round >= STRAND_SAMPLES,
      });
    }
    return out;
  }
}

/** Waiters on one engine and how many of them are stranded (for the engines and watch columns). */
export interface EngineWaitCount {
  count: number;
  stranded: number;
}

/** Per `unit/engine` key: waiters and stranded ones. */
export function waitCounts(uws: readonly UnitWaiters[]): Map<string, EngineWaitCount> {
  const m = new Map<string, EngineWaitCount>();
  for (const uw of uws) {
    for (const j of uw.judgements) {
      if (j.waiter.engine === null) continue;
      const key = `${uw.unit.info.unit}/${j.waiter.engine}`;
      const c = m.get(key) ?? { count: 0, stranded: 0 };
      c.count += 1;
      if (j.verdict === 'stranded') c.stranded += 1;
      m.set(key, c);
    }
  }
  return m;
}

/** The `wait` cell: `-` when waiters cannot be listed, the count, `!` after it when one is stranded. */
export function waitCell(uw: UnitWaiters | undefined, c: EngineWaitCount | undefined): string {
  if (!uw?.listed) return '-';
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

/** The waiter fields of one engine in EngineJson (`engines`, `watch`): null when waiters cannot be listed. */
export function waiterFields(
  uw: UnitWaiters | undefined,
  counts: ReadonlyMap<string, EngineWaitCount>,
  unit: number,
  engine: number,
) {
  if (!uw?.listed) return { waiters: null, strandedWaiters: null };
  const c = counts.get(`${unit}/${engine}`);
  // Before the third sample nothing can be stranded yet: null, not a 0 nobody could check.
  return { waiters: c?.count ?? 0, strandedWaiters: uw.confirmable ? (c?.stranded ?? 0) : null };
}
