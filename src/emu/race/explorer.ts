// The explorer: every interleaving of the actors' steps up to a depth bound (depth-first, states
// hashed so that a state is expanded again only when reached in fewer steps), or seeded random
// schedules run to completion. Deterministic: actors are tried in index order, the generator is
// the emulator's sfc32.
import { Sfc32 } from '../prng.js';
import { capture, restore, type StateVec, stateKey } from './state.js';
import { actorCount, isEnabled, lostWaiter, runStep, STEP_WASTED } from './steps.js';
import type { Variant } from './variants.js';
import { buildWorld, type World } from './world.js';

/** Depth bound (steps) of the exhaustive search: every schedule of up to 3 submitters ends within it. */
export const DEFAULT_BOUND = 80;
/** Steps after which a random schedule is abandoned (the step graph is finite and acyclic). */
const RANDOM_STEP_CAP = 10_000;

/** What to explore. `schedules` set: seeded random sampling instead of the exhaustive search. */
export interface RaceOptions {
  variant: Variant;
  submitters: number;
  bound: number;
  seed: number;
  schedules?: number;
  /** Keep a schedule for every lost wake-up state (the first path found to it). */
  keepAll?: boolean;
}

/** What was found. Counts of lost and wasted wake-ups are of distinct states. */
export interface RaceResult {
  variant: Variant;
  submitters: number;
  bound: number;
  seed: number;
  mode: 'exhaustive' | 'random';
  /** Schedules explored: maximal paths (ended, cut at the bound, or reaching a state already explored). */
  schedules: number;
  /** Of those, cut at the bound with steps still enabled. */
  cut: number;
  /** Distinct states. */
  states: number;
  /** Distinct states holding a lost wake-up. */
  lostWakeups: number;
  /** Distinct states reached by a step in which a woken submitter found no room. */
  wastedWakeups: number;
  /** Longest schedule taken. */
  maxDepth: number;
  /** The shortest schedule (actor per step) reaching a lost wake-up, or null. */
  lostSchedule: number[] | null;
  /** With keepAll: one schedule per lost wake-up state. */
  lostSchedules: number[][];
}

/** Explore one variant; see RaceOptions. */
export function explore(opts: RaceOptions): RaceResult {
  const w = buildWorld(opts.variant, opts.submitters);
  const t = new Tally(opts.keepAll === true);
  const run = opts.schedules === undefined ? exhaustive(w, t, opts.bound) : sample(w, t, opts.schedules, opts.seed);
  return {
    variant: opts.variant,
    submitters: opts.submitters,
    bound: opts.bound,
    seed: opts.seed,
    mode: opts.schedules === undefined ? 'exhaustive' : 'random',
    ...run,
  };
}

type Found = Omit<RaceResult, 'variant' | 'submitters' | 'bound' | 'seed' | 'mode'>;

class Tally {
  schedules = 0;
  cut = 0;
  maxDepth = 0;
  readonly lost = new Set<string>();
  readonly wasted = new Set<string>();
  best: number[] | null = null;
  readonly all: number[][] = [];

  constructor(private readonly keepAll: boolean) {}

  /** Record what a step led to: a wasted wake-up, a lost wake-up (keeping the shortest path). */
  note(w: World, key: string, flags: number, path: readonly number[]): void {
    if (flags & STEP_WASTED) this.wasted.add(key);
    if (lostWaiter(w) !== null) {
      if (this.keepAll && !this.lost.has(key)) this.all.push(path.slice());
      this.lost.add(key);
      if (this.best === null || path.length < this.best.length) this.best = path.slice();
    }
  }

  end(depth: number, cut: boolean): void {
    this.schedules++;
    if (cut) this.cut++;
    if (depth > this.maxDepth) this.maxDepth = depth;
  }

  found(states: number): Found {
    return {
      schedules: this.schedules,
      cut: this.cut,
      states,
      lostWakeups: this.lost.size,
      wastedWakeups: this.wasted.size,
      maxDepth: this.maxDepth,
      lostSchedule: this.best,
      lostSchedules: this.all,
    };
  }
}

function enabledActors(w: World): number[] {
  const out: number[] = [];
  const n = actorCount(w);
  for (let a = 0; a < n; a++) if (isEnabled(w, a)) out.push(a);
  return out;
}

function exhaustive(w: World, t: Tally, bound: number): Found {
  const seen = new Map<string, number>();
  const path: number[] = [];
  const root = capture(w);
  seen.set(stateKey(root), 0);
  t.note(w, stateKey(root), 0, path);
  const visit = (v: StateVec, depth: number): void => {
    restore(w, v);
    const actors = enabledActors(w);
    if (actors.length === 0 || depth >= bound) {
      t.end(depth, actors.length > 0);
      return;
    }
    for (const a of actors) {
      restore(w, v);
      const flags = runStep(w, a, null);
      const child = capture(w);
      const key = stateKey(child);
      path.push(a);
      t.note(w, key, flags, path);
      const at = seen.get(key);
      if (at !== undefined && at <= depth + 1) t.end(depth + 1, false);
      else {
        seen.set(key, depth + 1);
        visit(child, depth + 1);
      }
      path.pop();
    }
  };
  visit(root, 0);
  return t.found(seen.size);
}

function sample(w: World, t: Tally, schedules: number, seed: number): Found {
  const seen = new Set<string>();
  const rng = new Sfc32(seed);
  const root = capture(w);
  seen.add(stateKey(root));
  t.note(w, stateKey(root), 0, []);
  const path: number[] = [];
  for (let i = 0; i < schedules; i++) {
    restore(w, root);
    path.length = 0;
    for (;;) {
      const actors = enabledActors(w);
      if (actors.length === 0 || path.length >= RANDOM_STEP_CAP) break;
      const a = actors[rng.int(0, actors.length - 1)] as number;
      const flags = runStep(w, a, null);
      path.push(a);
      const key = stateKey(capture(w));
      seen.add(key);
      t.note(w, key, flags, path);
    }
    t.end(path.length, path.length >= RANDOM_STEP_CAP);
  }
  return t.found(seen.size);
}
