// A SPIN counterexample told as `hfi1-sdma emu race` tells its own: the trail's actors replayed step by step on the
// explorer's world (each step of the model is one step of the explorer), printed as the same table (step, actor,
// action, seq, head, tail, free) and the same closing paragraph. A trail the explorer cannot replay is printed as
// SPIN's own steps instead, with the reason.
import { table } from '../src/cli/format.js';
import { replaySchedule, whyStuck } from '../src/emu/race/trace.js';
import type { Variant } from '../src/emu/race/variants.js';
import type { SenderKind } from '../src/emu/race/world.js';
import type { SpinStep } from './spin.js';

/** The model's step codes (S_*, C_*, I_* in sdma-wakeup.pml), in words. */
const STEP_WORDS: Readonly<Record<number, string>> = {
  1: 'sdma_send_txreq: fits, submit_tx, release tail_lock',
  2: 'sdma_send_txreq: no room (nodesc)',
  3: 'sdma_check_progress: freecnt fits, -EAGAIN',
  4: 'sdma_check_progress: freecnt short',
  5: 'sample head_lock seq',
  6: 'park txreq on the work list, take waitlock',
  7: 'take waitlock',
  8: 'sdma_progress: 1, release waitlock, -EAGAIN',
  9: 'sdma_progress: 0',
  10: 'sdma_progress (waitlock not held): 1, -EAGAIN',
  11: 'sdma_progress (waitlock not held): 0',
  12: 'enqueue on dmawait',
  13: 'release waitlock and tail_lock, sleep',
  20: 'chip: packet done, progress interrupt pending',
  21: 'chip: packet done, idle interrupt pending',
  30: 'interrupt: take head_lock',
  31: 'sdma_make_progress: nothing retired',
  32: 'sdma_make_progress: retire to HEAD',
  33: 'sdma_desc_avail: no one to wake',
  34: 'sdma_desc_avail: harvest',
  35: 'wake the harvested',
  36: 'release head_lock',
};

const COLUMNS = ['step', 'actor', 'action', 'seq', 'head', 'tail', 'free'];
const NUMERIC = new Set([0, 3, 4, 5, 6]);

/** The story of a trail of `senders` under `variant`: the explorer's rows and paragraph, or SPIN's own steps. */
export function storyTable(variant: Variant, senders: readonly SenderKind[], trail: readonly SpinStep[]): string {
  try {
    const r = replaySchedule(
      variant,
      senders,
      trail.map((s) => s.actor),
    );
    const rows = r.rows.map((t) => [
      String(t.step),
      t.actor,
      t.action,
      String(t.seq),
      String(t.head),
      String(t.tail),
      String(t.free),
    ]);
    return `${table(COLUMNS, rows, NUMERIC)}\n${whyStuck(r)}\n`;
  } catch (e) {
    const n = senders.length;
    const name = (a: number) => (a < n ? `S${a + 1}` : a === n ? 'chip' : 'irq');
    const rows = trail.map((s, i) => [
      String(i + 1),
      name(s.actor),
      STEP_WORDS[s.code] ?? `step ${s.code}`,
      String(s.seq),
      String(s.head),
      String(s.tail),
      String(s.free),
    ]);
    return `${table(COLUMNS, rows, NUMERIC)}\n(SPIN's own steps: the explorer could not replay them: ${(e as Error).message})\n`;
  }
}
