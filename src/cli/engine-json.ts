// EngineJson (docs/json.md): the stable JSON shape of one engine sample.
import type { EngineSample } from '../backend.js';
import type { Classification } from '../progress/classify.js';
import { decodeEngErr, type EngErrBit } from '../progress/csr.js';
import { freeCount, inFlight } from '../progress/ring.js';
import { hexJson } from './format.js';

/** One engine as `engines --json` prints it. Unknown values are null. */
export interface EngineJson {
  /** The unit's name (`hfi1_0`): numbers repeat across modules (hfi1_0 and hfi2_0). */
  unit: string;
  engine: number;
  cpu: number | null;
  state: string | null;
  running: boolean | null;
  seq: number | null;
  seqSource: string;
  csr: Record<string, string | null> | null;
  swTail: number | null;
  swHead: number | null;
  descqTail: number | null;
  descqHead: number | null;
  txTail: number | null;
  txHead: number | null;
  lastStatus: string | null;
  ahgBits: string | null;
  flushListNonEmpty: boolean | null;
  descqFullCount: number | null;
  inFlight: number | null;
  free: number | null;
  errors: EngErrBit[];
  counters?: { descFetched: number; sdmaInt: number; idleInt: number; progressInt: number; errCount: number };
  vl: number | null;
  cpuList: string | null;
  gone: boolean;
  sources: string[];
  timeMs: number;
}

/** Convert a sample of unit `info` to EngineJson. A gone engine has no state, is not running and has no CSRs. */
export function engineJson(s: EngineSample, info: { name: string; descqCnt: number }): EngineJson {
  const descqCnt = info.descqCnt;
  const c = s.gone ? null : s.csr;
  const w = s.sw;
  const j: EngineJson = {
    unit: info.name,
    engine: s.engine,
    cpu: s.cpu,
    state: s.gone ? null : s.state,
    running: s.gone ? false : s.state === null ? null : s.state === 's99_Running',
    seq: s.seq,
    seqSource: s.seqSource,
    csr: c
      ? {
          ctrl: hexJson(c.ctrl),
          status: hexJson(c.status),
          errStatus: hexJson(c.errStatus),
          hwTail: hexJson(c.hwTail),
          hwHead: hexJson(c.hwHead),
          headDma: hexJson(c.headDma),
          memory: hexJson(c.memory),
          lenGen: hexJson(c.lenGen),
          reloadCnt: hexJson(c.reloadCnt),
          checkSlid: hexJson(c.checkSlid),
          descFetchedCnt: hexJson(c.descFetchedCnt),
        }
      : null,
    swTail: w?.swTail ?? null,
    swHead: w?.swHead ?? null,
    descqTail: w?.descqTail ?? null,
    descqHead: w?.descqHead ?? null,
    txTail: w?.txTail ?? null,
    txHead: w?.txHead ?? null,
    lastStatus: hexJson(w?.lastStatus),
    ahgBits: hexJson(w?.ahgBits),
    flushListNonEmpty: w?.flushListNonEmpty ?? null,
    descqFullCount: w?.descqFullCount ?? null,
    inFlight: w ? inFlight(w.descqHead, w.descqTail) : null,
    free: w ? freeCount(descqCnt, w.descqHead, w.descqTail) : null,
    errors: c && !s.gone ? decodeEngErr(c.errStatus) : [],
    vl: s.vl,
    cpuList: s.cpuList,
    gone: s.gone,
    sources: [...s.sources],
    timeMs: s.timeMs,
  };
  if (s.counters) {
    j.counters = {
      descFetched: Number(s.counters.descFetched),
      sdmaInt: Number(s.counters.sdmaInt),
      idleInt: Number(s.counters.idleInt),
      progressInt: Number(s.counters.progressInt),
      errCount: Number(s.counters.errCount),
    };
  }
  return j;
}

/** The classifier's verdict of an engine, as engines, show and watch print it (times are the backend's ms). */
export function verdictJson(s: EngineSample, c: Classification) {
  return {
    verdict: c.verdict,
    reason: c.reason,
    descPerSec: c.descPerSec === null ? null : Math.round(c.descPerSec),
    txPerSec: c.txPerSec === null ? null : Math.round(c.txPerSec),
    stallCount: c.stallCount,
    stallMaxMs: c.stallMaxMs,
    stuckSinceMs: c.stuckSinceMs,
    /** How long the head has not moved, and whether that is a lower bound (it stood still since the first sample). */
    stuckMs: c.stuckSinceMs === null ? null : Math.max(0, s.timeMs - c.stuckSinceMs),
    stuckAtLeast: c.stuckAtLeast,
    orphanedWork: c.orphanedWork,
  };
}

/** What the observation saw of an engine's errors over time (fields added to EngineJson by engines and watch). */
export interface ErrorHistoryJson {
  /** Engine-error interrupts since driver load (SDMAErrCt); null when the counters are unread. */
  errCount: number | null;
  /** How much errCount rose while observed. */
  errCountRise: number;
  /** Entries into a halt condition, and returns from one, seen between samples. */
  halts: number;
  recoveries: number;
  /** The error bits of the last sample that showed any. */
  lastErrors: readonly EngErrBit[];
}

/** The error history of one classified engine. */
export function errorHistoryJson(c: Classification): ErrorHistoryJson {
  return {
    errCount: c.errCount,
    errCountRise: c.errCountRise,
    halts: c.halts,
    recoveries: c.recoveries,
    lastErrors: c.lastErrors,
  };
}
