// One sample of the stranded-waiter rule, before persistence: how each engine looks (running,
// empty, quiet since the previous sample) and what verdict each waiter would get if that held.
// Pure; strand.ts adds the persistence over samples.

import type { EngineSample, Waiter } from '../backend.js';
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

function emptyOf(s: EngineSample): boolean | null {
  if (s.gone) return null;
  if (s.sw) {
    return s.sw.descqHead === s.sw.descqTail && s.sw.swHead === s.sw.swTail && s.sw.txHead === s.sw.txTail;
  }
  if (s.csr) return s.csr.hwHead === s.csr.hwTail;
  return null;
}

/** Each engine of one sample as the rule sees it; `quietKeys` holds each engine's key of the previous sample. */
export function viewEngines(quietKeys: Map<number, string>, engines: readonly EngineSample[]): Map<number, EngineView> {
  const views = new Map<number, EngineView>();
  for (const s of engines) {
    const key = quietKey(s);
    const prev = quietKeys.get(s.engine);
    quietKeys.set(s.engine, key);
    views.set(s.engine, {
      running: !s.gone && s.state === 's99_Running',
      empty: emptyOf(s),
      quiet: prev === key,
      vl: s.vl,
    });
  }
  return views;
}

const idleQuiet = (v: EngineView | undefined) => v?.running === true && v.empty === true;

/** A verdict the waiter would get if it held long enough, and what must stay quiet meanwhile. */
export interface Candidate {
  verdict: WaiterVerdict;
  reason: WaiterReason;
  probable: boolean;
  /** The engine(s) that must stay quiet for the candidate to keep holding. */
  quietNeeded: number[];
}

/** What one waiter would be, judged on this sample alone (before persistence). */
export function candidateOf(w: Waiter, views: ReadonlyMap<number, EngineView>): Candidate {
  const plain = (verdict: WaiterVerdict, reason: WaiterReason): Candidate => ({
    verdict,
    reason,
    probable: false,
    quietNeeded: [],
  });
  if (w.kind === 'psm') {
    // A PSM writer's engine is rarely known (sdma_select_user_engine is not exposed): judge the unit.
    const all = [...views.entries()].filter(([, v]) => v.running);
    const scope = w.engine !== null && views.has(w.engine) ? [[w.engine, views.get(w.engine) as EngineView] as const] : all;
    if (scope.length === 0)
      return plain(w.engine === null ? 'unknown' : 'orphaned', w.engine === null ? 'engine-unknown' : 'engine-not-running');
    if (scope.some(([, v]) => v.empty === null)) return plain('unknown', 'no-ring-state');
    if (!scope.every(([, v]) => idleQuiet(v))) return plain('waiting', w.engine === null ? 'unit-busy' : 'engine-busy');
    return { verdict: 'psm-stall', reason: 'lost-wakeup', probable: w.engine === null, quietNeeded: scope.map(([e]) => e) };
  }
  if (w.waitsFor !== 'dma-desc') return plain('waiting', 'other-list');
  if (w.onList === false) return plain('waiting', 'off-list');
  if (w.engine === null) return plain('unknown', 'engine-unknown');
  const v = views.get(w.engine);
  if (!v) return plain('unknown', 'engine-unknown');
  if (!v.running) return plain('orphaned', 'engine-not-running');
  if (w.kind === 'qp' && w.qpState !== null && !SENDING_STATES.has(w.qpState)) {
    return w.qpState === 'ERR' ? plain('error-state', 'qp-error') : plain('waiting', 'other-list');
  }
  if (w.ownPending !== null && w.ownPending > 0) return plain('waiting', 'own-pending');
  if (v.empty === null) return plain('unknown', 'no-ring-state');
  if (!v.empty) return plain('waiting', 'engine-busy');
  // qp_stats prints an engine recomputed at print time: the QP may sleep on another engine of its VL.
  let probable = false;
  if (w.source === 'qp_stats') {
    const siblings = [...views.entries()].filter(([e, o]) => e !== w.engine && v.vl !== null && o.vl === v.vl);
    probable = v.vl === null || siblings.some(([, o]) => !idleQuiet(o));
  }
  return { verdict: 'stranded', reason: 'lost-wakeup', probable, quietNeeded: [w.engine] };
}
