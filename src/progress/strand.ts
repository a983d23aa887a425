// The stranded-waiter rule: from successive samples of a unit's waiters and engines, a verdict per
// waiter. Pure, one rule for every backend; it keeps its memory in a track the caller holds and
// takes time from the samples.
//
// A sender asleep on an engine's dmawait list is woken only by sdma_desc_avail (a retirement on
// that engine) or sdma_flush. If the retirement that should have woken it ran entirely inside the
// window of sdma_check_progress (the free count read before the head-lock sequence sample), the
// sender sleeps on an engine that is running, empty and quiet, and nothing will ever wake it: a
// QP has no timer (`stranded`, reason `lost-wakeup`); a PSM writer gives up after
// SDMA_IOWAIT_TIMEOUT (1 s, user_sdma.h), leaves the list and retries, so the same window costs it
// a repeated 1 s stall (`psm-stall`), not a hang. Waiters on an engine that is not running are
// `orphaned` (link down, or a flush on kernels before the orphaned-waiter wake-up in sdma_flush).
//
// Every candidate verdict must hold for STRAND_SAMPLES consecutive samples spanning strandMs, with
// the engine quiet (DH, DT, TXH, TXT, DQF, the interrupt counters and seq unchanged) across the
// span: that persistence removes snapshot skew between qp_stats and sdes and the torn, transient
// flag/on-list mismatches of an unlocked qp_stats read.

import type { EngineSample, Waiter, WaitersSample } from '../backend.js';
import { SDMA_WAIT_BATCH_SIZE } from './constants.js';
import { type Candidate, candidateOf, type UnitView, viewEngines } from './strand-sample.js';
import { waiterKey } from './waiters.js';

/** Every waiter verdict, in a stable order. */
export const WAITER_VERDICTS = ['waiting', 'stranded', 'orphaned', 'psm-stall', 'error-state', 'unknown'] as const;
export type WaiterVerdict = (typeof WAITER_VERDICTS)[number];

/** Every waiter reason, in a stable order. */
export const WAITER_REASONS = [
  'engine-busy', // waiting: its engine has work in flight or moved: a retirement will harvest it
  'own-pending', // waiting: descriptors of its own are in flight; their retirement wakes it
  'other-list', // waiting: a PIO, TX or KMEM wait, not an engine's dmawait list
  'off-list', // waiting: the wait flag without the on-list bit (a torn read, or a wake-up in progress)
  'confirming', // waiting: the rule holds, for fewer than 3 samples or less than strandMs so far
  'unit-busy', // waiting: a PSM writer (engine unknown) while some running engine of its unit is busy
  'lost-wakeup', // stranded or psm-stall: asleep on a running, empty, quiet engine
  'batch-limit', // stranded: as lost-wakeup, but its engine had more than 20 waiters (sdma_desc_avail takes 20 per pass)
  'engine-not-running', // orphaned: its engine is not in s99_Running (link down, halted, gone)
  'qp-error', // error-state: a QP in ERR still on the list (notify_error_qp leaves a busy QP queued)
  'engine-unknown', // unknown: no engine named, or no sample of it
  'no-ring-state', // unknown: the engine's ring (heads and tails) is not readable
  'device-gone', // unknown: the device reads all-ones; the device itself is the finding, not its waiters
] as const;
export type WaiterReason = (typeof WAITER_REASONS)[number];

/** Consecutive samples a candidate verdict must hold before it is given. */
export const STRAND_SAMPLES = 3;

/** Default span (ms) a candidate must hold: normal wake latency is microseconds to a few ms. */
export const DEFAULT_STRAND_MS = 200;

/** A PSM writer's wait ends by itself after this long (SDMA_IOWAIT_TIMEOUT, user_sdma.h). */
export const PSM_WAIT_TIMEOUT_MS = 1000;

/** Rule settings. */
export interface StrandOptions {
  /** A candidate must hold this long (default 200). */
  strandMs: number;
  /** A recording of one instant: nothing can move, so no time-based verdict. */
  frozen?: boolean;
}

/** What the rule remembers of one waiter. */
interface WaiterTrack {
  /** The identity it was first seen with (a PSM pid reused by another command is a new waiter). */
  identity: string;
  candidate: WaiterVerdict | null;
  streak: number;
  streakSinceMs: number;
  /** The largest number of dmawait waiters seen on its engine while it waited. */
  crowd: number;
  /** Episodes of a confirmed stranded / psm-stall verdict seen for this waiter. */
  episodes: number;
  confirmed: boolean;
  seenAtRound: number;
}

/** What the rule remembers of one unit: its engines' previous quiet keys, its waiters. */
export interface StrandTrack {
  round: number;
  quietKeys: Map<number, string>;
  waiters: Map<string, WaiterTrack>;
  /** PSM stall episodes of writers no longer seen (kept so a repeated stall is counted across writers). */
  psmStallsGone: number;
}

/** A fresh track for one unit. */
export function newStrandTrack(): StrandTrack {
  return { round: 0, quietKeys: new Map(), waiters: new Map(), psmStallsGone: 0 };
}

/** The rule's answer for one waiter. */
export interface WaiterJudgement {
  waiter: Waiter;
  verdict: WaiterVerdict;
  reason: WaiterReason;
  /**
   * The engine is the one qp_stats printed (recomputed at print time, qp_to_sdma_engine) and
   * another engine serving the same VL was not idle, or the VL map is unknown: it probably, not
   * certainly, waits there.
   */
  probable: boolean;
  /** When the current candidate verdict started to hold (ms), or null. */
  holdingSinceMs: number | null;
  /** Confirmed stranded or psm-stall episodes of this waiter so far. */
  episodes: number;
}

function identityOf(w: Waiter): string {
  return w.kind === 'psm' ? `${w.command ?? ''}` : w.kind === 'qp' ? `${w.waitsFor}` : '';
}

/**
 * Judge every waiter of one new sample of a unit, updating `track`. `engines` are the unit's engine
 * samples of the same round. Samples must come in time order; a waiter listed twice (a qp_stats
 * read in several chunks) is judged once.
 */
export function judgeWaiters(
  track: StrandTrack,
  sample: WaitersSample,
  engines: readonly EngineSample[],
  opts: StrandOptions,
): WaiterJudgement[] {
  track.round += 1;
  const views = viewEngines(track.quietKeys, engines);
  const now = sample.timeMs;
  const unique = new Map<string, Waiter>();
  for (const w of sample.waiters) unique.set(waiterKey(w), w);
  const crowd = new Map<number, number>();
  for (const w of unique.values()) {
    if (w.engine !== null && w.waitsFor === 'dma-desc') crowd.set(w.engine, (crowd.get(w.engine) ?? 0) + 1);
  }
  const out: WaiterJudgement[] = [];
  for (const [key, w] of unique) {
    let t = track.waiters.get(key);
    if (!t || t.identity !== identityOf(w) || t.seenAtRound !== track.round - 1) {
      if (t && w.kind === 'psm') track.psmStallsGone += t.episodes;
      t = {
        identity: identityOf(w),
        candidate: null,
        streak: 0,
        streakSinceMs: now,
        crowd: 0,
        episodes: 0,
        confirmed: false,
        seenAtRound: track.round,
      };
      track.waiters.set(key, t);
    }
    t.seenAtRound = track.round;
    if (w.engine !== null) t.crowd = Math.max(t.crowd, crowd.get(w.engine) ?? 0);
    out.push(judgeOne(t, w, candidateOf(w, views), views, now, opts));
  }
  for (const [key, t] of track.waiters) {
    if (t.seenAtRound !== track.round) {
      if (key.startsWith('psm:')) track.psmStallsGone += t.episodes;
      track.waiters.delete(key);
    }
  }
  return out;
}

function judgeOne(t: WaiterTrack, w: Waiter, c: Candidate, views: UnitView, now: number, opts: StrandOptions): WaiterJudgement {
  const timed = c.verdict === 'stranded' || c.verdict === 'orphaned' || c.verdict === 'psm-stall' || c.verdict === 'error-state';
  const quiet = c.quietNeeded.every((e) => views.engines.get(e)?.quiet === true);
  if (!timed) {
    t.candidate = null;
    t.streak = 0;
    t.confirmed = false;
  } else if (t.candidate === c.verdict && t.streak > 0 && quiet) {
    t.streak += 1;
  } else {
    t.candidate = c.verdict;
    t.streak = 1;
    t.streakSinceMs = now;
    t.confirmed = false;
  }
  const holdingSinceMs = timed ? t.streakSinceMs : null;
  // Plain literals, not spreads: this runs once per waiter per sample (thousands of QPs at 10 Hz).
  const judged = (verdict: WaiterVerdict, reason: WaiterReason): WaiterJudgement => ({
    waiter: w,
    verdict,
    reason,
    probable: c.probable,
    holdingSinceMs,
    episodes: t.episodes,
  });
  if (!timed) return judged(c.verdict, c.reason);
  const held = !opts.frozen && t.streak >= STRAND_SAMPLES && now - t.streakSinceMs >= opts.strandMs;
  if (!held) return judged(opts.frozen ? 'unknown' : 'waiting', 'confirming');
  if (!t.confirmed && (c.verdict === 'stranded' || c.verdict === 'psm-stall')) t.episodes += 1;
  t.confirmed = true;
  return judged(c.verdict, c.verdict === 'stranded' && t.crowd > SDMA_WAIT_BATCH_SIZE ? 'batch-limit' : c.reason);
}

/** Confirmed PSM stall episodes of a unit so far, of writers still seen and gone. */
export function psmStallEpisodes(track: StrandTrack): number {
  let n = track.psmStallsGone;
  for (const [key, t] of track.waiters) if (key.startsWith('psm:')) n += t.episodes;
  return n;
}

/** How many judgements have each verdict (every verdict present, 0 when none). */
export function countVerdicts(js: readonly WaiterJudgement[]): Record<WaiterVerdict, number> {
  const out = Object.fromEntries(WAITER_VERDICTS.map((v) => [v, 0])) as Record<WaiterVerdict, number>;
  for (const j of js) out[j.verdict] += 1;
  return out;
}
