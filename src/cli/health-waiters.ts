// What `health` concludes from the waiters: a stranded QP (a lost wake-up: CRITICAL by default), a
// probably stranded one (the engine is the one qp_stats printed, and a sibling of its VL was busy),
// PSM stall episodes (a writer gives up after 1 s and retries: WARNING), waiters orphaned on an
// engine that is not running, and a line for each kind of waiter that cannot be seen.
import type { Finding, Observed } from './health-findings.js';
import { whoCell } from './waiters.js';
import type { UnitWaiters } from './waiters-observe.js';
import { invisibleLines } from './waiters-observe.js';

/** Findings about the waiters of every unit at the end of the observation. */
export function waiterFindings(uws: readonly UnitWaiters[], observed: readonly Observed[]): Finding[] {
  const out: Finding[] = [];
  for (const uw of uws) {
    const name = uw.unit.info.name;
    const stuck = (ms: number | null) => (ms === null || uw.timeMs === null ? '' : ` for ${uw.timeMs - ms} ms`);
    for (const j of uw.judgements) {
      const w = j.waiter;
      if (j.verdict !== 'stranded') continue;
      const text = `${name} sdma${w.engine} ${whoCell(j)} ${j.probable ? 'probably ' : ''}stranded (${j.reason}): waiting for ${w.descriptorsNeeded ?? '?'} descriptors on a running, empty, quiet engine${stuck(j.holdingSinceMs)}; nothing will wake it until other traffic uses the engine`;
      out.push({ count: j.probable ? 'probable' : 'stranded', text, engines: 1 });
    }
    if (uw.psmStalls > 0) {
      const writers = uw.judgements.filter((j) => j.verdict === 'psm-stall').map(whoCell);
      out.push({
        count: 'psmstall',
        text: `${name} ${uw.psmStalls} PSM writer stall(s) of up to 1 s on an idle unit (a lost wake-up; the writer gives up after 1 s and retries, so it is a repeated stall, not a hang)${writers.length ? `: ${writers.join(', ')}` : ''}`,
        engines: uw.psmStalls,
      });
    }
    const orphanedOn = new Map<number, number>();
    for (const j of uw.judgements) {
      if (j.verdict === 'orphaned' && j.waiter.engine !== null) {
        orphanedOn.set(j.waiter.engine, (orphanedOn.get(j.waiter.engine) ?? 0) + 1);
      }
    }
    for (const [engine, n] of orphanedOn) {
      const o = observed.find((x) => x.unit === uw.unit && x.s.engine === engine);
      // An engine already counted for orphaned txreqs is one orphaned engine, said once more here.
      const counted = o?.c.orphanedWork === true;
      out.push({
        count: 'orphaned',
        text: `${name} sdma${engine} ${n} waiter(s) orphaned on an engine that is not running (${o?.s.state ?? 'no state'}): they wait for the link or a restart`,
        engines: counted ? 0 : 1,
      });
    }
  }
  return out;
}

/** Lines (level OK) about the waiters: ERR-state QPs left on a list, and kinds that cannot be seen. */
export function waiterNotes(uws: readonly UnitWaiters[]): string[] {
  const out: string[] = [];
  for (const uw of uws) {
    const errs = uw.judgements.filter((j) => j.verdict === 'error-state');
    if (errs.length) {
      out.push(
        `${uw.unit.info.name} ${errs.length} QP(s) in ERR left on a wait list (${errs.map(whoCell).join(', ')}): harmless until destroyed`,
      );
    }
  }
  return [...out, ...invisibleLines(uws).map((l) => `note: ${l}`)];
}

/** The status-line words for kinds not seen (`waiters not seen: psm, ipoib`), or '' when every kind is. */
export function blindWords(uws: readonly UnitWaiters[]): string {
  const kinds = new Set<string>();
  for (const uw of uws) for (const v of uw.visibility) if (!v.visible) kinds.add(v.kind);
  return kinds.size ? `; waiters not seen: ${[...kinds].join(', ')}` : '';
}
