// health's levels: the -w/-c thresholds over the finding counts (as Nagios plugins take them), the level of
// each finding under them, and the status they add up to. The perfdata carries the same thresholds, so the
// status and the perfdata always agree.

import { usageError } from '../errors.js';
import { COUNTS, type CountName, DEFAULT_CRITICAL, DEFAULT_WARNING, type Thresholds } from '../monitor/codes.js';
import type { Finding } from '../monitor/findings.js';

export { COUNTS, type CountName, DEFAULT_CRITICAL, DEFAULT_WARNING, type Thresholds };

export const NAGIOS = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 } as const;
export type Level = keyof typeof NAGIOS;

/** Parse `-w`/`-c`: `name=N[,name=N…]` (or `name=off`) over the count names; merged over the defaults. */
export function parseThresholds(flag: string, raw: unknown, defaults: Thresholds): Thresholds {
  const out: Thresholds = { ...defaults };
  if (raw === undefined || raw === '') return out;
  if (Array.isArray(raw)) throw usageError(`${flag} was given ${raw.length} times; give it once, as name=N,name=N`);
  const seen = new Set<string>();
  for (const part of String(raw).split(',')) {
    const m = /^([a-z]+)=(\d+|off)$/.exec(part.trim());
    const name = m?.[1] as CountName | undefined;
    if (!m || !name || !COUNTS.includes(name)) {
      throw usageError(
        `${flag} expects name=N[,name=N...] (N an integer, or off) with names ${COUNTS.join(', ')}; got ${JSON.stringify(part)}`,
      );
    }
    if (seen.has(name)) throw usageError(`${flag} names ${name} twice; give each count once`);
    seen.add(name);
    if (m[2] === 'off') delete out[name];
    else out[name] = Number(m[2]);
  }
  return out;
}

/** Every count's total over the findings. */
export function countsOf(fs: readonly Finding[]): Record<CountName, number> {
  const counts = Object.fromEntries(COUNTS.map((k) => [k, 0])) as Record<CountName, number>;
  for (const f of fs) if (f.count !== null) counts[f.count] += f.weight;
  return counts;
}

/** The level of one count against the thresholds. */
export function levelOf(count: CountName, n: number, warning: Thresholds, critical: Thresholds): Level {
  const c = critical[count];
  const w = warning[count];
  if (c !== undefined && n > c) return 'CRITICAL';
  if (w !== undefined && n > w) return 'WARNING';
  return 'OK';
}

/** The level of one finding: its count's under the thresholds; a finding that cannot be judged is UNKNOWN. */
export function findingLevel(f: Finding, counts: Record<CountName, number>, warning: Thresholds, critical: Thresholds): Level {
  if (f.severity === 'unknown') return 'UNKNOWN';
  if (f.count === null) return 'OK';
  return levelOf(f.count, counts[f.count], warning, critical);
}

/** The status of a list of levels: the worst problem, UNKNOWN only where nothing worse was found. */
export function statusOf(levels: readonly Level[]): Level {
  if (levels.includes('CRITICAL')) return 'CRITICAL';
  if (levels.includes('WARNING')) return 'WARNING';
  if (levels.includes('UNKNOWN')) return 'UNKNOWN';
  return 'OK';
}
