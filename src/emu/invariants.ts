// The invariant report of a unit: conservation of txreqs (and of the IPoIB queues' txreqs, counting those dropped
// once the netdev was unregistered), ring bounds, generations in the ring,
// state changes only along the transition table (__sdma_process_event, sdma.c), descq_full_count against failed placements, and
// no lost wake-ups (`emu run`).
import { emptyDescriptor, generationFromTail } from '../progress/descriptor.js';
import { inFlight } from '../progress/ring.js';
import { EVENT_NAMES, findTransition, STATE_NAMES } from '../progress/state.js';
import { checkLostWakeups } from './dispatch.js';
import { decodeSlot } from './ring-lines.js';
import type { EmuUnit } from './unit.js';

/** Every invariant the unit breaks now, as sentences; empty when all hold. */
export function invariantViolations(u: EmuUnit): string[] {
  checkLostWakeups(u);
  const stats = u.stats();
  const out = [...stats.violations];
  const t = u.totals();
  if (t.txSubmitted !== t.txCompleted + t.txAborted + t.txInFlight) {
    out.push(
      `conservation: submitted ${t.txSubmitted} ≠ completed ${t.txCompleted} + aborted ${t.txAborted} + in flight ${t.txInFlight}`,
    );
  }
  out.push(...ipoibConservation(u));
  let dqf = 0;
  const f = emptyDescriptor();
  for (const e of u.engines) {
    dqf += e.descqFullCount;
    const n = inFlight(e.descqHead, e.descqTail);
    if (n > e.descqCnt - 1) out.push(`engine ${e.idx}: tail − head = ${n} exceeds descq_cnt − 1 = ${e.descqCnt - 1}`);
    let edits = 0;
    for (let k = 0; k < n && k < e.descqCnt; k++) {
      const counter = (e.descqHead + k) >>> 0;
      decodeSlot(u.host.cfg.jkr, e.descq, counter & e.mask, f);
      if (edits > 0) {
        edits--;
        continue;
      }
      if (f.first && f.ahgMode >= 3) edits = f.ahgMode - 2;
      const want = generationFromTail(counter, e.shift);
      if (f.gen !== want) {
        out.push(`engine ${e.idx}: descriptor ${counter} (slot ${counter & e.mask}) has generation ${f.gen}, expected ${want}`);
        break;
      }
    }
  }
  if (stats.genMismatches > 0) out.push(`the chip found ${stats.genMismatches} descriptor(s) with a wrong generation`);
  if (dqf !== stats.failedPlacements) out.push(`descq_full_count total ${dqf} ≠ failed placements ${stats.failedPlacements}`);
  for (const r of u.events(['event'])) {
    const state = STATE_NAMES[r.b];
    const event = EVENT_NAMES[r.a];
    if (!state || !event) continue;
    const row = findTransition(state, event);
    const to = r.c < 0 ? null : STATE_NAMES[r.c];
    const ok = row
      ? to !== null && (row.next === 'go?' ? to === 's99_Running' || to === 's20_Idle' : to === row.next)
      : to === null;
    if (!ok) out.push(`transition ${state} + ${event} → ${to ?? 'none'} is not in the driver's transition table`);
  }
  return out;
}

/** Every txreq an IPoIB queue took from the stack was placed, dropped (netdev unregistered) or is parked on its list. */
function ipoibConservation(u: EmuUnit): string[] {
  let taken = 0;
  let placed = 0;
  let dropped = 0;
  let parked = 0;
  for (const s of u.senders) {
    const q = s.ipoib;
    if (!q) continue;
    taken += q.taken;
    placed += q.placed;
    dropped += q.dropped;
    parked += q.list.length;
  }
  const out: string[] = [];
  if (taken !== placed + dropped + parked) {
    out.push(`conservation (IPoIB): taken ${taken} ≠ submitted ${placed} + dropped ${dropped} + parked ${parked}`);
  }
  const counted = u.stats().ipoibDropped;
  if (dropped !== counted) out.push(`IPoIB drops counted ${counted} ≠ ${dropped}`);
  return out;
}
