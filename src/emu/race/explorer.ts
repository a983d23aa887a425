// The explorer: every interleaving of the actors' steps up to a depth bound (search.ts), or
// seeded random schedules run to completion. Deterministic: actors are tried in index order, the
// generator is the emulator's sfc32.
import { Sfc32 } from '../prng.js';
import { exhaustive, type Reduction, type SearchFound } from './search.js';
import { capture, restore, stateKey } from './state.js';
import { actorCount, isEnabled, KIND_BIT, lostKinds, runStep, STEP_WASTED } from './steps.js';
import type { Variant } from './variants.js';
import { buildWorld, SENDER_KINDS, type SenderKind, type World } from './world.js';

/** Depth bound (steps) of the exhaustive search: every schedule of up to 3 submitters ends within it. */
export const DEFAULT_BOUND = 80;
/** Most submitters the explorer takes: the exhaustive search with 4 needs minutes and gigabytes. */
export const MAX_SUBMITTERS = 4;

/** The default depth bound for `submitters`: every schedule ends within it (4 submitters: 106 steps at most). */
export function defaultBound(submitters: number): number {
  return submitters <= 3 ? DEFAULT_BOUND : 40 * submitters;
}

/** Steps after which a random schedule is abandoned (the step graph is finite and acyclic). */
const RANDOM_STEP_CAP = 10_000;

/** What to explore. `schedules` set: seeded random sampling instead of the exhaustive search. */
export interface RaceOptions {
  variant: Variant;
  submitters: number;
  /** The senders' kinds in actor order (length `submitters`); default every one a PSM queue. */
  senders?: readonly SenderKind[];
  bound: number;
  seed: number;
  schedules?: number;
  /** What the exhaustive search reduces (default all). */
  reduce?: Reduction;
  /** Keep a schedule for every lost wake-up state (the first path found to it). */
  keepAll?: boolean;
  /** Called every few thousand steps of the exhaustive search (e.g. to sample memory). */
  probe?: () => void;
}

/**
 * What was found. Counts of states, lost and wasted wake-ups are of distinct states of the
 * unreduced state space whatever the reduction; `statesExplored`, `steps` and `sleptSteps` say
 * what the search itself did (for random sampling: the states seen, the steps taken, 0).
 */
export interface RaceResult extends SearchFound {
  variant: Variant;
  submitters: number;
  senders: SenderKind[];
  bound: number;
  seed: number;
  mode: 'exhaustive' | 'random';
  reduce: Reduction;
}

/** Explore one variant; see RaceOptions. */
export function explore(opts: RaceOptions): RaceResult {
  const senders = opts.senders ? [...opts.senders] : Array.from({ length: opts.submitters }, () => 'psm' as const);
  if (senders.length !== opts.submitters)
    throw new Error(`race: ${senders.length} sender kinds for ${opts.submitters} submitters`);
  const w = buildWorld(opts.variant, senders);
  const random = opts.schedules !== undefined;
  const reduce = random ? 'none' : (opts.reduce ?? 'all'); // random sampling reduces nothing
  const run =
    opts.schedules === undefined
      ? exhaustive(w, opts.bound, reduce, opts.keepAll === true, opts.probe)
      : sample(w, new Tally(opts.keepAll === true), opts.schedules, opts.seed);
  return {
    variant: opts.variant,
    submitters: opts.submitters,
    senders,
    bound: opts.bound,
    seed: opts.seed,
    mode: random ? 'random' : 'exhaustive',
    reduce,
    ...run,
  };
}

class Tally {
  schedules = 0;
  cut = 0;
  maxDepth = 0;
  readonly lost = new Set<string>();
  readonly lostByKind: Record<SenderKind, number> = { qp: 0, psm: 0, ipoib: 0 };
  readonly wasted = new Set<string>();
  readonly forGood = new Set<string>();
  best: number[] | null = null;
  bestForGood: number[] | null = null;
  readonly all: number[][] = [];

  constructor(private readonly keepAll: boolean) {}

  /** Record what a step led to: a wasted wake-up, a lost wake-up (keeping the shortest path). */
  note(w: World, key: string, flags: number, path: readonly number[]): void {
    if (flags & STEP_WASTED) this.wasted.add(key);
    const kinds = lostKinds(w);
    if (kinds !== 0) {
      if (!this.lost.has(key)) {
        if (this.keepAll) this.all.push(path.slice());
        for (const kind of SENDER_KINDS) if (kinds & KIND_BIT[kind]) this.lostByKind[kind]++;
      }
      this.lost.add(key);
      if (this.best === null || path.length < this.best.length) this.best = path.slice();
      if (enabledActors(w).length === 0) {
        this.forGood.add(key);
        if (this.bestForGood === null || path.length < this.bestForGood.length) this.bestForGood = path.slice();
      }
    }
  }

  end(depth: number, cut: boolean): void {
    this.schedules++;
    if (cut) this.cut++;
    if (depth > this.maxDepth) this.maxDepth = depth;
  }

  found(states: number, steps: number): SearchFound {
    return {
      schedules: this.schedules,
      cut: this.cut,
      states,
      statesExplored: states,
      steps,
      graphSteps: 0,
      sleptSteps: 0,
      lostWakeups: this.lost.size,
      lostByKind: { ...this.lostByKind },
      lostForGood: this.forGood.size,
      forGoodSchedule: this.bestForGood,
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

function sample(w: World, t: Tally, schedules: number, seed: number): SearchFound {
  const seen = new Set<string>();
  const rng = new Sfc32(seed);
  const root = capture(w);
  seen.add(stateKey(root));
  t.note(w, stateKey(root), 0, []);
  const path: number[] = [];
  let steps = 0;
  for (let i = 0; i < schedules; i++) {
    restore(w, root);
    path.length = 0;
    for (;;) {
      const actors = enabledActors(w);
      if (actors.length === 0 || path.length >= RANDOM_STEP_CAP) break;
      const a = actors[rng.int(0, actors.length - 1)] as number;
      const flags = runStep(w, a, null);
      path.push(a);
      steps++;
      const key = stateKey(capture(w));
      seen.add(key);
      t.note(w, key, flags, path);
    }
    t.end(path.length, path.length >= RANDOM_STEP_CAP);
  }
  return t.found(seen.size, steps);
}
