// The waiters as the engine commands (engines, show, watch) show them beside each engine: a count with a
// mark for a stranded one, the JSON fields, and a line for each kind of waiter that cannot be seen.

import type { EngineRound, UnitRound } from '../monitor/round.js';
import { NO_WAITERS_REASON } from '../monitor/waiters.js';
import { DEFAULT_STRAND_MS } from '../progress/strand.js';
import { parseIntArg } from './args.js';

export { NO_WAITERS_REASON };

/** Parse --strand-ms (default 200). */
export function strandMsArg(raw: unknown): number {
  return raw === undefined ? DEFAULT_STRAND_MS : parseIntArg('--strand-ms', raw, 1, 3_600_000);
}

/** The `wait` cell: `-` when no waiter can be seen, the count, `!` after it when one is stranded (`?` probably). */
export function waitCell(e: EngineRound): string {
  const w = e.waiters;
  if (w === null) return '-';
  if (w.stranded > 0) return `${w.count}!`;
  if (w.probable > 0) return `${w.count}?`;
  return String(w.count);
}

/** One line per kind that cannot be seen: `hfi1_0: psm waiters not visible: reason (fix)`. */
export function invisibleLines(units: readonly UnitRound[]): string[] {
  const out: string[] = [];
  for (const u of units) {
    const uw = u.waiters;
    if (u.status !== 'up') continue;
    if (!uw.listed) {
      out.push(`${u.info.name}: waiters not visible: ${uw.visibility[0]?.reason ?? NO_WAITERS_REASON}`);
      continue;
    }
    for (const v of uw.visibility) {
      if (v.visible) continue;
      out.push(`${u.info.name}: ${v.kind} waiters not visible: ${v.reason ?? 'unknown'}${v.fix ? `; ${v.fix}` : ''}`);
    }
  }
  return out;
}

/** The waiter fields of one engine in EngineJson (`engines`, `watch`): null when no waiter can be seen. */
export function waiterFields(e: EngineRound) {
  const w = e.waiters;
  if (w === null) return { waiters: null, strandedWaiters: null, probablyStrandedWaiters: null };
  // Before the third sample, or with no QP or IPoIB queue visible, nothing can be called stranded: null,
  // not a 0 nobody could check.
  return {
    waiters: w.count,
    strandedWaiters: w.confirmable ? w.stranded : null,
    probablyStrandedWaiters: w.confirmable ? w.probable : null,
  };
}
