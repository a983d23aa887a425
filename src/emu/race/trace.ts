// A schedule replayed step by step on a fresh emulated engine, as the rows of a reproduction
// (the `trace` of `emu race --json`), and the sentence that says why the sender is stuck.
import { actorName, isEnabled, lostWaiter, runStep } from './steps.js';
import type { Variant } from './variants.js';
import { buildWorld, IrqPc, Pc, type SenderKind, type World } from './world.js';

/** One step of a trace: who did what, and the engine's sequence, head, tail and free count after it. */
export interface TraceRow {
  step: number;
  actor: string;
  action: string;
  seq: number;
  head: number;
  tail: number;
  free: number;
}

/** A replayed schedule: the world it ran on, its rows, and the program counter each step ran at. */
export interface Replay {
  world: World;
  rows: TraceRow[];
  pcs: number[];
}

/** Replay `schedule` (an actor per step) on a freshly built world of `submitters` (a count of PSM senders, or their kinds), noting every step. */
export function replaySchedule(
  variant: Variant,
  submitters: number | readonly SenderKind[],
  schedule: readonly number[],
): Replay {
  const w = buildWorld(variant, submitters);
  const rows: TraceRow[] = [];
  const pcs: number[] = [];
  const notes: string[] = [];
  schedule.forEach((a, i) => {
    if (!isEnabled(w, a)) throw new Error(`schedule step ${i + 1}: ${actorName(w, a)} has no enabled step`);
    pcs.push(a < w.subs.length ? (w.subs[a]?.pc ?? -1) : a === w.subs.length ? -1 : w.irq.pc);
    notes.length = 0;
    runStep(w, a, notes);
    const e = w.e;
    rows.push({
      step: i + 1,
      actor: actorName(w, a),
      action: notes.join('; '),
      seq: e.headSeq,
      head: e.descqHead,
      tail: e.descqTail,
      free: e.freecnt(),
    });
  });
  return { world: w, rows, pcs };
}

function lastStep(r: Replay, actor: string, pcs: readonly number[], before = Number.POSITIVE_INFINITY): number {
  for (let i = Math.min(r.rows.length, before - 1) - 1; i >= 0; i--) {
    const row = r.rows[i];
    if (row && row.actor === actor && pcs.includes(r.pcs[i] as number)) return row.step;
  }
  return 0;
}

/** Why the sender at the end of a replayed lost wake-up is stuck, in one paragraph. */
export function whyStuck(r: Replay): string {
  const w = r.world;
  const s = lostWaiter(w);
  if (s === null) return 'No sender is stuck at the end of this schedule.';
  const e = w.e;
  const need = s.tx.numDesc;
  const enq = lastStep(r, s.name, [Pc.enqueue]);
  const check = lastStep(r, s.name, [Pc.check], enq);
  const avail = lastStep(r, 'irq', [IrqPc.avail], enq);
  const kind =
    s.kind === 'qp'
      ? ` ${s.name} is a QP: its txreq parked on its work list makes its harvest need ${need}.`
      : s.kind === 'psm'
        ? ` ${s.name} is a PSM queue: its harvest need is 0.`
        : ` ${s.name} is an IPoIB queue: its txreq waits on the queue's own list, so its harvest need is 0.`;
  const head = `${s.name} sleeps on dmawait for ${need} descriptors while ${e.freecnt()} are free: the ring is empty (descq_head = descq_tail = ${e.descqHead}), the chip has nothing left to do and no interrupt is pending, so sdma_desc_avail will not run again to wake it.`;
  const missed =
    avail > 0 && avail > check
      ? ` The retirement that made the room ran its sdma_desc_avail at step ${avail}, between ${s.name}'s free-count check (step ${check}) and its enqueue (step ${enq}), and found no one to wake;`
      : '';
  let tail = '';
  if (w.variant === 'psm-pre-2019' && s.kind === 'psm') {
    const p = lastStep(r, s.name, [Pc.progressUnlocked], enq);
    tail = ` ${s.name}'s sdma_progress at step ${p} ran before it took waitlock, so nothing forced the retirement to wait for the enqueue (defer_packet_queue before the 2019 fix).`;
  } else if (w.variant === 'no-progress-check') {
    tail = ` ${s.name} never asked sdma_progress whether the head had moved since its check.`;
  } else {
    const smp = lastStep(r, s.name, [Pc.sample], enq);
    tail = ` ${s.name} sampled head_lock only at step ${smp}, after that retirement had released it, so sdma_progress saw an unchanged sequence and did not look at the free count again.`;
  }
  return missed ? `${head}${missed}${tail}${kind}` : `${head}${tail}${kind}`;
}
