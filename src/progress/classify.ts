// The stall classifier: from successive samples of one engine, a verdict and a reason. Pure: it
// keeps its memory in a state object the caller holds, and takes time from the samples.
//
// Verdicts (DESIGN.md watch --json): idle | progressing | stalled | halted | backpressure | gone.
// A stall is reported only once a second sample confirms it (two-stage, as mlx5's TX timeout
// does), and per-engine counters in the manner of BQL: stallCount, stallMaxMs, stuckSinceMs.

import type { EngineSample } from '../backend.js';
import { decodeEngErr, type EngErrBit, isEngHalted, isHaltClassError } from './csr.js';
import { inFlight } from './ring.js';
import { isOperational } from './state.js';

export type Verdict = 'idle' | 'progressing' | 'stalled' | 'halted' | 'backpressure' | 'gone';

/** Why: for stalled, one of the three stall reasons; for others, a short tag. */
export type Reason =
  | 'chip-not-fetching' // H(HW) and the fetched counter frozen while T(HW) ≠ H(HW)
  | 'retirement-lost' // the chip is ahead of the software head: a lost interrupt or a stuck handler
  | 'writeback-stalled' // H(D) frozen while H(HW) moves (informational: the driver reads HEAD, §b.10)
  | 'no-head-movement' // stalled without a more specific cause
  | 'ring-full' // backpressure: descq_full_count rising
  | 'state' // halted: a non-operational state outlasted the recovery window
  | 'status-halted' // halted: SEND_DMA_STATUS bit 56
  | 'error-bits' // halted: a halt-class ENG_ERR bit (§f.4)
  | 'recovering' // a halt or clean-up in progress, still within the recovery window
  | 'waiting' // in flight, no movement this interval, not yet stalled
  | 'moving'
  | 'empty'
  | 'registers-all-ones'
  | 'no-ring-state'; // only interrupt counts are readable: in-flight work is unknown

/** Classifier settings. */
export interface ClassifyOptions {
  /** No head movement for this long while in flight is a stall (default 1000). */
  stallMs: number;
  /** A halt or non-running state shorter than this is a recovery, not a halt (default 2000). */
  recoveryMs: number;
  /** Ring size of the unit (for slot arithmetic on H(HW)). */
  descqCnt: number;
}

export const DEFAULT_CLASSIFY_OPTIONS: Omit<ClassifyOptions, 'descqCnt'> = { stallMs: 1000, recoveryMs: 2000 };

/** What the classifier remembers of one engine between samples. */
export interface EngineTrack {
  prev: EngineSample | null;
  /** When the head (software or hardware) last moved, or work first appeared. */
  lastMoveMs: number | null;
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
}

/** A fresh track. */
export function newTrack(): EngineTrack {
  return {
    prev: null,
    lastMoveMs: null,
    lastHeadDmaMoveMs: null,
    haltSinceMs: null,
    flushSinceMs: null,
    suspect: false,
    stalled: false,
    stallCount: 0,
    stallMaxMs: 0,
  };
}

/** The classifier's answer for one sample. */
export interface Classification {
  verdict: Verdict;
  reason: Reason;
  /** Descriptors retired per second since the previous sample (null on the first sample). */
  descPerSec: number | null;
  /** Txreqs completed per second since the previous sample. */
  txPerSec: number | null;
  inFlight: number | null;
  stallCount: number;
  stallMaxMs: number;
  /** When the current stall's head last moved; null when not stalled. */
  stuckSinceMs: number | null;
  /** Decoded error bits (halted and otherwise). */
  errors: EngErrBit[];
  /** The flush list stayed non-empty beyond the recovery window: txreqs nobody will complete. */
  orphanedWork: boolean;
}

function perSec(delta: number, dtMs: number): number | null {
  return dtMs > 0 ? (delta * 1000) / dtMs : null;
}

/** Descriptors retired between two samples: DH delta (u32), or the H(HW) slot delta after a reset. */
function retired(prev: EngineSample, cur: EngineSample, descqCnt: number): number | null {
  if (prev.sw && cur.sw) {
    const d = (cur.sw.descqHead - prev.sw.descqHead) >>> 0;
    // A clean-up resets DH to 0 (§b.12); a huge u32 delta means that happened.
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
  return s.csr !== null && (s.csr.ctrl & 0x1n) === 0x1n; // SDMA_ENABLE (§f.2)
}

function haltReason(s: EngineSample): Reason | null {
  if (s.csr && isEngHalted(s.csr.status)) return 'status-halted';
  if (s.csr && isHaltClassError(s.csr.errStatus)) return 'error-bits';
  if (s.state !== null && !isOperational(s.state)) return 'state';
  return null;
}

function stallReason(prev: EngineSample, cur: EngineSample, descqCnt: number): Reason {
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
  const prev = track.prev;
  const now = cur.timeMs;
  const dtMs = prev ? now - prev.timeMs : 0;
  const errors = cur.csr && !cur.gone ? decodeEngErr(cur.csr.errStatus) : [];
  const base = { errors, inFlight: inFlightOf(cur, opts.descqCnt) };
  track.prev = cur;

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
  track.haltSinceMs = halt ? (track.haltSinceMs ?? now) : null;
  if (halt && track.haltSinceMs !== null && now - track.haltSinceMs >= opts.recoveryMs) {
    track.suspect = false;
    track.lastMoveMs = now;
    return finish(track, { ...base, ...rates, verdict: 'halted', reason: halt });
  }

  const moved = prev ? headMoved(prev, cur) : false;
  if (prev?.csr && cur.csr && prev.csr.headDma !== cur.csr.headDma) track.lastHeadDmaMoveMs = now;
  if (track.lastHeadDmaMoveMs === null) track.lastHeadDmaMoveMs = now;

  if (base.inFlight === null) {
    // Only interrupt counts: a changing seq shows interrupt passes, nothing more.
    const active = prev !== null && prev.seq !== null && cur.seq !== null && prev.seq !== cur.seq;
    track.lastMoveMs = now;
    return finish(track, { ...base, ...rates, verdict: active ? 'progressing' : 'idle', reason: 'no-ring-state' });
  }

  if (base.inFlight === 0 || moved || track.lastMoveMs === null) track.lastMoveMs = now;
  if (base.inFlight === 0) {
    track.suspect = false;
    return finish(track, { ...base, ...rates, verdict: 'idle', reason: halt ? 'recovering' : 'empty' });
  }

  const stuckMs = now - track.lastMoveMs;
  const candidate = !moved && isRunning(cur) && stuckMs >= opts.stallMs;
  if (candidate && prev && track.suspect) {
    if (!track.stalled) track.stallCount += 1;
    track.stalled = true;
    track.stallMaxMs = Math.max(track.stallMaxMs, stuckMs);
    return finish(
      track,
      { ...base, ...rates, verdict: 'stalled', reason: stallReason(prev, cur, opts.descqCnt) },
      track.lastMoveMs,
    );
  }
  track.suspect = candidate;

  const fullRising = prev?.sw && cur.sw && cur.sw.descqFullCount !== prev.sw.descqFullCount;
  if (moved && fullRising) return finish(track, { ...base, ...rates, verdict: 'backpressure', reason: 'ring-full' });
  let reason: Reason = moved ? 'moving' : 'waiting';
  if (halt) reason = 'recovering';
  else if (moved && cur.csr?.headDma !== null && now - (track.lastHeadDmaMoveMs ?? now) >= opts.stallMs)
    reason = 'writeback-stalled';
  return finish(track, { ...base, ...rates, verdict: 'progressing', reason });
}

function finish(
  track: EngineTrack,
  c: Omit<Classification, 'stallCount' | 'stallMaxMs' | 'stuckSinceMs'>,
  stuckSinceMs: number | null = null,
): Classification {
  if (c.verdict !== 'stalled') track.stalled = false;
  return { ...c, stallCount: track.stallCount, stallMaxMs: track.stallMaxMs, stuckSinceMs };
}
