// Reading one unit's waiters and judging them beside the same round's engine samples, shared by the
// commands (waiters, engines, watch, health) and the exporter: a backend that cannot list waiters,
// or whose read fails, is "not listed" with the reason, never "no waiters".
import type { EngineSample, Unit, WaitersSample, WaiterVisibility } from './backend.js';
import { isHfi1SdmaError } from './errors.js';
import {
  judgeWaiters,
  psmStallEpisodes,
  STRAND_SAMPLES,
  type StrandOptions,
  type StrandTrack,
  type WaiterJudgement,
} from './progress/strand.js';
import { visibilityOf } from './progress/waiters.js';

/** One unit's waiters in one round, judged. */
export interface ObservedWaiters {
  /** False when the unit cannot list its waiters (no waiters(), a failed or late read). */
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

/** How to read: `strict` rethrows a failed read; `read` bounds it (null: it did not answer in time). */
export interface ObserveOptions extends StrandOptions {
  strict?: boolean;
  read?: (p: Promise<WaitersSample>) => Promise<WaitersSample | null>;
}

/** Read `unit`'s waiters and judge them against `engines` (the same round), updating `track`. */
export async function observeWaiters(
  unit: Unit,
  engines: readonly EngineSample[],
  track: StrandTrack,
  opts: ObserveOptions,
): Promise<ObservedWaiters> {
  const blind = (reason: string): ObservedWaiters => ({
    listed: false,
    timeMs: null,
    judgements: [],
    visibility: visibilityOf([]).map((v) => ({ ...v, reason })),
    psmStalls: 0,
    confirmable: false,
  });
  if (!unit.waiters) return blind(NO_WAITERS_REASON);
  let sample: WaitersSample | null;
  try {
    sample = await (opts.read ? opts.read(unit.waiters()) : unit.waiters());
  } catch (e) {
    if (opts.strict || !isHfi1SdmaError(e)) throw e;
    return blind(`the waiters could not be read: ${e.message}`);
  }
  if (sample === null) return blind('the waiters did not answer in time');
  const judgements = judgeWaiters(track, sample, engines, opts);
  return {
    listed: true,
    timeMs: sample.timeMs,
    judgements,
    visibility: visibilityOf(sample.visibility),
    psmStalls: psmStallEpisodes(track),
    confirmable: !opts.frozen && track.round >= STRAND_SAMPLES,
  };
}
