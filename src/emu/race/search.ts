// The exhaustive search: depth-first over every interleaving up to a depth bound, states hashed
// so that a state is expanded again only when reached in fewer steps, with two reductions that
// keep every reachable state class:
// - symmetry: states that differ only by a permutation of the submitters share one canonical key
//   (canon.ts); counts stay those of the unreduced state space by adding each key's orbit size;
// - sleep sets (partial-order reduction): after a step t has been explored from a state, the
//   later siblings' subtrees need not take t again while only steps independent of t
//   (footprint.ts) run. Sleep sets alone never lose a reachable state, but combined with a visited
//   set they can; as in Godefroid's state-space caching, each state keeps the sleep set it was
//   explored with, and a later visit with a smaller one explores the steps it had left asleep.
// A woken submitter's step that finds no room (a wasted wake-up) is a property of a step, not a
// state: a state's asleep steps are checked for it without being explored.
import { Canonizer } from './canon.js';
import { type Footprint, footprint, independent } from './footprint.js';
import { capture, restore, type StateVec } from './state.js';
import { StateTable } from './state-table.js';
import { actorCount, isEnabled, KIND_BIT, lostKinds, runStep, STEP_WASTED } from './steps.js';
import { Pc, SENDER_KINDS, type SenderKind, type World } from './world.js';

/** What the search reduces: nothing, symmetric submitters, independent steps, or both. */
export const REDUCTIONS = ['none', 'symmetry', 'por', 'all'] as const;
export type Reduction = (typeof REDUCTIONS)[number];

/** What the exhaustive search found. Counts of states are of the unreduced state space. */
export interface SearchFound {
  /** Schedules explored: maximal paths (ended, cut at the bound, or reaching a state already explored). */
  schedules: number;
  /** Of those, cut at the bound with steps still enabled. */
  cut: number;
  /** Distinct states (of the unreduced space: each canonical state counts its orbit). */
  states: number;
  /** Distinct states the search itself stored (canonical ones under symmetry). */
  statesExplored: number;
  /** Steps taken. */
  steps: number;
  /** Steps of the unreduced state graph: Σ over its states of the steps enabled there. */
  graphSteps: number;
  /** Steps left unexplored because they were in a sleep set. */
  sleptSteps: number;
  /** Distinct states holding a lost wake-up. */
  lostWakeups: number;
  /** Of those, the states with a QP / a PSM / an IPoIB sender left asleep (a state can count for several). */
  lostByKind: Record<SenderKind, number>;
  /**
   * Of the lost wake-up states, those where no actor has a step left: every other sender has placed its request or
   * sleeps, so nothing will ever wake the one left asleep (SPIN's invalid end state).
   */
  lostForGood: number;
  /** The shortest schedule reaching a lost wake-up for good, or null. */
  forGoodSchedule: number[] | null;
  /** Distinct states reached by a step in which a woken submitter found no room. */
  wastedWakeups: number;
  maxDepth: number;
  /** The shortest schedule (actor per step) reaching a lost wake-up, or null. */
  lostSchedule: number[] | null;
  /** With keepAll: one schedule per lost wake-up state (per canonical state under symmetry). */
  lostSchedules: number[][];
}

/** Depth and sleep set (over canonical actor positions) a state was explored with, packed. */
const SLEEP_BITS = 8;
/** The probe runs every 2^14 steps. */
const PROBE_MASK = (1 << 14) - 1;

/** Explore every schedule of `w` from its current state to `bound` steps. */
export function exhaustive(w: World, bound: number, reduce: Reduction, keepAll: boolean, probe?: () => void): SearchFound {
  const symmetric = reduce === 'symmetry' || reduce === 'all';
  const por = reduce === 'por' || reduce === 'all';
  const canon = new Canonizer(w, symmetric);
  const n = w.subs.length;
  const actors = actorCount(w);
  const seen = new StateTable();
  const key = canon.key;
  const lost = new Map<string, number>();
  const wasted = new Map<string, number>();
  const path: number[] = [];
  const out: SearchFound = {
    schedules: 0,
    cut: 0,
    states: 0,
    statesExplored: 0,
    steps: 0,
    graphSteps: 0,
    sleptSteps: 0,
    lostWakeups: 0,
    lostByKind: { qp: 0, psm: 0, ipoib: 0 },
    lostForGood: 0,
    forGoodSchedule: null,
    wastedWakeups: 0,
    maxDepth: 0,
    lostSchedule: null,
    lostSchedules: [],
  };
  const end = (depth: number, cut: boolean): void => {
    out.schedules++;
    if (cut) out.cut++;
    if (depth > out.maxDepth) out.maxDepth = depth;
  };
  // Sleep masks between a world's actor indices and canonical positions (chip and irq keep theirs).
  const toCanon = (mask: number, place: number[]): number => {
    let m = mask & ~((1 << n) - 1);
    for (let i = 0; i < n; i++) if (mask & (1 << i)) m |= 1 << (place[i] as number);
    return m;
  };
  const fromCanon = (mask: number, place: number[]): number => {
    let m = mask & ~((1 << n) - 1);
    for (let i = 0; i < n; i++) if (mask & (1 << (place[i] as number))) m |= 1 << i;
    return m;
  };
  const enabledMask = (): number => {
    let m = 0;
    for (let a = 0; a < actors; a++) if (isEnabled(w, a)) m |= 1 << a;
    return m;
  };
  const markWasted = (key: string, orbit: number): void => {
    if (!wasted.has(key)) wasted.set(key, orbit);
  };
  /** Visit the world's state, reached by `path`; `flags` of the step that led here; `sleep` over actor indices. */
  const visit = (depth: number, sleep: number, flags: number): void => {
    canon.canonical(w);
    const { orbit, place } = canon;
    if (flags & STEP_WASTED) markWasted(key.toString(), orbit);
    const kinds = lostKinds(w);
    const enabled = enabledMask();
    if (kinds !== 0) {
      const k = key.toString();
      if (!lost.has(k)) {
        lost.set(k, orbit);
        for (const kind of SENDER_KINDS) if (kinds & KIND_BIT[kind]) out.lostByKind[kind] += orbit;
        if (enabled === 0) out.lostForGood += orbit;
        if (keepAll) out.lostSchedules.push(path.slice());
      }
      if (out.lostSchedule === null || path.length < out.lostSchedule.length) out.lostSchedule = path.slice();
      if (enabled === 0 && (out.forGoodSchedule === null || path.length < out.forGoodSchedule.length))
        out.forGoodSchedule = path.slice();
    }
    const id = seen.find(key);
    let todo: number;
    let asleep = 0;
    if (id < 0) {
      seen.add(key, depth * (1 << SLEEP_BITS) + toCanon(sleep, place));
      out.states += orbit;
      out.graphSteps += orbit * popcount(enabled);
      todo = enabled & ~sleep;
      asleep = sleep & enabled;
    } else {
      const entry = seen.get(id);
      const seenDepth = Math.floor(entry / (1 << SLEEP_BITS));
      const seenSleep = fromCanon(entry % (1 << SLEEP_BITS), place);
      if (depth < seenDepth) todo = enabled & ~sleep;
      else {
        todo = enabled & seenSleep & ~sleep;
        sleep &= seenSleep;
      }
      if (todo === 0) {
        end(depth, false);
        return;
      }
      seen.set(id, Math.min(depth, seenDepth) * (1 << SLEEP_BITS) + toCanon(sleep & seenSleep, place));
    }
    if (enabled === 0 || depth >= bound) {
      end(depth, enabled !== 0);
      return;
    }
    const v = capture(w);
    if (asleep !== 0) checkAsleep(v, asleep);
    if (todo === 0) {
      end(depth, false);
      return;
    }
    const prints: (Footprint | null)[] = [];
    if (por) for (let a = 0; a < actors; a++) prints.push(enabled & (1 << a) ? footprint(w, a) : null);
    let first = true;
    for (let a = 0; a < actors; a++) {
      if (!(todo & (1 << a))) continue;
      if (!first) restore(w, v);
      first = false;
      const f = runStep(w, a, null);
      if ((++out.steps & PROBE_MASK) === 0) probe?.();
      let childSleep = 0;
      if (por) {
        const fa = prints[a];
        for (let u = 0; u < actors; u++) {
          const fu = prints[u];
          if (sleep & (1 << u) && fa && fu && independent(fa, fu)) childSleep |= 1 << u;
        }
        sleep |= 1 << a;
      }
      path.push(a);
      visit(depth + 1, childSleep, f);
      path.pop();
    }
  };
  /** Steps left asleep are not explored, but one that wastes a wake-up still marks the state it leads to. */
  const checkAsleep = (v: StateVec, asleep: number): void => {
    for (let a = 0; a < n; a++) {
      if (!(asleep & (1 << a))) continue;
      const s = w.subs[a];
      if (!s || s.pc !== Pc.check || s.afterWake !== 1 || s.tx.numDesc <= w.e.freecnt()) continue;
      runStep(w, a, null);
      canon.canonical(w);
      markWasted(key.toString(), canon.orbit);
      restore(w, v);
    }
    out.sleptSteps += popcount(asleep);
  };
  visit(0, 0, 0);
  out.statesExplored = seen.size;
  for (const o of lost.values()) out.lostWakeups += o;
  for (const o of wasted.values()) out.wastedWakeups += o;
  return out;
}

function popcount(m: number): number {
  let c = 0;
  for (let x = m; x !== 0; x &= x - 1) c++;
  return c;
}
