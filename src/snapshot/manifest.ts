// Validation of a snapshot's manifest: its whole shape, every unit name and PCI address, every
// path. A snapshot comes from another site, so nothing in it is trusted until checked here.
import { Hfi1SdmaError } from '../errors.js';
import { escapeControls } from '../hw/parse/text.js';
import {
  type BarBlock,
  BDF,
  barBlockOf,
  FORMAT_V1,
  FORMAT_V2,
  instantDir,
  MANIFEST,
  MAX_SAMPLES,
  type ManifestUnit,
  type SnapshotManifest,
  type SourceRecord,
  UNIT_NAME,
  unsafePathReason,
} from './format.js';

/** What reading needs from a valid manifest: the units, the shared files, and each instant. */
export interface SnapshotPlan {
  manifest: SnapshotManifest;
  units: ManifestUnit[];
  /** Files stored with the first instant only (version 2). */
  once: string[];
  /** Each instant: its directory in the archive ('' for version 1), time and BAR blocks. */
  instants: { dir: string; timeMs: number; sources: SourceRecord[]; barBlocks: BarBlock[] }[];
}

type Json = unknown;

/** How much of a value a message shows, in characters. */
const SHOWN_CHARS = 60;

/**
 * A value as compact JSON, cut to SHOWN_CHARS, with control characters escaped. Only as much of it
 * is walked as is shown, at most a few levels deep: a manifest nested a hundred thousand deep
 * (which JSON.parse accepts) is shown as `[[[[...`, never stringified whole.
 */
function shown(v: Json): string {
  const s = jsonPrefix(v, 4, SHOWN_CHARS + 1);
  return escapeControls(s.length > SHOWN_CHARS ? `${s.slice(0, SHOWN_CHARS - 3)}...` : s);
}

/** The first `budget` or so characters of `v` as compact JSON, `depth` levels deep at most. */
function jsonPrefix(v: Json, depth: number, budget: number): string {
  if (typeof v === 'string') return JSON.stringify(v.slice(0, budget));
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? String(v);
  const array = Array.isArray(v);
  if (depth === 0) return array ? '[...' : '{...';
  let out = array ? '[' : '{';
  const items = array ? (v as Json[]) : Object.entries(v as Record<string, Json>);
  for (let i = 0; i < items.length; i++) {
    if (out.length > budget) return out;
    if (i > 0) out += ',';
    if (array) out += jsonPrefix(items[i], depth - 1, budget - out.length);
    else {
      const [k, x] = items[i] as [string, Json];
      out += `${JSON.stringify(k.slice(0, budget))}:${jsonPrefix(x, depth - 1, budget - out.length)}`;
    }
  }
  return out + (array ? ']' : '}');
}

class ManifestChecker {
  constructor(private readonly archive: string) {}

  /** Throw E_PARSE for field `where`; `got` (when given, even undefined) is shown. */
  fail(where: string, what: string, ...got: [Json] | []): never {
    const shownGot = got.length > 0 ? `, got ${shown(got[0])}` : '';
    throw new Hfi1SdmaError(
      'E_PARSE',
      `${this.archive}: ${MANIFEST}: ${where} ${what}${shownGot}; this is not a snapshot written by 'hfi1-sdma snapshot', or it was altered`,
    );
  }

  object(v: Json, where: string): Record<string, Json> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(where, 'must be an object', v);
    return v as Record<string, Json>;
  }

  list(v: Json, where: string, of: string, max: number): Json[] {
    if (!Array.isArray(v)) this.fail(where, `must be a list of ${of}`, v);
    if (v.length > max) this.fail(where, `may hold at most ${max} entries, has ${v.length}`);
    return v;
  }

  text(v: Json, where: string): string {
    if (typeof v !== 'string' || v.length > 4096) this.fail(where, 'must be a string (at most 4096 characters)', v);
    return v;
  }

  number(v: Json, where: string, min: number, max: number): number {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
      this.fail(where, `must be a number from ${min} to ${max}`, v);
    }
    return v;
  }

  path(v: Json, where: string): string {
    const p = this.text(v, where);
    const why = unsafePathReason(p);
    if (why !== null) this.fail(where, `${why}: every path must stay inside the snapshot`, p);
    return p;
  }

  units(v: Json): ManifestUnit[] {
    const seen = new Set<string>();
    return this.list(v, 'units', '{name, pci}', 64).map((raw, i) => {
      const o = this.object(raw, `units[${i}]`);
      const name = this.text(o.name, `units[${i}].name`);
      if (!UNIT_NAME.test(name)) this.fail(`units[${i}].name`, 'must be hfi1_<N> or hfi2_<N>', name);
      const pci = this.text(o.pci, `units[${i}].pci`);
      if (pci !== '' && !BDF.test(pci)) this.fail(`units[${i}].pci`, 'must be a PCI address such as 0000:05:00.0, or ""', pci);
      if (seen.has(name)) this.fail(`units[${i}].name`, 'names a unit twice', name);
      seen.add(name);
      if (o.chip !== undefined && o.chip !== 'jkr') this.fail(`units[${i}].chip`, "must be 'jkr' or absent (WFR)", o.chip);
      return o.chip === 'jkr' ? { name, pci, chip: 'jkr' } : { name, pci };
    });
  }

  sources(v: Json, where: string): SourceRecord[] {
    return this.list(v, where, '{path, captured, reason}', 100_000).map((raw, i) => {
      const o = this.object(raw, `${where}[${i}]`);
      const path = this.path(o.path, `${where}[${i}].path`);
      if (typeof o.captured !== 'boolean') this.fail(`${where}[${i}].captured`, 'must be true or false', o.captured);
      const rec: SourceRecord = { path, captured: o.captured };
      if (o.reason !== undefined) rec.reason = this.text(o.reason, `${where}[${i}].reason`);
      if (o.note !== undefined) rec.note = this.text(o.note, `${where}[${i}].note`);
      return rec;
    });
  }

  /** Each block must be exactly the one capture writes for a listed unit: the tool computes the paths. */
  barBlocks(v: Json, where: string, units: ManifestUnit[]): BarBlock[] {
    return this.list(v, where, '{file, resource0, offset, length}', units.length).map((raw, i) => {
      const o = this.object(raw, `${where}[${i}]`);
      const resource0 = this.path(o.resource0, `${where}[${i}].resource0`);
      const want = units.map(barBlockOf).find((b) => b.resource0 === resource0);
      if (!want) this.fail(`${where}[${i}].resource0`, 'must be the resource0 of a unit listed in units', resource0);
      if (o.file !== want.file) this.fail(`${where}[${i}].file`, `must be ${shown(want.file)}`, o.file);
      if (o.offset !== want.offset) this.fail(`${where}[${i}].offset`, `must be ${want.offset}`, o.offset);
      if (o.length !== want.length) this.fail(`${where}[${i}].length`, `must be ${want.length}`, o.length);
      return want;
    });
  }
}

/** Check a parsed snapshot.json; E_PARSE naming the archive, the manifest and the field otherwise. */
export function checkManifest(raw: Json, archive: string): SnapshotPlan {
  const c = new ManifestChecker(archive);
  const o = c.object(raw, 'the manifest');
  if (o.format !== FORMAT_V1 && o.format !== FORMAT_V2) {
    c.fail('format', `must be ${FORMAT_V1} or ${FORMAT_V2} (a newer hfi1-sdma may read it)`, o.format);
  }
  for (const k of ['time', 'host', 'toolVersion', 'sysroot']) c.text(o[k], k);
  const units = c.units(o.units);
  if (o.format === FORMAT_V1) {
    const sources = c.sources(o.sources, 'sources');
    const barBlocks = c.barBlocks(o.barBlocks, 'barBlocks', units);
    return { manifest: raw as SnapshotManifest, units, once: [], instants: [{ dir: '', timeMs: 0, sources, barBlocks }] };
  }
  c.number(o.intervalMs, 'intervalMs', 0, 86_400_000);
  if (o.emulated !== undefined && typeof o.emulated !== 'boolean') c.fail('emulated', 'must be true or false', o.emulated);
  if (o.redacted !== undefined && typeof o.redacted !== 'boolean') c.fail('redacted', 'must be true or false', o.redacted);
  const once = c.list(o.once, 'once', 'paths', 10_000).map((p, i) => c.path(p, `once[${i}]`));
  const list = c.list(o.instants, 'instants', '{timeMs, time, sources, barBlocks}', MAX_SAMPLES);
  if (list.length === 0) c.fail('instants', 'must hold at least one instant');
  let last = -1;
  const instants = list.map((rawInstant, i) => {
    const where = `instants[${i}]`;
    const inst = c.object(rawInstant, where);
    const timeMs = c.number(inst.timeMs, `${where}.timeMs`, i === 0 ? 0 : last, i === 0 ? 0 : 86_400_000);
    last = timeMs;
    c.text(inst.time, `${where}.time`);
    return {
      dir: instantDir(i),
      timeMs,
      sources: c.sources(inst.sources, `${where}.sources`),
      barBlocks: c.barBlocks(inst.barBlocks, `${where}.barBlocks`, units),
    };
  });
  return { manifest: raw as SnapshotManifest, units, once, instants };
}
