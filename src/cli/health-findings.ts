// What `health` concludes from its observation: counts per kind of finding, the Nagios level of
// each count against the -w/-c thresholds, and one line per finding (one per unit where a whole
// unit shares it: a gone device, a link down). The perfdata carries the same thresholds, so the
// status and the perfdata always agree.
import type { EngineSample, LinkState, Unit } from '../backend.js';
import { usageError } from '../errors.js';
import type { Classification } from '../progress/classify.js';
import { isOperational } from '../progress/state.js';

export const NAGIOS = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 } as const;
export type Level = keyof typeof NAGIOS;

/**
 * The counts `health` reports: engines, except stranded and probable (waiters) and psmstall (PSM
 * stall episodes seen during the check).
 */
export const COUNTS = [
  'stalled',
  'halted',
  'gone',
  'full',
  'errors',
  'notrunning',
  'orphaned',
  'correctable',
  'stranded',
  'probable',
  'psmstall',
] as const;
export type CountName = (typeof COUNTS)[number];

/** As Nagios plugins do: a count above its threshold raises the status to that level. */
export type Thresholds = Partial<Record<CountName, number>>;

export const DEFAULT_WARNING: Thresholds = {
  full: 0,
  errors: 0,
  notrunning: 0,
  orphaned: 0,
  correctable: 0,
  probable: 0,
  psmstall: 0,
};
export const DEFAULT_CRITICAL: Thresholds = { stalled: 0, halted: 0, gone: 0, stranded: 0 };

/** Parse `-w`/`-c`: `name=N[,name=N…]` (or `name=off`) over the count names; merged over the defaults. */
export function parseThresholds(flag: string, raw: unknown, defaults: Thresholds): Thresholds {
  const out: Thresholds = { ...defaults };
  if (raw === undefined || raw === '') return out;
  for (const part of String(raw).split(',')) {
    const m = /^([a-z]+)=(\d+|off)$/.exec(part.trim());
    const name = m?.[1] as CountName | undefined;
    if (!m || !name || !COUNTS.includes(name)) {
      throw usageError(
        `${flag} expects name=N[,name=N...] (N an integer, or off) with names ${COUNTS.join(', ')}; got ${JSON.stringify(part)}`,
      );
    }
    if (m[2] === 'off') delete out[name];
    else out[name] = Number(m[2]);
  }
  return out;
}

/** One engine at the end of the observation, with what was seen along the way. */
export interface Observed {
  unit: Unit;
  s: EngineSample;
  c: Classification;
  /** descq_full_count rose in every interval of the observation. */
  persistentlyFull: boolean;
}

/** One line of output under the status line. */
export interface Finding {
  count: CountName;
  text: string;
  /** Engines this line stands for (one, or a whole unit). */
  engines: number;
}

function engineFindings(o: Observed): Finding[] {
  const { s, c } = o;
  const where = `${o.unit.info.name} sdma${s.engine}`;
  const f: Finding[] = [];
  const one = (count: CountName, text: string) => f.push({ count, text: `${where} ${text}`, engines: 1 });
  if (c.verdict === 'stalled')
    one('stalled', `stalled (${c.reason}): ${c.inFlight ?? '?'} descriptors in flight, no head movement for ${c.stallMaxMs} ms`);
  if (c.verdict === 'halted')
    one(
      'halted',
      `halted (${c.reason}): state ${s.state ?? '?'}${c.errors.length ? `, errors ${c.errors.map((e) => e.name).join(',')}` : ''}`,
    );
  if (o.persistentlyFull)
    one('full', 'ring persistently full: descq_full_count rose in every sample (senders keep waiting for descriptors)');
  if (c.orphanedWork) one('orphaned', 'flush list non-empty beyond the recovery window: orphaned txreqs');
  const soft = c.errors.filter((e) => !e.halts);
  if (soft.length && c.verdict !== 'halted') one('correctable', `correctable error bits: ${soft.map((e) => e.name).join(',')}`);
  if (c.errCountRise > 0) {
    const bits = c.lastErrors.length
      ? `error bits last seen: ${c.lastErrors.map((e) => e.name).join(',')}`
      : 'the bits cleared before any sample showed them';
    const halts = c.halts > 0 ? `, ${c.halts} halt(s) and ${c.recoveries} recovery(ies) seen` : '';
    one('errors', `engine errors rose by ${c.errCountRise} during the check (SDMAErrCt ${c.errCount}${halts}); ${bits}`);
  }
  return f;
}

/**
 * Not running without a halt: an operational idle state such as s20_Idle (the link is down), or,
 * without sdes, SDMA_ENABLE off in CTRL. Said per unit when all its engines share it.
 */
function notRunning(o: Observed): boolean {
  const { s } = o;
  if (s.gone || o.c.verdict === 'halted') return false;
  if (s.state !== null) return isOperational(s.state) && s.state !== 's99_Running';
  return s.csr !== null && (s.csr.ctrl & 0x1n) === 0n;
}

/** The state a not-running engine is in, as the output names it. */
function stateName(o: Observed): string {
  return o.s.state ?? 'CTRL.ENABLE off';
}

/** `link DOWN (Polling)`: the logical state and, where known, the physical one; null when unknown. */
export function linkWords(link: LinkState | null | undefined): string | null {
  if (!link?.state) return null;
  return `link ${link.state}${link.physState ? ` (${link.physState})` : ''}`;
}

/** Why engines are not running, as far as the link tells. */
function idleCause(link: LinkState | null | undefined, all: boolean): string {
  const words = linkWords(link);
  if (words === null)
    return all ? 'SDMA disabled: the link is down or the port is not active' : 'the link is down or the engine is stopped';
  if (link?.state === 'ACTIVE') return `the ${words} is up, so the engine${all ? 's were' : ' was'} stopped`;
  return `SDMA stays disabled while the port is not ACTIVE`;
}

/**
 * Every finding of the observation, grouped per unit where the whole unit shares one. `links`
 * holds each unit's port link where the backend shows it: a link that is not ACTIVE is named in
 * the finding of its idle engines, as their cause.
 */
export function findings(observed: readonly Observed[], links: ReadonlyMap<Unit, LinkState | null> = new Map()): Finding[] {
  const out: Finding[] = [];
  const units = [...new Set(observed.map((o) => o.unit))];
  for (const unit of units) {
    const mine = observed.filter((o) => o.unit === unit);
    const name = unit.info.name;
    if (mine.some((o) => o.s.gone)) {
      const pci = unit.info.pci ? ` (${unit.info.pci})` : '';
      out.push({
        count: 'gone',
        text: `${name}${pci} gone: registers read all-ones on ${mine.filter((o) => o.s.gone).length} of ${mine.length} engines (device reset or removed); check dmesg, reload the driver`,
        engines: mine.filter((o) => o.s.gone).length,
      });
      continue;
    }
    const idle = mine.filter(notRunning);
    const states = [...new Set(idle.map(stateName))];
    const link = links.get(unit);
    const words = linkWords(link);
    const down = words !== null && link?.state !== 'ACTIVE' ? `${words}: ` : '';
    if (idle.length === mine.length && idle.length > 1 && states.length === 1) {
      out.push({
        count: 'notrunning',
        text: `${name} ${down}all ${idle.length} engines in ${states[0]}, not running (${idleCause(link, true)})`,
        engines: idle.length,
      });
    } else {
      for (const o of idle)
        out.push({
          count: 'notrunning',
          text: `${name} ${down}sdma${o.s.engine} in ${stateName(o)}, not running (${idleCause(link, false)})`,
          engines: 1,
        });
    }
    for (const o of mine) out.push(...engineFindings(o));
  }
  return out;
}

/** Engines per count. */
export function countsOf(fs: readonly Finding[]): Record<CountName, number> {
  const counts = Object.fromEntries(COUNTS.map((k) => [k, 0])) as Record<CountName, number>;
  for (const f of fs) counts[f.count] += f.engines;
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
