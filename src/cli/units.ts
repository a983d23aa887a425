// Opening the selected backend and walking its units, for the commands that read engines.
import type { Backend, EngineSample, SourceName, Unit, UnitInfo } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import { selectionError } from '../monitor/monitor.js';
import { engineIdsText } from '../progress/engine-ids.js';
import { lookupUnit, type UnitId } from '../unit-id.js';
import { parseIntArg } from './args.js';
import type { CliContext } from './context.js';

/** The units selected by --unit (all when absent); E_NO_DEVICE when none match. */
export async function selectedUnits(backend: Backend, unit: UnitId | undefined): Promise<Unit[]> {
  const infos = await backend.units();
  if (infos.length === 0) {
    throw new Hfi1SdmaError(
      'E_NO_DEVICE',
      `no hfi1 or hfi2 unit found (${backend.kind} backend); run 'hfi1-sdma doctor', or try --backend emu`,
    );
  }
  let chosen = infos;
  if (unit !== undefined) {
    const err = selectionError(infos, unit);
    if (err) throw err;
    chosen = infos.filter((u) => 'found' in lookupUnit([u], unit));
  }
  // By name: a number may be shared by hfi1_N and hfi2_N.
  return Promise.all(chosen.map((u) => backend.unit(u.name)));
}

/** Open the backend, run `fn`, and close the backend whatever happens. */
export async function withBackend<T>(ctx: CliContext, fn: (backend: Backend) => Promise<T>): Promise<T> {
  const backend = await ctx.openBackend();
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}

/** The unit's engines as text (`8-15`). */
export function engineWindow(engineIds: readonly number[]): string {
  return engineIdsText(engineIds);
}

/** Parse an engine argument (an absolute index) and check it is one of the unit's: E_NO_ENGINE naming the window. */
export function engineArg(raw: unknown, info: UnitInfo): number {
  const e = parseIntArg('engine', raw, 0, 255);
  if (!info.engineIds.includes(e)) {
    throw new Hfi1SdmaError('E_NO_ENGINE', `${info.name} has engines ${engineWindow(info.engineIds)}; there is no engine ${e}`);
  }
  return e;
}

/** The one unit a single-engine command works on: --unit, else the first. */
export async function singleUnit(backend: Backend, unit: UnitId | undefined): Promise<Unit> {
  const [u] = await selectedUnits(backend, unit);
  if (!u) throw new Hfi1SdmaError('E_NO_DEVICE', 'no hfi1 or hfi2 unit found');
  return u;
}

/** Sample one engine. */
export async function sampleOne(unit: Unit, engine: number): Promise<EngineSample> {
  const [s] = await unit.sample([engine]);
  if (!s) throw new Hfi1SdmaError('E_NO_ENGINE', `${unit.info.name}: no sample for engine ${engine}`);
  return s;
}

/**
 * The code for a part of a sample that none of `sources` could give: E_PERMISSION (77) when one of
 * them is unreadable for want of root (as `ring` says of sdes), E_UNAVAILABLE (69) otherwise.
 */
export function unreadableCode(info: UnitInfo, sources: readonly SourceName[]): 'E_PERMISSION' | 'E_UNAVAILABLE' {
  const needRoot = info.sources.some((s) => sources.includes(s.source) && !s.readable && s.fix?.includes('root'));
  return needRoot ? 'E_PERMISSION' : 'E_UNAVAILABLE';
}

/**
 * One line naming what the reduced view lacks and why, or null when nothing that matters is
 * missing: ring state needs sdes or the BAR; the progress sequence needs one of the counter
 * sources. A BAR refused on a host where sdes is readable is not worth a warning.
 */
export function missingSources(info: UnitInfo): string | null {
  const readable = new Set(info.sources.filter((s) => s.readable).map((s) => s.source));
  const groups: SourceName[][] = [
    ['sdes', 'bar'],
    ['counters', 'hwCounters', 'interrupts'],
  ];
  const missing = groups
    .filter((g) => !g.some((n) => readable.has(n)))
    .flatMap((g) => info.sources.filter((s) => g.includes(s.source) && !s.readable));
  if (missing.length === 0) return null;
  return `${info.name}: reduced view; not readable: ${missing.map((s) => `${s.source}: ${s.reason ?? 'unknown'}`).join('; ')}. Run 'hfi1-sdma doctor' for fixes.`;
}
