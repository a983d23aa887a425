// How long a command watches before it judges, one rule for every command that renders the monitor's rounds, so
// that the same host gives the same verdicts whichever command is asked. health watches its whole window: five
// samples --stall-ms/2 apart (a stall needs --stall-ms without movement and a confirming sample after it); show,
// engines and waiters stop as soon as nothing is left to judge (an idle host at once, a busy one once every head
// was seen to move) and never watch longer than health. While a waiter's candidate verdict is being confirmed
// (three samples spanning --strand-ms) the samples come --strand-ms/2 apart: a PSM writer's stall ends by itself
// after 1 s (SDMA_IOWAIT_TIMEOUT, user_sdma.h), so three samples --stall-ms/2 apart never fit in it.
import type { Backend, WaiterKind } from '../backend.js';
import type { Reason } from '../progress/classify.js';
import { DEFAULT_STRAND_MS, STRAND_SAMPLES } from '../progress/strand.js';
import type { Monitor } from './monitor.js';
import { nextInstant, type Sleep } from './pace.js';
import type { EngineRound, Round } from './round.js';

/** The samples of health's observation: the first, and one every --stall-ms/2 until 2 × --stall-ms. */
export const JUDGE_SAMPLES = 5;

/** Time between the samples of an observation (ms). */
export function judgeStepMs(stallMs: number): number {
  return Math.max(1, Math.ceil(stallMs / 2));
}

/** How long health observes for --stall-ms (ms of wall or virtual time). */
export function observationMs(stallMs: number): number {
  return (JUDGE_SAMPLES - 1) * judgeStepMs(stallMs);
}

/** The strand window when none is given: DEFAULT_STRAND_MS, or the whole observation of --stall-ms when shorter. */
export function fittedStrandMs(stallMs: number): number {
  return Math.min(DEFAULT_STRAND_MS, observationMs(stallMs));
}

/** Engine verdicts that more samples settle: no movement seen yet, a stall awaiting its confirming sample, a halt inside its window. */
export const UNSETTLED_REASONS: ReadonlySet<Reason> = new Set<Reason>(['warming-up', 'stall-suspected', 'recovering']);

/** Whether some waiter's candidate verdict (stranded, orphaned, a PSM stall) is still being confirmed; of `kind` only when given. */
export function confirming(round: Round, kind?: WaiterKind): boolean {
  return round.units.some((u) =>
    u.waiters.judgements.some((j) => j.reason === 'confirming' && (kind === undefined || j.waiter.kind === kind)),
  );
}

/** Whether an engine's verdict is one that more samples would settle. */
export function unsettled(e: EngineRound): boolean {
  return e.verdict.verdict === 'unknown' && UNSETTLED_REASONS.has(e.verdict.reason);
}

/** Whether some engine of a readable unit has a verdict that more samples would settle. */
export function enginesUnsettled(round: Round): boolean {
  return round.units.some((u) => u.status === 'up' && u.engines.some(unsettled));
}

/** Whether the round leaves nothing to judge: every engine judged and no waiter being confirmed. */
export function judged(round: Round): boolean {
  return !enginesUnsettled(round) && !confirming(round);
}

/** How an observation runs. */
export interface ObservationOptions {
  stallMs: number;
  strandMs: number;
  /** The wall-clock sleep between samples (a fake in tests; the emulator's virtual time advances by as much). */
  sleep: Sleep;
  signal?: AbortSignal;
  /** Stop before the window ends once this holds (health: never; the follow-up commands: `judged`). */
  enough?: (round: Round) => boolean;
  /** The observation's first round, when the caller took it already. */
  first?: Round;
}

/** The step to the next sample: --strand-ms/2 while a waiter is being confirmed (at most two in a row), else --stall-ms/2. */
function nextStep(round: Round, o: ObservationOptions, quick: number): number {
  const step = judgeStepMs(o.stallMs);
  if (quick >= STRAND_SAMPLES - 1 || !confirming(round)) return step;
  return Math.min(step, Math.max(1, Math.ceil(o.strandMs / 2)));
}

/**
 * Observe: rounds until the window of health's observation is over (or `enough` holds), the signal aborts or a unit
 * is gone; on a recording, every recorded instant. Resolves with the last round, and whether the signal stopped it.
 */
export async function observe(monitor: Monitor, o: ObservationOptions): Promise<{ round: Round; stopped: boolean }> {
  const backend: Backend = monitor.backend;
  const windowMs = observationMs(o.stallMs);
  let round = o.first ?? (await monitor.round());
  let elapsedMs = 0;
  let quick = 0;
  for (;;) {
    if (round.units.some((u) => u.status === 'gone')) break;
    if (!backend.recording && (elapsedMs >= windowMs || o.enough?.(round))) break;
    const step = Math.min(nextStep(round, o, quick), Math.max(1, windowMs - elapsedMs));
    quick = step < judgeStepMs(o.stallMs) ? quick + 1 : 0;
    if (!(await nextInstant(backend, step, o.sleep, o.signal))) return { round, stopped: o.signal?.aborted === true };
    elapsedMs += step;
    round = await monitor.round();
  }
  return { round, stopped: false };
}
