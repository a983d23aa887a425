// Two checkers of the sleep/wake-up protocol side by side: SPIN on the Promela model and the race explorer on
// the emulator's engine (`hfi1-sdma emu race`). For one variant and set of senders, each gives two verdicts: can a
// sender be left asleep with nothing left to wake it but other senders' traffic (the window), and can one be left
// asleep for good (no step left anywhere: SPIN's invalid end state). Each SPIN counterexample is also replayed,
// step for step, on the explorer's world, which must end in the same lost wake-up.
import { defaultBound, explore } from '../src/emu/race/explorer.js';
import { actorCount, isEnabled, lostWaiter } from '../src/emu/race/steps.js';
import { type Replay, replaySchedule } from '../src/emu/race/trace.js';
import type { Variant } from '../src/emu/race/variants.js';
import type { SenderKind } from '../src/emu/race/world.js';
import type { Pan, SpinProperty, SpinResult } from './spin.js';

/** The two checkers' verdicts for one variant and set of senders. */
export interface Agreement {
  variant: Variant;
  senders: SenderKind[];
  spin: Record<SpinProperty, SpinResult>;
  explorer: { window: boolean; forGood: boolean; states: number; lostWakeups: number; lostForGood: number };
  /** Each SPIN counterexample replayed on the explorer's world: ends as SPIN says (null: no counterexample). */
  replayed: Record<SpinProperty, Replay | null>;
  replayAgrees: Record<SpinProperty, boolean | null>;
  /** Both verdicts the same in both checkers, and every counterexample replayed as SPIN found it. */
  agree: boolean;
}

/** Whether a replayed schedule ends as the property says: a lost wake-up, and for `end` no step left anywhere. */
export function replayEndsLost(r: Replay, property: SpinProperty): boolean {
  const w = r.world;
  if (lostWaiter(w) === null) return false;
  if (property === 'window') return true;
  for (let a = 0; a < actorCount(w); a++) if (isEnabled(w, a)) return false;
  return true;
}

/** Check one variant and set of senders with both checkers (SPIN's trails shortest when `shortest`). */
export async function agreement(
  pan: Pan,
  variant: Variant,
  senders: readonly SenderKind[],
  opts: { shortest?: boolean } = {},
): Promise<Agreement> {
  const spin = {
    window: await pan.check(variant, senders, 'window', { trail: true, shortest: opts.shortest === true }),
    end: await pan.check(variant, senders, 'end', { trail: true, shortest: opts.shortest === true }),
  };
  const r = explore({ variant, submitters: senders.length, senders, bound: defaultBound(senders.length), seed: 1 });
  const explorer = {
    window: r.lostWakeups > 0,
    forGood: r.lostForGood > 0,
    states: r.states,
    lostWakeups: r.lostWakeups,
    lostForGood: r.lostForGood,
  };
  const replayOf = (p: SpinProperty): Replay | null => {
    const t = spin[p].trail;
    return t
      ? replaySchedule(
          variant,
          senders,
          t.map((s) => s.actor),
        )
      : null;
  };
  const replayed = { window: replayOf('window'), end: replayOf('end') };
  const replayAgrees = {
    window: replayed.window ? replayEndsLost(replayed.window, 'window') : null,
    end: replayed.end ? replayEndsLost(replayed.end, 'end') : null,
  };
  const agree =
    (spin.window.verdict === 'lost') === explorer.window &&
    (spin.end.verdict === 'lost') === explorer.forGood &&
    replayAgrees.window !== false &&
    replayAgrees.end !== false;
  return { variant, senders: [...senders], spin, explorer, replayed, replayAgrees, agree };
}

/** Every set of `n` senders up to order (the explorer's symmetry): qp first, then psm, then ipoib. */
export function senderMixes(n: number): SenderKind[][] {
  const out: SenderKind[][] = [];
  for (let qp = n; qp >= 0; qp--)
    for (let psm = n - qp; psm >= 0; psm--) {
      const ipoib = n - qp - psm;
      out.push([
        ...Array.from({ length: qp }, () => 'qp' as const),
        ...Array.from({ length: psm }, () => 'psm' as const),
        ...Array.from({ length: ipoib }, () => 'ipoib' as const),
      ]);
    }
  return out;
}
