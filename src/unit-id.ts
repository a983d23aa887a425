// Which unit a number or a name selects. Unit numbers are per module: a host with the upstream hfi1 and hfi2
// modules may have both hfi1_0 and hfi2_0, so a number selects a unit only when one unit has it; a name
// (hfi2_0) always does.
import type { UnitInfo } from './backend.js';

/** A unit as the user names it: its number (the N of hfi1_N / hfi2_N) or its name. */
export type UnitId = number | string;

/** The outcome of looking a unit up: the unit, none, or several with that number. */
export type UnitLookup = { found: UnitInfo } | { none: true } | { ambiguous: UnitInfo[] };

/** Look `id` up among `infos`: by name when it is a string, by number otherwise. */
export function lookupUnit(infos: readonly UnitInfo[], id: UnitId): UnitLookup {
  const hits = infos.filter((u) => (typeof id === 'string' ? u.name === id : u.unit === id));
  if (hits.length === 0) return { none: true };
  if (hits.length > 1) return { ambiguous: hits };
  return { found: hits[0] as UnitInfo };
}

/** The message for a number several units share, naming them. */
export function ambiguousUnitMessage(id: UnitId, hits: readonly UnitInfo[]): string {
  const names = hits.map((u) => u.name);
  return `unit ${id} is ${names.join(' and ')} on this host: name the one you mean (e.g. ${names[names.length - 1]})`;
}
