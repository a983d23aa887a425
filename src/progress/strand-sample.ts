// One sample of the stranded-waiter rule, before persistence: how each engine looks (running,
// empty, quiet since the previous sample) and what verdict each waiter would get if that held.
// Pure; strand.ts adds the persistence over samples.

import type { EngineSample, Waiter } from '../backend.js';
import { freeCount } from './ring.js';
import type { WaiterReason, WaiterVerdict } from './strand.js';

/** QP states in which a waiting sender can send again (enum ib_qp_state: RTR, RTS, SQD, SQE). */
const SENDING_STATES = new Set(['RTR', 'RTS', 'SQD', 'SQE']);

/** One engine as the rule sees it in one sample. */
export interface EngineView {
  running: boolean;
  /** Nothing in flight (free = descq_cnt − 1, tx ring empty); null when the ring is not readable. */
  empty: boolean | null;
  /** Unchanged since the previous sample (DH, DT, TXH, TXT, DQF, interrupt counters, seq). */
  quiet: boolean;
  vl: number | null;
  /** The device reads all-ones: its waiters are moot, and the device itself is the finding. */
  gone: boolean;
  /** Free descriptors (sdma_descq_freecnt) from DH/DT, or from H(HW)/T(HW) without sdes; null when unreadable. */
  free: number | null;
  /** descq_head (DH), free-running: what it retired; null without sdes. */
  descqHead: number | null;
}

function quietKey(s: EngineSample): string {
  const w = s.sw;
  const c = s.counters;
  const csr = s.csr;
  return [
    w?.descqHead,
    w?.descqTail,
    w?.txHead,
    w?.txTail,
    w?.descqFullCount,
    c?.sdmaInt,
    c?.idleInt,
    c?.progressInt,
    s.seq,
    csr?.hwHead,
    csr?.hwTail,
  ].join(',');
}

function freeOf(s: EngineSample, descqCnt: number): number | null {
  if (s.gone) return null;
  if (s.sw) return freeCount(descqCnt, s.sw.descqHead, s.sw.descqTail);
  if (s.csr) return descqCnt - 1 - Number((s.csr.hwTail - s.csr.hwHead) & BigInt(descqCnt - 1));
  return null;
}

function emptyOf(s: EngineSample): boolean | null {
  if (s.gone) return null;
  if (s.sw) {
    return s.sw.descqHead === s.sw.descqTail && s.sw.swHead === s.sw.swTail && s.sw.txHead === s.sw.txTail;
  }
  if (s.csr) return s.csr.hwHead === s.csr.hwTail;
  return null;
}

/** The engines of one unit in one sample, with what every waiter's judgement shares. */
export interface UnitView {
  engines: Map<number, EngineView>;
  /** Per VL, the engines serving it that are not running-and-empty. */
  notIdleByVl: Map<number, number>;
  /** The running engines. */
  running: number[];
  /** Per VL, every engine serving it (by sysfs sdma<N>/vl). */
  byVl: Map<number, number[]>;
}

const idle = (v: EngineView | undefined) => v?.running === true && v.empty === true;

/**
 * Each engine of one sample as the rule sees it; `quietKeys` holds each engine's key of the previous sample,
 * `descqCnt` is the unit's ring size.
 */
export function viewEngines(quietKeys: Map<number, string>, samples: readonly EngineSample[], descqCnt = 2048): UnitView {
  const engines = new Map<number, EngineView>();
  const notIdleByVl = new Map<number, number>();
  const byVl = new Map<number, number[]>();
  const running: number[] = [];
  for (const s of samples) {
    const key = quietKey(s);
    const prev = quietKeys.get(s.engine);
    quietKeys.set(s.engine, key);
    const v: EngineView = {
      running: !s.gone && s.state === 's99_Running',
      empty: emptyOf(s),
      quiet: prev === key,
      vl: s.vl,
      gone: s.gone,
      free: freeOf(s, descqCnt),
      descqHead: s.gone ? null : (s.sw?.descqHead ?? null),
    };
    engines.set(s.engine, v);
    if (v.running) running.push(s.engine);
    if (v.vl !== null) {
      const list = byVl.get(v.vl) ?? [];
      list.push(s.engine);
      byVl.set(v.vl, list);
      if (!idle(v)) notIdleByVl.set(v.vl, (notIdleByVl.get(v.vl) ?? 0) + 1);
    }
  }
  return { engines, notIdleByVl, running, byVl };
}

/** A verdict the waiter would get if it held long enough, and what must stay quiet meanwhile. */
export interface Candidate {
  verdict: WaiterVerdict;
  reason: WaiterReason;
  probable: boolean;
  /** The engine(s) that must stay quiet for the candidate to keep holding. */
  quietNeeded: number[];
  /**
   * For a QP or IPoIB queue stranded only probably because other engines of its VL were not idle: those engines.
   * Evidence gathered on them over the streak can make the verdict certain (strand.ts).
   */
  siblings: number[];
}

/** What one waiter would be, judged on this sample alone (before persistence). */
export function candidateOf(w: Waiter, unit: UnitView): Candidate {
  const views = unit.engines;
  const plain = (verdict: WaiterVerdict, reason: WaiterReason): Candidate => ({
    verdict,
    reason,
    probable: false,
    quietNeeded: [],
    siblings: [],
  });
  if (views.size > 0 && [...views.values()].every((v) => v.gone)) return plain('unknown', 'device-gone');
  if (w.kind === 'psm') {
    // A PSM writer's engine is rarely known (sdma_select_user_engine is not exposed): judge the unit.
    const known = w.engine !== null && views.has(w.engine);
    const scope = known ? [w.engine as number].filter((e) => views.get(e)?.running) : unit.running;
    if (scope.length === 0) return known ? plain('orphaned', 'engine-not-running') : plain('unknown', 'engine-unknown');
    if (scope.some((e) => views.get(e)?.empty === null)) return plain('unknown', 'no-ring-state');
    if (!scope.every((e) => idle(views.get(e)))) return plain('waiting', known ? 'engine-busy' : 'unit-busy');
    return { verdict: 'psm-stall', reason: 'lost-wakeup', probable: !known, quietNeeded: scope, siblings: [] };
  }
  if (w.waitsFor !== 'dma-desc') return plain('waiting', 'other-list');
  if (w.onList === false) return plain('waiting', 'off-list');
  if (w.engine === null) return plain('unknown', 'engine-unknown');
  const v = views.get(w.engine);
  if (!v) return plain('unknown', 'engine-unknown');
  if (v.gone) return plain('unknown', 'device-gone');
  if (!v.running) return plain('orphaned', 'engine-not-running');
  if (w.kind === 'qp' && w.qpState !== null && !SENDING_STATES.has(w.qpState)) {
    return w.qpState === 'ERR' ? plain('error-state', 'qp-error') : plain('waiting', 'other-list');
  }
  if (w.ownPending !== null && w.ownPending > 0) return plain('waiting', 'own-pending');
  if (v.empty === null) return plain('unknown', 'no-ring-state');
  if (!v.empty) return plain('waiting', 'engine-busy');
  // qp_stats prints an engine recomputed at print time (qp_to_sdma_engine): the QP may sleep on another engine of
  // its VL. v itself is running and empty, so every not-idle engine of its VL is a sibling that could hold it.
  const printed = w.source === 'qp_stats';
  const probable = printed && (v.vl === null || (unit.notIdleByVl.get(v.vl) ?? 0) > 0);
  const siblings = probable && v.vl !== null ? (unit.byVl.get(v.vl) ?? []).filter((e) => e !== w.engine) : [];
  return { verdict: 'stranded', reason: 'lost-wakeup', probable, quietNeeded: [w.engine], siblings };
}
