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
//
// Certain or probable. qp_stats prints the engine qp_to_sdma_engine (qp.c) computes at print time, which
// need not be the engine whose dmawait list holds the QP: any engine of the same VL may. While such a
// sibling is busy, the QP may be a legitimate waiter there. The kernel's wake rule settles it with
// evidence: every retirement pass (sdma_make_progress, sdma.c) that retired something calls
// sdma_desc_avail, which walks the engine's dmawait list in order, takes at most SDMA_WAIT_BATCH_SIZE (20)
// waiters, and stops at the first whose need (iowait_get_all_desc: at most MAX_WAITER_NEED) exceeds the
// free count. So a waiter on a sibling that keeps retiring with room for any waiter leaves the list within a
// few passes: it does not stay asleep while that sibling turns its whole ring over with room at both ends
// of every interval. A sibling that stayed idle and quiet would strand it as surely as the printed engine.
// When every sibling of the VL gave one of these two pieces of evidence over the streak, the strand is
// certain; until then it is probable.

import type { EngineSample, Waiter, WaitersSample } from '../backend.js';
import { MAX_WAITER_NEED, SDMA_WAIT_BATCH_SIZE } from './constants.js';
import { type Candidate, candidateOf, type EngineView, type UnitView, viewEngines } from './strand-sample.js';
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

/** The reasons each waiter verdict is given with. */
export const WAITER_REASONS_BY_VERDICT = {
  waiting: ['engine-busy', 'own-pending', 'other-list', 'off-list', 'confirming', 'unit-busy'],
  stranded: ['lost-wakeup', 'batch-limit'],
  orphaned: ['engine-not-running'],
  'psm-stall': ['lost-wakeup'],
  'error-state': ['qp-error'],
  unknown: ['confirming', 'engine-unknown', 'no-ring-state', 'device-gone'],
} as const satisfies { readonly [V in WaiterVerdict]: readonly WaiterReason[] };

/** Consecutive samples a candidate verdict must hold before it is given. */
export const STRAND_SAMPLES = 3;

/** Default span (ms) a candidate must hold: normal wake latency is microseconds to a few ms. */
export const DEFAULT_STRAND_MS = 200;

/** A PSM writer's wait ends by itself after this long (SDMA_IOWAIT_TIMEOUT, user_sdma.h). */
export const PSM_WAIT_TIMEOUT_MS = 1000;

/** A waiter first seen after a gap in observation this long began at an unknown time before (ms). */
const UNSEEN_GAP_MS = 1000;

/** Rule settings. */
export interface StrandOptions {
  /** A candidate must hold this long (default 200). */
  strandMs: number;
  /** A recording of one instant: nothing can move, so no time-based verdict. */
  frozen?: boolean;
  /** The unit's ring size (a sibling that retires a whole ring gives evidence); 2048 when left out. */
  descqCnt?: number;
}

/** What a sibling engine of a probably stranded waiter's VL showed since the candidate began to hold. */
export interface SiblingEvidence {
  /** Running and empty at every sample, and quiet between them. */
  idleQuiet: boolean;
  /** Descriptors retired over intervals that began and ended with the engine running with room for any waiter. */
  roomRetired: number;
  /** DH and whether it had room, at the previous sample. */
  prevHead: number | null;
  prevRoom: boolean;
  /** Running at the latest sample. */
  running: boolean;
}

/** What the rule remembers of one waiter. */
export interface WaiterTrack {
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
  /** When it was first seen waiting, and whether it may have waited long before that (first round, or a gap). */
  firstSeenMs: number;
  firstSeenAtLeast: boolean;
  /** Evidence on the siblings of its VL over the current streak, by engine. */
  siblings: Map<number, SiblingEvidence>;
}

/** What the rule remembers of one unit: its engines' previous quiet keys, its waiters. */
export interface StrandTrack {
  round: number;
  /** When the previous round was judged (ms), or null before the first. */
  lastRoundMs: number | null;
  quietKeys: Map<number, string>;
  waiters: Map<string, WaiterTrack>;
  /** PSM stall episodes of writers no longer seen (kept so a repeated stall is counted across writers). */
  psmStallsGone: number;
}

/** A fresh track for one unit. */
export function newStrandTrack(): StrandTrack {
  return { round: 0, lastRoundMs: null, quietKeys: new Map(), waiters: new Map(), psmStallsGone: 0 };
}

/** The rule's answer for one waiter. */
export interface WaiterJudgement {
  readonly waiter: Waiter;
  readonly verdict: WaiterVerdict;
  readonly reason: WaiterReason;
  /**
   * The engine is the one qp_stats printed (recomputed at print time, qp_to_sdma_engine) and
   * another engine serving the same VL was not idle, or the VL map is unknown: it probably, not
   * certainly, waits there.
   */
  readonly probable: boolean;
  /** When the current candidate verdict started to hold (ms), or null. */
  readonly holdingSinceMs: number | null;
  /** Confirmed stranded or psm-stall episodes of this waiter so far. */
  readonly episodes: number;
  /** When the rule first saw it waiting (ms of the backend's clock). */
  readonly firstSeenMs: number;
  /** It may have waited long before firstSeenMs (first seen at the first sample, or after a gap): its age is a lower bound. */
  readonly ageAtLeast: boolean;
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
  const views = viewEngines(track.quietKeys, engines, opts.descqCnt);
  const now = sample.timeMs;
  const gap = track.lastRoundMs === null || now - track.lastRoundMs >= UNSEEN_GAP_MS;
  track.lastRoundMs = now;
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
        firstSeenMs: now,
        firstSeenAtLeast: gap,
        siblings: new Map(),
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
    t.siblings.clear();
  } else if (t.candidate === c.verdict && t.streak > 0 && quiet) {
    t.streak += 1;
    gatherEvidence(t.siblings, c.siblings, views);
  } else {
    t.candidate = c.verdict;
    t.streak = 1;
    t.streakSinceMs = now;
    t.confirmed = false;
    t.siblings.clear();
    gatherEvidence(t.siblings, c.siblings, views);
  }
  const holdingSinceMs = timed ? t.streakSinceMs : null;
  const probable = c.probable && !certainBySiblings(t.siblings, c.siblings, opts.descqCnt ?? 2048);
  // Plain literals, not spreads: this runs once per waiter per sample (thousands of QPs at 10 Hz).
  const judged = (verdict: WaiterVerdict, reason: WaiterReason): WaiterJudgement => ({
    waiter: w,
    verdict,
    reason,
    probable,
    holdingSinceMs,
    episodes: t.episodes,
    firstSeenMs: t.firstSeenMs,
    ageAtLeast: t.firstSeenAtLeast,
  });
  if (!timed) return judged(c.verdict, c.reason);
  const held = !opts.frozen && t.streak >= STRAND_SAMPLES && now - t.streakSinceMs >= opts.strandMs;
  if (!held) return judged(opts.frozen ? 'unknown' : 'waiting', 'confirming');
  if (!t.confirmed && (c.verdict === 'stranded' || c.verdict === 'psm-stall')) t.episodes += 1;
  t.confirmed = true;
  return judged(c.verdict, c.verdict === 'stranded' && t.crowd > SDMA_WAIT_BATCH_SIZE ? 'batch-limit' : c.reason);
}

/** The engine has room for any waiter at the head of its dmawait list (and is running). */
function hasRoom(v: EngineView): boolean {
  return v.running && v.free !== null && v.free >= MAX_WAITER_NEED;
}

/** Update the evidence of each sibling with this sample (the first sample of a streak starts it). */
function gatherEvidence(evidence: Map<number, SiblingEvidence>, siblings: readonly number[], views: UnitView): void {
  for (const e of siblings) {
    const v = views.engines.get(e);
    if (!v) {
      evidence.delete(e);
      continue;
    }
    const idleNow = v.running && v.empty === true;
    const room = hasRoom(v);
    const ev = evidence.get(e);
    if (!ev) {
      evidence.set(e, { idleQuiet: idleNow, roomRetired: 0, prevHead: v.descqHead, prevRoom: room, running: v.running });
      continue;
    }
    ev.idleQuiet = ev.idleQuiet && idleNow && v.quiet;
    if (ev.prevRoom && room && ev.prevHead !== null && v.descqHead !== null) {
      const d = (v.descqHead - ev.prevHead) >>> 0;
      // A clean-up resets DH to 0: a huge u32 delta is that, not retirement.
      if (d <= 0x7fff_ffff) ev.roomRetired += d;
    }
    ev.prevHead = v.descqHead;
    ev.prevRoom = room;
    ev.running = v.running;
  }
}

/** Every sibling gave evidence that it holds no waiter that long: idle and quiet, or a whole ring retired with room. */
function certainBySiblings(evidence: Map<number, SiblingEvidence>, siblings: readonly number[], descqCnt: number): boolean {
  if (siblings.length === 0) return false;
  return siblings.every((e) => {
    const ev = evidence.get(e);
    return ev?.running === true && (ev.idleQuiet || ev.roomRetired >= descqCnt);
  });
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
