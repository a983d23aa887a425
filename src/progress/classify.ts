// The stall classifier: from successive samples of one engine, a verdict and a reason. Pure: it
// keeps its memory in a state object the caller holds, and takes time from the samples.
//
// Verdicts: idle | progressing | stalled | halted | backpressure | gone | unknown. A stall is
// reported only once a second sample confirms it (two-stage, as mlx5's TX timeout does), and
// per-engine counters in the manner of BQL: stallCount, stallMaxMs, stuckSinceMs. Until a verdict
// is confirmed (the first samples, a suspected stall, a halt inside its recovery window, a frozen
// capture) the engine is `unknown`, never a healthy verdict.

import type { EngineSample } from '../backend.js';
import { decodeEngErr, type EngErrBit, isEngHalted, isHaltClassError } from './csr.js';
import { inFlight } from './ring.js';
import { isOperational } from './state.js';

/** Every verdict, in a stable order (exporters iterate it to keep their series stable). */
export const VERDICTS = ['idle', 'progressing', 'backpressure', 'stalled', 'halted', 'gone', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** Every reason, in a stable order: for stalled one of the stall causes; for others a short tag. */
export const REASONS = [
  'chip-not-fetching', // stalled: H(HW) and the fetched counter frozen while T(HW) ≠ H(HW)
  'retirement-lost', // stalled: the chip is ahead of the software head (a lost interrupt, a stuck handler)
  'no-head-movement', // stalled without a more specific cause
  'writeback-stalled', // progressing: H(D) frozen while H(HW) moves (informational: the driver reads HEAD)
  'moving', // progressing: the head moved this interval
  'waiting', // progressing: no movement this interval, but the head moved within --stall-ms
  'ring-full', // backpressure: descq_full_count rising
  'empty', // idle: nothing in flight
  'state', // halted: a non-operational state outlasted the recovery window
  'status-halted', // halted: SEND_DMA_STATUS bit 56
  'error-bits', // halted: a halt-class ENG_ERR bit
  'registers-all-ones', // gone
  'no-ring-state', // only interrupt counts are readable: in-flight work is unknown
  'warming-up', // unknown: work in flight and no movement seen yet (the first samples)
  'stall-suspected', // unknown: no movement for --stall-ms, awaiting the confirming sample
  'recovering', // unknown: a halt or clean-up in progress, still within the recovery window
  'single-instant-capture', // unknown: a recording of one instant shows no movement, so no time-based verdict
  'no-credits', // stalled: its port is ACTIVE and waits for credits while it sends next to nothing (cause.ts: fabric)
  'link-lost', // stalled: a port it sends on lost its link or retrains during the stall (cause.ts: link)
  'bulk-service', // idle: the engine belongs to the bulk service (use_bulksvc): its ring is not SDMA's and is not judged
] as const;
export type Reason = (typeof REASONS)[number];

/** The reasons each verdict is given with: a reason belongs to its verdicts and is never seen with another. */
export const REASONS_BY_VERDICT = {
  idle: ['empty', 'bulk-service'],
  progressing: ['moving', 'waiting', 'writeback-stalled', 'no-ring-state'],
  backpressure: ['ring-full'],
  stalled: ['chip-not-fetching', 'retirement-lost', 'no-head-movement', 'no-credits', 'link-lost'],
  halted: ['state', 'status-halted', 'error-bits'],
  gone: ['registers-all-ones'],
  unknown: ['warming-up', 'stall-suspected', 'recovering', 'single-instant-capture', 'no-ring-state'],
} as const satisfies { readonly [V in Verdict]: readonly Reason[] };

/** The reasons verdict `V` is given with. */
export type ReasonOf<V extends Verdict> = (typeof REASONS_BY_VERDICT)[V][number];

/** A verdict with one of its own reasons (`stalled` with `chip-not-fetching`, never `idle` with it). */
export type VerdictReason = { [V in Verdict]: { readonly verdict: V; readonly reason: ReasonOf<V> } }[Verdict];

/** Classifier settings. */
export interface ClassifyOptions {
  /** No head movement for this long while in flight is a stall (default 1000). */
  stallMs: number;
  /** A halt or non-running state shorter than this is a recovery, not a halt (default 2000). */
  recoveryMs: number;
  /** Ring size of the unit (for slot arithmetic on H(HW)). */
  descqCnt: number;
  /**
   * The samples come from a recording of one instant (a frozen capture): nothing can move, so
   * only verdicts that need no time are given (idle, gone); the rest are `unknown`.
   */
  frozen?: boolean;
}

export const DEFAULT_CLASSIFY_OPTIONS: Omit<ClassifyOptions, 'descqCnt'> = { stallMs: 1000, recoveryMs: 2000 };

/** What the classifier remembers of one engine between samples. */
export interface EngineTrack {
  prev: EngineSample | null;
  /** When the head (software or hardware) last moved, or work first appeared. */
  lastMoveMs: number | null;
  /** lastMoveMs is a time the head was seen to move (or the ring empty): false while it is the first sample's. */
  lastMoveObserved: boolean;
  /** When H(D) last changed. */
  lastHeadDmaMoveMs: number | null;
  /** First sample at which the engine looked halted (state, status or error bits). */
  haltSinceMs: number | null;
  /** First sample at which the flush list was non-empty. */
  flushSinceMs: number | null;
  /** The previous sample already met the stall condition (first stage). */
  suspect: boolean;
  stalled: boolean;
  stallCount: number;
  stallMaxMs: number;
  /** The head was seen to move at least once (a stall-free verdict can be confirmed). */
  seenMove: boolean;
  /** The previous sample met a halt condition (state, STATUS bit 56, halt-class error bits). */
  wasHalted: boolean;
  /** Entries into a halt condition, and returns from one, seen between samples. */
  halts: number;
  recoveries: number;
  /** SDMAErrCt at the first sample that showed it. */
  errCountFirst: bigint | null;
  /** The error bits of the last sample that showed any. */
  lastErrors: EngErrBit[];
}

/** A fresh track. */
export function newTrack(): EngineTrack {
  return {
    prev: null,
    lastMoveMs: null,
    lastMoveObserved: false,
    lastHeadDmaMoveMs: null,
    haltSinceMs: null,
    flushSinceMs: null,
    suspect: false,
    stalled: false,
    stallCount: 0,
    stallMaxMs: 0,
    seenMove: false,
    wasHalted: false,
    halts: 0,
    recoveries: 0,
    errCountFirst: null,
    lastErrors: [],
  };
}

/** The classifier's answer for one sample: a verdict with its reason, and the figures behind it. */
export type Classification = VerdictReason & ClassificationFigures;

/** The figures of a classification, whatever its verdict. */
export interface ClassificationFigures {
  /** Descriptors retired per second since the previous sample (null on the first sample). */
  readonly descPerSec: number | null;
  /** Txreqs completed per second since the previous sample. */
  readonly txPerSec: number | null;
  readonly inFlight: number | null;
  readonly stallCount: number;
  readonly stallMaxMs: number;
  /** When the current stall's head last moved; null when not stalled. */
  readonly stuckSinceMs: number | null;
  /**
   * The head was not seen to move since the first sample, so stuckSinceMs is that sample's time and the stall
   * is at least that old (it may have begun long before).
   */
  readonly stuckAtLeast: boolean;
  /** Decoded error bits (halted and otherwise). */
  readonly errors: readonly EngErrBit[];
  /** The flush list stayed non-empty beyond the recovery window: txreqs nobody will complete. */
  readonly orphanedWork: boolean;
  /** Entries into a halt condition (halted state, STATUS bit 56, halt-class bits) seen so far. */
  readonly halts: number;
  /** Returns from a halt condition to an operational state seen so far. */
  readonly recoveries: number;
  /** Engine-error interrupts since driver load (SDMAErrCt); null when the counters are unread. */
  readonly errCount: number | null;
  /** How much SDMAErrCt rose since the first sample of this track. */
  readonly errCountRise: number;
  /** The error bits of the last sample that showed any (a halt-class error clears within a ms). */
  readonly lastErrors: readonly EngErrBit[];
}

/** Omit from each member of a union. */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type Core = OmitEach<
  Classification,
  | 'stallCount'
  | 'stallMaxMs'
  | 'stuckSinceMs'
  | 'stuckAtLeast'
  | 'halts'
  | 'recoveries'
  | 'errCount'
  | 'errCountRise'
  | 'lastErrors'
>;

function perSec(delta: number, dtMs: number): number | null {
  return dtMs > 0 ? (delta * 1000) / dtMs : null;
}

/** Descriptors retired between two samples: DH delta (u32), or the H(HW) slot delta after a reset. */
function retired(prev: EngineSample, cur: EngineSample, descqCnt: number): number | null {
  if (prev.sw && cur.sw) {
    const d = (cur.sw.descqHead - prev.sw.descqHead) >>> 0;
    // A clean-up resets DH to 0 (the other sdma_make_progress callers, sdma.c); a huge u32 delta means that happened.
    if (d <= 0x7fff_ffff) return d;
  }
  if (prev.csr && cur.csr) return Number((cur.csr.hwHead - prev.csr.hwHead) & BigInt(descqCnt - 1));
  if (prev.counters && cur.counters) return Number((cur.counters.descFetched - prev.counters.descFetched) & 0xffff_ffffn);
  return null;
}

function headMoved(prev: EngineSample, cur: EngineSample): boolean {
  if (prev.sw && cur.sw && prev.sw.descqHead !== cur.sw.descqHead) return true;
  if (prev.csr && cur.csr && prev.csr.hwHead !== cur.csr.hwHead) return true;
  return false;
}

function inFlightOf(s: EngineSample, descqCnt: number): number | null {
  if (s.sw) return inFlight(s.sw.descqHead, s.sw.descqTail);
  if (s.csr) return Number((s.csr.hwTail - s.csr.hwHead) & BigInt(descqCnt - 1));
  return null;
}

function isRunning(s: EngineSample): boolean {
  if (s.state !== null) return s.state === 's99_Running';
  return s.csr !== null && (s.csr.ctrl & 0x1n) === 0x1n; // SDMA_ENABLE (SEND_DMA_* per-engine CSRs, chip_registers.h)
}

function haltReason(s: EngineSample): ReasonOf<'halted'> | null {
  if (s.csr && isEngHalted(s.csr.status)) return 'status-halted';
  if (s.csr && isHaltClassError(s.csr.errStatus)) return 'error-bits';
  if (s.state !== null && !isOperational(s.state)) return 'state';
  return null;
}

function stallReason(prev: EngineSample, cur: EngineSample, descqCnt: number): ReasonOf<'stalled'> {
  const c = cur.csr;
  const p = prev.csr;
  if (c && p && c.hwHead === p.hwHead && c.hwTail !== c.hwHead) {
    const fetchedFrozen =
      (c.descFetchedCnt === null || c.descFetchedCnt === p.descFetchedCnt) &&
      (!cur.counters || !prev.counters || cur.counters.descFetched === prev.counters.descFetched);
    if (fetchedFrozen) return 'chip-not-fetching';
  }
  if (c && cur.sw && c.hwHead !== BigInt(cur.sw.descqHead & (descqCnt - 1))) return 'retirement-lost';
  return 'no-head-movement';
}

/**
 * Classify one new sample of an engine, updating `track`. Samples must come in time order for
 * the same engine; the first sample can only say idle, progressing (no rate), halted or gone.
 */
export function classify(track: EngineTrack, cur: EngineSample, opts: ClassifyOptions): Classification {
  const c = classifyCore(track, cur, opts);
  if (opts.frozen && c.verdict !== 'idle' && c.verdict !== 'gone') {
    return { ...c, verdict: 'unknown', reason: 'single-instant-capture', descPerSec: null, txPerSec: null };
  }
  return c;
}

function classifyCore(track: EngineTrack, cur: EngineSample, opts: ClassifyOptions): Classification {
  // A frozen capture is always a first sample: nothing moved because nothing could.
  const prev = opts.frozen ? null : track.prev;
  const now = cur.timeMs;
  const dtMs = prev ? now - prev.timeMs : 0;
  const errors = cur.csr && !cur.gone ? decodeEngErr(cur.csr.errStatus) : [];
  const base = { errors, inFlight: cur.gone ? null : inFlightOf(cur, opts.descqCnt) };
  track.prev = cur;
  if (errors.length) track.lastErrors = errors;
  if (cur.counters && track.errCountFirst === null) track.errCountFirst = cur.counters.errCount;

  if (cur.gone) {
    track.suspect = false;
    return finish(track, {
      ...base,
      verdict: 'gone',
      reason: 'registers-all-ones',
      descPerSec: null,
      txPerSec: null,
      orphanedWork: false,
    });
  }

  track.flushSinceMs = cur.sw?.flushListNonEmpty ? (track.flushSinceMs ?? now) : null;
  const orphanedWork = track.flushSinceMs !== null && now - track.flushSinceMs >= opts.recoveryMs;

  const descRetired = prev ? retired(prev, cur, opts.descqCnt) : null;
  const descPerSec = descRetired === null ? null : perSec(descRetired, dtMs);
  const txPerSec = prev?.sw && cur.sw ? perSec((cur.sw.txHead - prev.sw.txHead) & 0xffff, dtMs) : null;
  const rates = { descPerSec, txPerSec, orphanedWork };

  const halt = haltReason(cur);
  if (halt && !track.wasHalted && prev) track.halts += 1;
  if (!halt && track.wasHalted) track.recoveries += 1;
  track.wasHalted = halt !== null;
  track.haltSinceMs = halt ? (track.haltSinceMs ?? now) : null;
  if (halt && track.haltSinceMs !== null && now - track.haltSinceMs >= opts.recoveryMs) {
    track.suspect = false;
    track.lastMoveMs = now;
    track.lastMoveObserved = true;
    return finish(track, core(base, rates, { verdict: 'halted', reason: halt }));
  }

  const moved = prev ? headMoved(prev, cur) : false;
  if (prev?.csr && cur.csr && prev.csr.headDma !== cur.csr.headDma) track.lastHeadDmaMoveMs = now;
  if (track.lastHeadDmaMoveMs === null) track.lastHeadDmaMoveMs = now;

  if (base.inFlight === null) {
    // Only interrupt counts: a changing seq shows interrupt passes, nothing more. An unchanged one is
    // an idle engine or one that stopped with work in flight (no fetch, no interrupt): not known.
    const active = prev !== null && prev.seq !== null && cur.seq !== null && prev.seq !== cur.seq;
    track.lastMoveMs = now;
    if (!prev) return finish(track, core(base, rates, { verdict: 'unknown', reason: 'warming-up' }));
    return finish(track, core(base, rates, { verdict: active ? 'progressing' : 'unknown', reason: 'no-ring-state' }));
  }

  if (base.inFlight === 0 || moved || track.lastMoveMs === null) {
    track.lastMoveMs = now;
    track.lastMoveObserved = base.inFlight === 0 || moved;
  }
  if (moved || base.inFlight === 0) track.seenMove = true;
  if (halt) {
    track.suspect = false;
    return finish(track, core(base, rates, { verdict: 'unknown', reason: 'recovering' }));
  }
  if (base.inFlight === 0) {
    track.suspect = false;
    return finish(track, core(base, rates, { verdict: 'idle', reason: 'empty' }));
  }

  const stuckMs = now - track.lastMoveMs;
  const candidate = !moved && isRunning(cur) && stuckMs >= opts.stallMs;
  if (candidate && prev && track.suspect) {
    if (!track.stalled) track.stallCount += 1;
    track.stalled = true;
    track.stallMaxMs = Math.max(track.stallMaxMs, stuckMs);
    return finish(
      track,
      core(base, rates, { verdict: 'stalled', reason: stallReason(prev, cur, opts.descqCnt) }),
      track.lastMoveMs,
    );
  }
  track.suspect = candidate;
  if (candidate) return finish(track, core(base, rates, { verdict: 'unknown', reason: 'stall-suspected' }));
  if (!moved && !track.seenMove) return finish(track, core(base, rates, { verdict: 'unknown', reason: 'warming-up' }));

  const fullRising = prev?.sw && cur.sw && cur.sw.descqFullCount !== prev.sw.descqFullCount;
  if (moved && fullRising) return finish(track, core(base, rates, { verdict: 'backpressure', reason: 'ring-full' }));
  let reason: ReasonOf<'progressing'> = moved ? 'moving' : 'waiting';
  if (moved && cur.csr?.headDma !== null && now - (track.lastHeadDmaMoveMs ?? now) >= opts.stallMs) reason = 'writeback-stalled';
  return finish(track, core(base, rates, { verdict: 'progressing', reason }));
}

/**
 * A verdict with the figures behind it, in this order. Object.assign rather than an object literal with spreads:
 * V8 (Node 20) adds each property written after an object spread through its runtime, about a microsecond each and
 * a fresh hidden class each time, and a verdict is made for every engine of every round.
 */
function core(
  base: Pick<Core, 'errors' | 'inFlight'>,
  rates: Pick<Core, 'descPerSec' | 'txPerSec' | 'orphanedWork'>,
  vr: VerdictReason,
): Core {
  return Object.assign({}, base, rates, vr);
}

/** The verdict with the track's history (Object.assign, as core() and for the same reason). */
function finish(track: EngineTrack, c: Core, stuckSinceMs: number | null = null): Classification {
  if (c.verdict !== 'stalled') track.stalled = false;
  const errCount = track.prev?.counters && !track.prev.gone ? track.prev.counters.errCount : null;
  const rise = errCount === null || track.errCountFirst === null ? 0n : errCount - track.errCountFirst;
  return Object.assign({}, c, {
    stallCount: track.stallCount,
    stallMaxMs: track.stallMaxMs,
    stuckSinceMs,
    stuckAtLeast: stuckSinceMs !== null && !track.lastMoveObserved,
    halts: track.halts,
    recoveries: track.recoveries,
    errCount: errCount === null ? null : Number(errCount),
    // A counter that went backwards was reset (a driver reload): count what it shows since.
    errCountRise: Number(rise < 0n ? errCount : rise),
    lastErrors: track.lastErrors,
  });
}
