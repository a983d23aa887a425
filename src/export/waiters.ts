// The exporter's view of a unit's waiters: read each round beside the engines and judged by the
// stranded-waiter rule (one track per unit, kept across rounds).
import type { EngineSample, Unit, WaiterVisibility } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import {
  judgeWaiters,
  newStrandTrack,
  psmStallEpisodes,
  STRAND_SAMPLES,
  type StrandTrack,
  type WaiterJudgement,
} from '../progress/strand.js';
import { visibilityOf } from '../progress/waiters.js';

/** The waiters of one unit in one round. */
export interface UnitWaiters {
  /** False when the unit does not list waiters (no waiters()) or the read failed. */
  listed: boolean;
  visibility: WaiterVisibility[];
  judgements: WaiterJudgement[];
  /** Confirmed PSM stall episodes since the exporter started. */
  psmStalls: number;
  /** Enough rounds were judged for a stranded verdict to be possible (3): before that, no stranded series. */
  confirmable: boolean;
}

/** Judges every unit's waiters round after round. */
export class ExportWaiters {
  private readonly tracks = new Map<string, StrandTrack>();

  constructor(private readonly strandMs: number) {}

  /** Read `unit`'s waiters and judge them against this round's engine samples; failures make it unlisted. */
  async read(unit: Unit, engines: readonly EngineSample[], read: <T>(p: Promise<T>) => Promise<T | null>): Promise<UnitWaiters> {
    const blind = (reason: string): UnitWaiters => ({
      listed: false,
      visibility: visibilityOf([]).map((v) => ({ ...v, reason })),
      judgements: [],
      psmStalls: 0,
      confirmable: false,
    });
    if (!unit.waiters) return blind('this backend does not list waiters');
    let sample: Awaited<ReturnType<NonNullable<Unit['waiters']>>> | null;
    try {
      sample = await read(unit.waiters());
    } catch (e) {
      if (!isHfi1SdmaError(e)) throw e;
      return blind(`the waiters could not be read: ${e.message}`);
    }
    if (sample === null) return blind('the waiters did not answer in time');
    const name = unit.info.name;
    const track = this.tracks.get(name) ?? newStrandTrack();
    this.tracks.set(name, track);
    const judgements = judgeWaiters(track, sample, engines, { strandMs: this.strandMs });
    return {
      listed: true,
      visibility: visibilityOf(sample.visibility),
      judgements,
      psmStalls: psmStallEpisodes(track),
      confirmable: track.round >= STRAND_SAMPLES,
    };
  }

  /** Forget a unit that could not be read (its waiters warm up afresh). */
  forget(unit: Unit): void {
    this.tracks.delete(unit.info.name);
  }
}
