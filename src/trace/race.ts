// A race counterexample (`emu race`'s replayed schedule) as a timeline: one process, one track per actor (each
// sender, the chip, the interrupt handler), each step a complete slice of one microsecond on its actor's track with
// what it did; each sender's sleep on dmawait an async span until it is woken (or the trace ends); the window of the
// sender left asleep (from its free-count check to its enqueue) an async span of its own; the ring's free count,
// head and tail and head_lock's sequence as counters; the lost wake-up an instant at the end.
import { lostWaiter } from '../emu/race/steps.js';
import type { Replay } from '../emu/race/trace.js';
import { IrqPc, Pc } from '../emu/race/world.js';
import { asyncEvent, counter, instant, processMeta, slice, type TraceEvent, threadMeta } from './format.js';
import { pidOf, tidOf } from './ids.js';

/** What the race was: its variant and senders in actor order. */
export interface RaceLabel {
  variant: string;
  senders: readonly string[];
}

/** The events of a replayed schedule; `why` (the paragraph of the lost wake-up) goes on the final instant. */
export function raceEvents(r: Replay, label: RaceLabel, why: string): TraceEvent[] {
  const w = r.world;
  const n = w.subs.length;
  const name = `race ${label.variant} ${label.senders.join(',')}`;
  const pid = pidOf(name);
  const tid = (a: number) => tidOf(pid, 1 + a);
  const actorOf = (actor: string): number => (actor === 'chip' ? n : actor === 'irq' ? n + 1 : Number(actor.slice(1)) - 1);
  const out: TraceEvent[] = [
    ...processMeta(pid, name, `${label.variant}; senders ${label.senders.join(', ')}; clock: one µs per step`, 1),
  ];
  for (let a = 0; a < n + 2; a++) {
    const who = a < n ? `S${a + 1} ${label.senders[a] ?? ''}`.trim() : a === n ? 'chip' : 'irq';
    out.push(...threadMeta(pid, tid(a), who, a));
  }
  const asleep = new Map<number, number>();
  const checkAt = new Map<number, number>();
  let window: { sender: number; from: number; to: number } | null = null;
  for (const [i, row] of r.rows.entries()) {
    const a = actorOf(row.actor);
    const pc = r.pcs[i] ?? -1;
    const ts = row.step - 1;
    out.push(
      slice(pid, tid(a), stepName(row.action), 'step', ts, ts + 1, {
        step: row.step,
        action: row.action,
        seq: row.seq,
        head: row.head,
        tail: row.tail,
        free: row.free,
      }),
    );
    out.push(counter(pid, 'ring', ts + 1, { free: row.free, head: row.head, tail: row.tail }));
    out.push(counter(pid, 'head_lock seq', ts + 1, { seq: row.seq }));
    if (a < n) {
      if (pc === Pc.check) checkAt.set(a, ts);
      if (pc === Pc.enqueue && checkAt.has(a)) window = { sender: a, from: checkAt.get(a) as number, to: ts + 1 };
      if (pc === Pc.unlock) {
        asleep.set(a, ts + 1);
        out.push(asyncEvent('b', pid, tid(a), 'sleep', `S${a + 1} asleep`, 'asleep on dmawait', ts + 1));
      }
      if (pc === Pc.asleep && asleep.has(a)) {
        out.push(asyncEvent('e', pid, tid(a), 'sleep', `S${a + 1} asleep`, 'asleep on dmawait', ts));
        asleep.delete(a);
      }
    } else if (a === n + 1 && pc === IrqPc.avail) {
      out.push(instant(pid, tid(a), 'sdma_desc_avail', 'wake', ts + 1, { action: row.action }));
    }
  }
  // The lost wake-up lasts past the last step: two more microseconds show the sleep that nothing ends.
  const end = r.rows.length + 2;
  const stuck = lostWaiter(w);
  if (window && stuck && stuck.id === window.sender) {
    const id = `S${window.sender + 1} window`;
    const args = { note: 'from its free-count check to its enqueue: a whole retirement fits in here unseen' };
    out.push(asyncEvent('b', pid, tid(window.sender), 'window', id, 'window', window.from, args));
    out.push(asyncEvent('e', pid, tid(window.sender), 'window', id, 'window', window.to));
  }
  for (const [a] of asleep) out.push(asyncEvent('e', pid, tid(a), 'sleep', `S${a + 1} asleep`, 'asleep on dmawait', end));
  if (stuck) out.push(instant(pid, tid(stuck.id), 'lost wake-up', 'lost', end, { sender: stuck.name, why }, 'g'));
  return out;
}

/** A step's slice name: the action up to its first colon or comma (`sdma_check_progress`, `sample head_lock seq = 14`). */
function stepName(action: string): string {
  const cut = action.search(/[:,;]/);
  return (cut > 0 ? action.slice(0, cut) : action).slice(0, 48);
}
