// Reading one unit's waiters and judging them beside the same round's engine samples: a backend that
// cannot list waiters, or whose read fails, is "not listed" with the reason, never "no waiters".
import type { EngineSample, Unit, WaitersSample } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { judgeWaiters, psmStallEpisodes, STRAND_SAMPLES, type StrandOptions, type StrandTrack } from '../progress/strand.js';
import { visibilityOf } from '../progress/waiters.js';
import type { Draft, EngineWaiters, UnitWaitersRound } from './round.js';

/** Why a backend without waiters() sees none. */
export const NO_WAITERS_REASON = 'this backend does not list waiters';

/** How to read: `strict` rethrows a failed read; `read` bounds it (null: it did not answer in time). */
export interface ObserveOptions extends StrandOptions {
  strict?: boolean;
  read?: (p: Promise<WaitersSample>) => Promise<WaitersSample | null>;
}

/** A unit that was not read this round lists no waiters, for that reason. */
export function blindWaiters(reason: string): UnitWaitersRound {
  return {
    listed: false,
    timeMs: null,
    judgements: [],
    visibility: visibilityOf([]).map((v) => ({ ...v, reason })),
    psmStalls: 0,
    confirmable: false,
    owners: [],
  };
}

/** Read `unit`'s waiters and judge them against `engines` (the same round), updating `track`. */
export async function observeWaiters(
  unit: Unit,
  engines: readonly EngineSample[],
  track: StrandTrack,
  opts: ObserveOptions,
): Promise<UnitWaitersRound> {
  const blind = blindWaiters;
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
    owners: [],
  };
}

/** Whether any kind of waiter can be seen on the unit: listed, and at least one kind visible. */
export function seesWaiters(uw: UnitWaitersRound | undefined): uw is UnitWaitersRound {
  return uw?.listed === true && uw.visibility.some((v) => v.visible);
}

/**
 * Whether a kind that can be stranded (a QP, an IPoIB queue; a PSM writer stalls instead) can be seen in full: a kind
 * seen only in part (IPoIB queues from the kernel log) never stands for "none stranded".
 */
export function seesStrandable(uw: UnitWaitersRound | undefined): boolean {
  return uw?.listed === true && uw.visibility.some((v) => v.visible && !v.partial && v.kind !== 'psm');
}

/** The waiters of each engine (by absolute index), or null per engine when no waiter can be seen. */
export function engineWaiters(uw: UnitWaitersRound, engines: readonly number[]): Map<number, EngineWaiters | null> {
  const out = new Map<number, Draft<EngineWaiters> | null>();
  if (!seesWaiters(uw)) {
    for (const e of engines) out.set(e, null);
    return out;
  }
  const confirmable = uw.confirmable && seesStrandable(uw);
  for (const e of engines) out.set(e, { count: 0, stranded: 0, probable: 0, confirmable });
  for (const j of uw.judgements) {
    const c = j.waiter.engine === null ? undefined : out.get(j.waiter.engine);
    if (!c) continue;
    c.count += 1;
    if (j.verdict === 'stranded') {
      if (j.probable) c.probable += 1;
      else c.stranded += 1;
    }
  }
  return out;
}

/** The verdicts whose QP a finding names, so whose it is matters. */
const OWNED_VERDICTS: ReadonlySet<string> = new Set(['stranded', 'orphaned', 'error-state']);

/** The QPs of `uw` whose owner a finding needs: stranded (certain or probable), orphaned, in ERR on a list. */
export function qpsToOwn(uw: UnitWaitersRound): { qpn: number; creatorPid: number | null }[] {
  const out = new Map<number, { qpn: number; creatorPid: number | null }>();
  for (const j of uw.judgements) {
    const w = j.waiter;
    if (w.kind === 'qp' && OWNED_VERDICTS.has(j.verdict)) out.set(w.qpn, { qpn: w.qpn, creatorPid: w.creatorPid ?? null });
  }
  return [...out.values()];
}
