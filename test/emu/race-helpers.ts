// Helpers of the race tests: every reachable state of a small world (or a seeded sample of them), and the check
// that the footprints' independence holds on each of them.
import { Sfc32 } from '../../src/emu/prng.js';
import { footprint, independent } from '../../src/emu/race/footprint.js';
import { capture, restore, type StateVec, stateKey } from '../../src/emu/race/state.js';
import { actorCount, actorName, isEnabled, lostWaiter, runStep } from '../../src/emu/race/steps.js';
import type { Replay } from '../../src/emu/race/trace.js';
import type { Variant } from '../../src/emu/race/variants.js';
import { buildWorld, IrqPc, Pc, type SenderKind, type World } from '../../src/emu/race/world.js';

/** Every state reachable from the start (depth-first, no bound: the step graph is acyclic). */
export function reachable(variant: Variant, n: number | readonly SenderKind[]): { world: World; states: StateVec[] } {
  const world = buildWorld(variant, n);
  const seen = new Set<string>();
  const states: StateVec[] = [];
  const stack = [capture(world)];
  seen.add(stateKey(stack[0] as StateVec));
  while (stack.length > 0) {
    const v = stack.pop() as StateVec;
    states.push(v);
    for (let a = 0; a < actorCount(world); a++) {
      restore(world, v);
      if (!isEnabled(world, a)) continue;
      runStep(world, a, null);
      const c = capture(world);
      const k = stateKey(c);
      if (!seen.has(k)) {
        seen.add(k);
        stack.push(c);
      }
    }
  }
  return { world, states };
}

/** The distinct states `walks` random schedules from the start pass through (each run to its end, steps drawn from `seed`). */
export function walked(
  variant: Variant,
  n: number | readonly SenderKind[],
  walks: number,
  seed: number,
): { world: World; states: StateVec[] } {
  const world = buildWorld(variant, n);
  const rng = new Sfc32(seed);
  const start = capture(world);
  const seen = new Map<string, StateVec>([[stateKey(start), start]]);
  for (let i = 0; i < walks; i++) {
    restore(world, start);
    for (;;) {
      const enabled: number[] = [];
      for (let a = 0; a < actorCount(world); a++) if (isEnabled(world, a)) enabled.push(a);
      if (enabled.length === 0) break;
      runStep(world, enabled[rng.int(0, enabled.length - 1)] as number, null);
      const c = capture(world);
      seen.set(stateKey(c), c);
    }
  }
  return { world, states: [...seen.values()] };
}

/**
 * On every reachable state (or the sampled ones), every pair of enabled steps the footprints call independent: run
 * both orders; each must leave the other enabled and both must end in the same state. Returns the
 * pairs checked and the first failures (state index, actors, what went wrong).
 */
export function commutingPairs(
  variant: Variant,
  n: number | readonly SenderKind[],
  /** Check the states of this many seeded random schedules instead of every reachable state. */
  sample?: { walks: number; seed: number },
): { states: number; pairs: number; failures: string[] } {
  const { world: w, states } = sample ? walked(variant, n, sample.walks, sample.seed) : reachable(variant, n);
  const failures: string[] = [];
  let pairs = 0;
  const same = (x: StateVec, y: StateVec): boolean => x.length === y.length && x.every((v, i) => v === y[i]);
  states.forEach((v, i) => {
    for (let a = 0; a < actorCount(w); a++) {
      for (let b = a + 1; b < actorCount(w); b++) {
        restore(w, v);
        if (!isEnabled(w, a) || !isEnabled(w, b) || !independent(footprint(w, a), footprint(w, b))) continue;
        pairs++;
        const what = `state ${i}, ${actorName(w, a)} and ${actorName(w, b)}`;
        runStep(w, a, null);
        if (!isEnabled(w, b)) {
          failures.push(`${what}: ${actorName(w, a)} disables ${actorName(w, b)}`);
          continue;
        }
        runStep(w, b, null);
        const ab = capture(w);
        restore(w, v);
        runStep(w, b, null);
        if (!isEnabled(w, a)) {
          failures.push(`${what}: ${actorName(w, b)} disables ${actorName(w, a)}`);
          continue;
        }
        runStep(w, a, null);
        if (!same(capture(w), ab)) failures.push(`${what}: the two orders end in different states`);
      }
    }
  });
  return { states: states.length, pairs, failures: failures.slice(0, 5) };
}

/** Step numbers (1-based) at which `actor` ran at one of `pcs`. */
export function stepsAt(r: Replay, actor: string, pcs: readonly number[]): number[] {
  return r.rows.filter((row, i) => row.actor === actor && pcs.includes(r.pcs[i] as number)).map((row) => row.step);
}

/** For the stuck submitter of a replayed lost wake-up: its last free-count check, sample, enqueue, and the last desc_avail before the enqueue. */
export function anatomy(r: Replay) {
  const s = lostWaiter(r.world);
  if (!s) throw new Error('the replayed schedule does not end in a lost wake-up');
  const enqueue = Math.max(...stepsAt(r, s.name, [Pc.enqueue]));
  const before = (xs: number[]) => Math.max(0, ...xs.filter((x) => x < enqueue));
  return {
    check: before(stepsAt(r, s.name, [Pc.check])),
    sample: before(stepsAt(r, s.name, [Pc.sample])),
    enqueue,
    avail: before(stepsAt(r, 'irq', [IrqPc.avail])),
  };
}
