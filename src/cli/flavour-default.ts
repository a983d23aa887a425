// Where decode, fit and log take the chip or driver build from when --chip/--driver is not given: the
// unit the backend finds (--unit, else the first), and only when there is one; else the upstream default.
import type { Backend, UnitFlavour, UnitInfo } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import type { CliContext, GlobalOptions } from './context.js';
import { selectedUnits } from './units.js';

/** A value and where it came from, for the note the text output prints. */
export interface Chosen<T> {
  value: T;
  /** `option` (--chip/--driver), `unit` (the unit's flavour) or `default`. */
  from: 'option' | 'unit' | 'default';
  /** The unit's name when `from` is `unit`. */
  unit?: string;
  /** Why the default applies when `from` is `default` (default: no unit was found). */
  why?: string;
}

/** The note after a chosen value: `(--chip)`, `(the flavour of hfi2_0)`, `(default; no unit found)`. */
export function chosenNote(c: Chosen<unknown>, flag: string): string {
  if (c.from === 'option') return `(${flag})`;
  if (c.from === 'unit') return `(from ${c.unit}; ${flag} to choose)`;
  return `(default: ${c.why ?? 'no unit found'}; ${flag} to choose)`;
}

/** True when the user named a backend: --backend hw|emu, --sysroot (or its environment variable), or --unit. */
export function backendNamed(global: GlobalOptions): boolean {
  return global.backend !== 'auto' || (global.sysroot !== undefined && global.sysroot !== '') || global.unit !== undefined;
}

/** The flavour of the unit `--unit` (else the first) names on an open backend, with its name. */
export async function unitFlavourOn(backend: Backend, unit: number | string | undefined): Promise<UnitInfo | null> {
  const [u] = await selectedUnits(backend, unit);
  return u?.info ?? null;
}

/**
 * The flavour of the unit the selected backend finds, or null when it finds none. A backend the user named must
 * open, and its --unit must exist (those errors are the command's); the host looked at by default may not open.
 */
export async function foundFlavour(ctx: CliContext): Promise<{ name: string; flavour: UnitFlavour } | null> {
  const named = backendNamed(ctx.global);
  let backend: Backend;
  try {
    backend = await ctx.openBackend();
  } catch (e) {
    if (!named && isHfi1SdmaError(e)) return null;
    throw e;
  }
  try {
    // No unit at all (a host without an adapter, an empty sysroot): nothing to take a default from.
    if ((await backend.units()).length === 0) return null;
    const info = await unitFlavourOn(backend, ctx.global.unit);
    return info ? { name: info.name, flavour: info.flavour } : null;
  } catch (e) {
    if (!named && isHfi1SdmaError(e)) return null;
    throw e;
  } finally {
    await backend.close();
  }
}

/** The chip of the unit --unit (else the first) names in a sysroot directory, from its PCI identity alone; null otherwise. */
async function chipOnly(ctx: CliContext): Promise<{ name: string; chip: UnitFlavour['chip'] } | null> {
  const sysroot = ctx.global.sysroot;
  if (ctx.global.backend === 'emu' || sysroot === undefined || /\.(tar\.gz|tgz)$/.test(sysroot)) return null;
  try {
    const { discoverUnits } = await import('../hw/discover.js');
    const units = await discoverUnits(sysroot, undefined, { chipOnly: true });
    const want = ctx.global.unit;
    const u = units.find((x) => want === undefined || x.name === want || x.unit === want);
    return u ? { name: u.name, chip: u.chip } : null;
  } catch {
    return null;
  }
}

/** Pick a flavour field: the option when given, else the found unit's, else `fallback`. */
export async function chooseFlavour<K extends 'chip' | 'driver'>(
  ctx: CliContext,
  key: K,
  fallback: UnitFlavour[K],
): Promise<Chosen<UnitFlavour[K]>> {
  const given = ctx.global[key] as UnitFlavour[K] | undefined;
  if (given !== undefined) return { value: given, from: 'option' };
  let found: Awaited<ReturnType<typeof foundFlavour>>;
  try {
    found = await foundFlavour(ctx);
  } catch (e) {
    // The chip is the PCI device's: a malformed ring size or engine window elsewhere in the tree does not hide it.
    const chip = key === 'chip' && isHfi1SdmaError(e) && e.code === 'E_PARSE' ? await chipOnly(ctx) : null;
    if (chip === null) throw e;
    return { value: chip.chip as UnitFlavour[K], from: 'unit', unit: chip.name };
  }
  if (found) return { value: found.flavour[key], from: 'unit', unit: found.name };
  return { value: fallback, from: 'default' };
}
