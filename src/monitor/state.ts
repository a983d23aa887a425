// The monitor's tracks carried between runs (health and the textfile exporter run once a minute or so, and
// one short run cannot gather the turnover a verdict needs). The state is JSON (bigints, maps and sets
// tagged), keyed by host, boot and sysroot, each unit's tracks by what identifies the unit. A state that is
// corrupt, of another key or stale is never trusted: it is ignored with a note, and the run starts afresh.
import type { UnitInfo } from '../backend.js';
import { boundedText } from '../hw/parse/text.js';
import type { FindingHistory } from './findings.js';
import { type MonitorTracks, newMonitorTracks } from './monitor.js';

/** The format of the state file; another value is ignored. */
export const STATE_VERSION = 1;

/** A state older than this is stale: its tracks would span too much unseen time to be trusted (ms). */
export const STATE_STALE_MS = 15 * 60_000;

/** What a state belongs to: the host, its boot, the sysroot read, and each unit's identity. */
export interface StateKey {
  host: string | null;
  bootId: string | null;
  sysroot: string;
  /** By unit name: PCI address, serial, module, chip, driver, engines and ring size. */
  units: Record<string, string>;
}

/** The identity of a unit its tracks depend on: when any of it changes, its tracks are dropped. */
export function unitIdentity(info: UnitInfo): string {
  const f = info.flavour;
  return JSON.stringify([info.pci, info.context?.serial ?? null, f.module, f.chip, f.driver, info.engineIds, info.descqCnt]);
}

/** The state as saved. */
export interface SavedState {
  version: typeof STATE_VERSION;
  key: StateKey;
  /** When it was saved (epoch ms). */
  savedAtMs: number;
  tracks: MonitorTracks;
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return { $bigint: value.toString() };
  if (value instanceof Map) return { $map: [...value] };
  if (value instanceof Set) return { $set: [...value] };
  return value;
}

/** The longest text a state may carry (names, identities, keys); longer is cut. */
const STATE_TEXT_CHARS = 256;
/** Nesting deeper than any state this program writes (maps of tracks of samples): refused before it is parsed. */
export const STATE_MAX_DEPTH = 32;

/** Text read back from a state: another run (or user) wrote it, so it is escaped and bounded here, once. */
function reviver(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return boundedText(value, STATE_TEXT_CHARS);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length !== 1) return value;
  if (typeof o.$bigint === 'string' && /^-?[0-9]{1,40}$/.test(o.$bigint)) return BigInt(o.$bigint);
  if (Array.isArray(o.$map) && o.$map.every((e) => Array.isArray(e) && e.length === 2))
    return new Map(o.$map as [unknown, unknown][]);
  if (Array.isArray(o.$set)) return new Set(o.$set);
  return value;
}

/** The state as text. */
export function encodeState(s: SavedState): string {
  return `${JSON.stringify(s, replacer)}\n`;
}

/** How deep `text` nests arrays and objects (strings skipped), stopping once past `max`. */
export function jsonDepth(text: string, max: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > max) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** The most any count a state carries may be (rounds, stalls, episodes): far past what a run could reach. */
const MAX_COUNT = 1e12;
/** The latest time a state may carry (ms of the monitor's clock: epoch ms on a host, the year 2286). */
const MAX_TIME_MS = 1e13;
/** How far apart the times one state carries may lie: a year (ms). */
const MAX_SPAN_MS = 366 * 86_400_000;

/** Why a decoded value is not a state of this version, or null when it is one. Times and counts are range-checked. */
class Shape {
  problem: string | null = null;
  /** The times seen, to check that they lie together (span()). */
  private readonly times: number[] = [];
  bad(what: string): false {
    this.problem ??= what;
    return false;
  }
  num(v: unknown, what: string, nullable = false): boolean {
    return (nullable && v === null) || (typeof v === 'number' && Number.isFinite(v)) || this.bad(`${what} is not a number`);
  }
  /** A time of the monitor's clock: from 0 to MAX_TIME_MS (and within a year of the others: span()). */
  time(v: unknown, what: string, nullable = false): boolean {
    if (!this.num(v, what, nullable)) return false;
    if (v === null) return true;
    const t = v as number;
    if (t < 0 || t > MAX_TIME_MS) return this.bad(`${what} (${t}) is not a time of the monitor's clock`);
    this.times.push(t);
    return true;
  }
  /** The times seen lie within a year of one another (one run's tracks, carried for minutes). */
  span(): boolean {
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const t of this.times) {
      lo = Math.min(lo, t);
      hi = Math.max(hi, t);
    }
    return (
      this.times.length === 0 ||
      hi - lo <= MAX_SPAN_MS ||
      this.bad(`its times span ${Math.round((hi - lo) / 86_400_000)} days, more than a year`)
    );
  }
  /** A count: a whole number from 0 to MAX_COUNT. */
  count(v: unknown, what: string): boolean {
    return (
      (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_COUNT) ||
      this.bad(`${what} is not a count (a whole number from 0 to ${MAX_COUNT})`)
    );
  }
  /** A duration (ms): from 0 to a year. */
  duration(v: unknown, what: string): boolean {
    return (typeof v === 'number' && v >= 0 && v <= MAX_SPAN_MS) || this.bad(`${what} is not a duration (0 to a year in ms)`);
  }
  bool(v: unknown, what: string): boolean {
    return typeof v === 'boolean' || this.bad(`${what} is not true or false`);
  }
  map(v: unknown, what: string): v is Map<unknown, unknown> {
    return v instanceof Map || this.bad(`${what} is not a map`);
  }
  obj(v: unknown, what: string): v is Record<string, unknown> {
    return (typeof v === 'object' && v !== null && !Array.isArray(v)) || this.bad(`${what} is not an object`);
  }
}

function checkEngineTrack(c: Shape, t: unknown, where: string): boolean {
  if (!c.obj(t, where)) return false;
  const ok =
    (t.prev === null ||
      (c.obj(t.prev, `${where}.prev`) &&
        c.time(t.prev.timeMs, `${where}.prev.timeMs`) &&
        c.count(t.prev.engine, `${where}.prev.engine`))) &&
    c.time(t.lastMoveMs, `${where}.lastMoveMs`, true) &&
    c.bool(t.lastMoveObserved, `${where}.lastMoveObserved`) &&
    c.time(t.lastHeadDmaMoveMs, `${where}.lastHeadDmaMoveMs`, true) &&
    c.time(t.haltSinceMs, `${where}.haltSinceMs`, true) &&
    c.time(t.flushSinceMs, `${where}.flushSinceMs`, true) &&
    c.bool(t.suspect, `${where}.suspect`) &&
    c.bool(t.stalled, `${where}.stalled`) &&
    c.count(t.stallCount, `${where}.stallCount`) &&
    c.duration(t.stallMaxMs, `${where}.stallMaxMs`) &&
    c.bool(t.seenMove, `${where}.seenMove`) &&
    c.bool(t.wasHalted, `${where}.wasHalted`) &&
    c.count(t.halts, `${where}.halts`) &&
    c.count(t.recoveries, `${where}.recoveries`) &&
    (t.errCountFirst === null ||
      (typeof t.errCountFirst === 'bigint' && t.errCountFirst >= 0n && t.errCountFirst <= 0xffff_ffff_ffff_ffffn) ||
      c.bad(`${where}.errCountFirst is not a counter value (0 to 2^64 - 1)`)) &&
    ((Array.isArray(t.lastErrors) &&
      t.lastErrors.every(
        (b: unknown) =>
          typeof b === 'object' &&
          b !== null &&
          Number.isInteger((b as { bit?: unknown }).bit) &&
          (b as { bit: number }).bit >= 0 &&
          (b as { bit: number }).bit < 64,
      )) ||
      c.bad(`${where}.lastErrors is not a list of error bits`));
  return ok;
}

function checkStrandTrack(c: Shape, t: unknown, where: string): boolean {
  if (!c.obj(t, where)) return false;
  if (
    !(
      c.count(t.round, `${where}.round`) &&
      c.time(t.lastRoundMs, `${where}.lastRoundMs`, true) &&
      c.count(t.psmStallsGone, `${where}.psmStallsGone`)
    )
  ) {
    return false;
  }
  if (!c.map(t.quietKeys, `${where}.quietKeys`) || !c.map(t.waiters, `${where}.waiters`)) return false;
  for (const [k, v] of t.quietKeys)
    if (typeof k !== 'number' || typeof v !== 'string') return c.bad(`${where}.quietKeys holds a bad entry`);
  for (const [k, w] of t.waiters) {
    const at = `${where}.waiters[${String(k)}]`;
    if (typeof k !== 'string' || !c.obj(w, at)) return c.bad(`${at} is not a waiter`);
    const ok =
      typeof w.identity === 'string' &&
      (w.candidate === null || typeof w.candidate === 'string') &&
      c.count(w.streak, `${at}.streak`) &&
      c.time(w.streakSinceMs, `${at}.streakSinceMs`) &&
      c.count(w.crowd, `${at}.crowd`) &&
      c.count(w.episodes, `${at}.episodes`) &&
      c.bool(w.confirmed, `${at}.confirmed`) &&
      c.count(w.seenAtRound, `${at}.seenAtRound`) &&
      c.time(w.firstSeenMs, `${at}.firstSeenMs`) &&
      c.bool(w.firstSeenAtLeast, `${at}.firstSeenAtLeast`) &&
      c.map(w.siblings, `${at}.siblings`);
    if (!ok) return c.bad(`${at} is not a waiter track`);
  }
  return true;
}

function checkHistory(c: Shape, h: unknown): h is FindingHistory {
  if (!c.obj(h, 'history')) return false;
  if (!c.map(h.fullRounds, 'history.fullRounds')) return false;
  if (!(h.activeSeen instanceof Set)) return c.bad('history.activeSeen is not a set');
  return true;
}

/** Decode a state; the reason it cannot be used otherwise (corrupt, another version). */
export function decodeState(text: string): { state: SavedState } | { problem: string } {
  if (jsonDepth(text, STATE_MAX_DEPTH) > STATE_MAX_DEPTH) return { problem: `nested deeper than ${STATE_MAX_DEPTH} levels` };
  let v: unknown;
  try {
    v = JSON.parse(text, reviver);
  } catch (e) {
    // The parser quotes the text it stopped at: escaped and bounded as the rest.
    return { problem: `not valid JSON (${boundedText((e as Error).message, 120)})` };
  }
  const c = new Shape();
  if (!c.obj(v, 'the state')) return { problem: c.problem ?? 'not a state' };
  if (v.version !== STATE_VERSION) return { problem: `format ${JSON.stringify(v.version)}, not ${STATE_VERSION}` };
  const key = v.key as Record<string, unknown> | undefined;
  if (!c.obj(key, 'key') || !c.obj(key.units, 'key.units') || typeof key.sysroot !== 'string')
    return { problem: c.problem ?? 'no key' };
  if (!c.num(v.savedAtMs, 'savedAtMs') || !c.obj(v.tracks, 'tracks')) return { problem: c.problem ?? 'no tracks' };
  const t = v.tracks;
  if (!c.count(t.index, 'tracks.index') || !c.map(t.engines, 'tracks.engines') || !c.map(t.strands, 'tracks.strands')) {
    return { problem: c.problem ?? 'bad tracks' };
  }
  for (const [k, e] of t.engines)
    if (typeof k !== 'string' || !checkEngineTrack(c, e, `engines[${String(k)}]`))
      return { problem: c.problem ?? 'bad engine track' };
  for (const [k, s] of t.strands)
    if (typeof k !== 'string' || !checkStrandTrack(c, s, `strands[${String(k)}]`))
      return { problem: c.problem ?? 'bad waiter track' };
  if (!checkHistory(c, t.history)) return { problem: c.problem ?? 'bad history' };
  if (!c.span()) return { problem: c.problem ?? 'times apart' };
  return { state: v as unknown as SavedState };
}

/**
 * The tracks to start from: the saved ones where the state is this host's, boot's and sysroot's and fresh,
 * without those of units whose identity changed; fresh tracks (and a note saying why) otherwise.
 */
export function tracksFrom(
  saved: SavedState | null,
  key: StateKey,
  nowMs: number,
): { tracks: MonitorTracks; note: string | null } {
  if (!saved) return { tracks: newMonitorTracks(), note: null };
  const k = saved.key;
  if (k.sysroot !== key.sysroot || k.host !== key.host) {
    return { tracks: newMonitorTracks(), note: `it was saved for ${k.host ?? 'another host'} reading ${k.sysroot}: ignored` };
  }
  if (k.bootId !== key.bootId) return { tracks: newMonitorTracks(), note: 'it was saved before this boot: ignored' };
  const age = nowMs - saved.savedAtMs;
  if (age < 0 || age > STATE_STALE_MS) {
    return {
      tracks: newMonitorTracks(),
      note: `it was saved ${Math.round(age / 60_000)} min ago (stale beyond ${STATE_STALE_MS / 60_000} min): ignored`,
    };
  }
  const t = saved.tracks;
  const changed = Object.keys(k.units).filter((name) => key.units[name] !== undefined && key.units[name] !== k.units[name]);
  for (const name of changed) {
    t.strands.delete(name);
    for (const e of [...t.engines.keys()]) if (e.startsWith(`${name}/`)) t.engines.delete(e);
  }
  return {
    tracks: t,
    note: changed.length
      ? `the tracks of ${changed.join(', ')} were dropped: the unit changed (a driver reload or another adapter)`
      : null,
  };
}
