// Observing the waiters of each unit beside its engines, shared by waiters, engines, watch and
// health: one stranded-rule track per unit, fed with the same round's engine samples.
import type { EngineSample, Unit, WaiterVisibility } from '../backend.js';
import {
  DEFAULT_STRAND_MS,
  judgeWaiters,
  newStrandTrack,
  psmStallEpisodes,
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

  constructor(private readonly opts: { strandMs: number; frozen?: boolean }) {}

  /** Read and judge the waiters of every unit of `rows` (a round of engine samples). */
  async round(units: readonly Unit[], rows: readonly { unit: Unit; s: EngineSample }[]): Promise<UnitWaiters[]> {
    const out: UnitWaiters[] = [];
    for (const unit of units) {
      if (!unit.waiters) {
        out.push({
          unit,
          listed: false,
          timeMs: null,
          judgements: [],
          visibility: visibilityOf([]).map((v) => ({ ...v, reason: NO_WAITERS_REASON })),
          psmStalls: 0,
        });
        continue;
      }
      const sample = await unit.waiters();
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
      out.push(`${uw.unit.info.name}: waiters not visible: ${NO_WAITERS_REASON}`);
      continue;
    }
    for (const v of uw.visibility) {
      if (v.visible) continue;
      out.push(`${uw.unit.info.name}: ${v.kind} waiters not visible: ${v.reason ?? 'unknown'}${v.fix ? ` (${v.fix})` : ''}`);
    }
  }
  return out;
}
