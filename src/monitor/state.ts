// The monitor's tracks carried between runs (health and the textfile exporter run once a minute or so, and
// one short run cannot gather the turnover a verdict needs). The state is JSON (bigints, maps and sets
// tagged), keyed by host, boot and sysroot, each unit's tracks by what identifies the unit. A state that is
// corrupt, of another key or stale is never trusted: it is ignored with a note, and the run starts afresh.
import type { UnitInfo } from '../backend.js';
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

function reviver(_key: string, value: unknown): unknown {
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

/** Why a decoded value is not a state of this version, or null when it is one. */
class Shape {
  problem: string | null = null;
  bad(what: string): false {
    this.problem ??= what;
    return false;
  }
  num(v: unknown, what: string, nullable = false): boolean {
    return (nullable && v === null) || (typeof v === 'number' && Number.isFinite(v)) || this.bad(`${what} is not a number`);
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
        c.num(t.prev.timeMs, `${where}.prev.timeMs`) &&
        c.num(t.prev.engine, `${where}.prev.engine`))) &&
    c.num(t.lastMoveMs, `${where}.lastMoveMs`, true) &&
    c.bool(t.lastMoveObserved, `${where}.lastMoveObserved`) &&
    c.num(t.lastHeadDmaMoveMs, `${where}.lastHeadDmaMoveMs`, true) &&
    c.num(t.haltSinceMs, `${where}.haltSinceMs`, true) &&
    c.num(t.flushSinceMs, `${where}.flushSinceMs`, true) &&
    c.bool(t.suspect, `${where}.suspect`) &&
    c.bool(t.stalled, `${where}.stalled`) &&
    c.num(t.stallCount, `${where}.stallCount`) &&
    c.num(t.stallMaxMs, `${where}.stallMaxMs`) &&
    c.bool(t.seenMove, `${where}.seenMove`) &&
    c.bool(t.wasHalted, `${where}.wasHalted`) &&
    c.num(t.halts, `${where}.halts`) &&
    c.num(t.recoveries, `${where}.recoveries`) &&
    (t.errCountFirst === null || typeof t.errCountFirst === 'bigint' || c.bad(`${where}.errCountFirst is not a count`)) &&
    (Array.isArray(t.lastErrors) || c.bad(`${where}.lastErrors is not a list`));
  return ok;
}

function checkStrandTrack(c: Shape, t: unknown, where: string): boolean {
  if (!c.obj(t, where)) return false;
  if (
    !(
      c.num(t.round, `${where}.round`) &&
      c.num(t.lastRoundMs, `${where}.lastRoundMs`, true) &&
      c.num(t.psmStallsGone, `${where}.psmStallsGone`)
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
      c.num(w.streak, `${at}.streak`) &&
      c.num(w.streakSinceMs, `${at}.streakSinceMs`) &&
      c.num(w.crowd, `${at}.crowd`) &&
      c.num(w.episodes, `${at}.episodes`) &&
      c.bool(w.confirmed, `${at}.confirmed`) &&
      c.num(w.seenAtRound, `${at}.seenAtRound`) &&
      c.num(w.firstSeenMs, `${at}.firstSeenMs`) &&
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
  let v: unknown;
  try {
    v = JSON.parse(text, reviver);
  } catch (e) {
    return { problem: `not valid JSON (${(e as Error).message})` };
  }
  const c = new Shape();
  if (!c.obj(v, 'the state')) return { problem: c.problem ?? 'not a state' };
  if (v.version !== STATE_VERSION) return { problem: `format ${JSON.stringify(v.version)}, not ${STATE_VERSION}` };
  const key = v.key as Record<string, unknown> | undefined;
  if (!c.obj(key, 'key') || !c.obj(key.units, 'key.units') || typeof key.sysroot !== 'string')
    return { problem: c.problem ?? 'no key' };
  if (!c.num(v.savedAtMs, 'savedAtMs') || !c.obj(v.tracks, 'tracks')) return { problem: c.problem ?? 'no tracks' };
  const t = v.tracks;
  if (!c.num(t.index, 'tracks.index') || !c.map(t.engines, 'tracks.engines') || !c.map(t.strands, 'tracks.strands')) {
    return { problem: c.problem ?? 'bad tracks' };
  }
  for (const [k, e] of t.engines)
    if (typeof k !== 'string' || !checkEngineTrack(c, e, `engines[${String(k)}]`))
      return { problem: c.problem ?? 'bad engine track' };
  for (const [k, s] of t.strands)
    if (typeof k !== 'string' || !checkStrandTrack(c, s, `strands[${String(k)}]`))
      return { problem: c.problem ?? 'bad waiter track' };
  if (!checkHistory(c, t.history)) return { problem: c.problem ?? 'bad history' };
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
