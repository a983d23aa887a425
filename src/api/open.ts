// Opening a backend from code, as the command line does: the live host (or a sysroot directory, or a snapshot
// file) through the read-only readers, or the emulator. The default never passes the emulator off as the host:
// `auto` with no hfi1 or hfi2 unit refuses (E_NO_DEVICE), as `health` does, unless `fallback: 'emu'` asks for the
// emulator there; the backend and every unit then say `emulated: true`.
import type { Backend, Unit, UnitInfo } from '../backend.js';
import { Hfi1SdmaError, usageError } from '../errors.js';
import { lookupUnit } from '../unit-id.js';
import { checkNumber, checkOneOf, checkOptions, checkSignal, checkText, shown } from './check.js';
import type { EmulatorOptions } from './emulator.js';
import { alias, remember } from './opened.js';

/** Where the numbers come from. */
export interface OpenBackendOptions {
  /**
   * `auto` (default): the host's units (or those under `sysroot`), E_NO_DEVICE when there is none; `hw`: the
   * host's readers even with no unit (the units appear in `units()` and the monitor's rounds once there are);
   * `emu`: the emulator.
   */
  backend?: 'auto' | 'hw' | 'emu';
  /** `emu`: with `backend: 'auto'` and no sysroot, run the emulator where the host has no unit; `none` (default): refuse. */
  fallback?: 'none' | 'emu';
  /**
   * Read under this directory instead of `/`, or a snapshot (`.tar.gz`, as `captureSnapshot` and `hfi1-sdma
   * snapshot` write): never the emulator, so it does not go with `backend: 'emu'` or `fallback: 'emu'`.
   */
  sysroot?: string;
  /** Only this unit: its number (hfi1_N or hfi2_N) or its name (`hfi2_0`); E_NO_DEVICE when there is none. */
  unit?: number | string;
  /** The emulator's host, for `backend: 'emu'` or `fallback: 'emu'` (E_USAGE otherwise: it would not be used). */
  emulator?: EmulatorOptions;
  /** Stops a long opening (the emulator's warm-up). */
  signal?: AbortSignal;
}

/**
 * An opened backend: the contract, saying whether its units are adapters. `await using b = await openBackend()`
 * closes it when the block is left, by an error too.
 */
export interface OpenedBackend extends Backend, AsyncDisposable {
  /** The units are the emulator's, an emulated sysroot's or a capture of one: not adapters (as on every UnitInfo). */
  readonly emulated: boolean;
}

const OPTIONS = ['backend', 'fallback', 'sysroot', 'unit', 'emulator', 'signal'] as const;

/** The options, checked alone and against each other; conflicting ones are E_USAGE. */
function checked(
  given: OpenBackendOptions | undefined,
): Required<Pick<OpenBackendOptions, 'backend' | 'fallback'>> & OpenBackendOptions {
  const o: OpenBackendOptions = checkOptions('openBackend', given, OPTIONS);
  const where = 'openBackend';
  const backend = o.backend === undefined ? 'auto' : checkOneOf(where, 'backend', o.backend, ['auto', 'hw', 'emu'] as const);
  const fallback = o.fallback === undefined ? 'none' : checkOneOf(where, 'fallback', o.fallback, ['none', 'emu'] as const);
  if (o.sysroot !== undefined) checkText(where, 'sysroot', o.sysroot, 'a directory or a snapshot file');
  if (o.unit !== undefined && typeof o.unit !== 'string') {
    checkNumber(where, 'unit', o.unit, { min: 0, integer: true, what: 'a unit number (the N of hfi1_N) or a name' });
  }
  if (typeof o.unit === 'string') checkText(where, 'unit', o.unit, 'a unit name (hfi1_0) or number');
  checkSignal(where, o.signal);
  if (o.emulator !== undefined && (o.emulator === null || typeof o.emulator !== 'object')) {
    throw usageError(`${where}: emulator must be the emulator's options (an object); got ${shown(o.emulator)}`);
  }
  if (backend === 'emu' && o.sysroot !== undefined) {
    throw usageError(
      `${where}: backend 'emu' runs the emulator, which reads no sysroot; to read ${JSON.stringify(o.sysroot)} use backend 'hw' or 'auto'`,
    );
  }
  if (fallback === 'emu' && backend !== 'auto') {
    throw usageError(`${where}: fallback 'emu' goes with backend 'auto' (backend '${backend}' never falls back)`);
  }
  if (fallback === 'emu' && o.sysroot !== undefined) {
    throw usageError(`${where}: a sysroot never falls back to the emulator; drop fallback 'emu' or the sysroot`);
  }
  if (o.emulator !== undefined && backend !== 'emu' && fallback !== 'emu') {
    throw usageError(
      `${where}: emulator options are used only with backend 'emu' or fallback 'emu'; backend '${backend}' reads the host`,
    );
  }
  return { ...o, backend, fallback };
}

/** The error of a selection that matches no unit, or several, in the library's terms; null when it matches one. */
function selectionError(infos: readonly UnitInfo[], id: number | string): Hfi1SdmaError | null {
  const hit = lookupUnit(infos, id);
  if ('ambiguous' in hit) {
    const names = hit.ambiguous.map((u) => u.name);
    return usageError(`openBackend: unit ${id} is ${names.join(' and ')} here; name the one you mean (unit: '${names.at(-1)}')`);
  }
  if ('none' in hit) {
    const have = infos.length ? `the units are ${infos.map((u) => u.name).join(', ')}` : 'there is no unit';
    const asked = typeof id === 'string' ? id : `hfi1_${id} or hfi2_${id}`;
    return new Hfi1SdmaError('E_NO_DEVICE', `openBackend: no unit ${asked}: ${have}`);
  }
  return null;
}

/** A backend restricted to one unit. */
function onlyUnit(b: OpenedBackend, id: number | string, infos: readonly UnitInfo[]): OpenedBackend {
  const err = selectionError(infos, id);
  if (err) throw err;
  const hit = lookupUnit(infos, id);
  const name = 'found' in hit ? hit.found.name : String(id);
  return {
    ...b,
    kind: b.kind,
    emulated: b.emulated,
    ...(b.recording ? { recording: b.recording } : {}),
    ...(b.origin ? { origin: b.origin } : {}),
    [Symbol.asyncDispose]: () => b.close(),
    units: async () => (await b.units()).filter((u) => u.name === name),
    unit: async (n): Promise<Unit> => {
      const u = await b.unit(n);
      if (u.info.name !== name) throw selectionError([u.info], id) ?? usageError(`only ${name} was opened (unit: '${name}')`);
      return u;
    },
    close: () => b.close(),
  };
}

/** The backend with `emulated` said, as every backend of this package says it, and closed when disposed of. */
function opened(b: Backend): OpenedBackend {
  const emulated = b.emulated ?? (b.kind === 'emu' || b.origin?.emulated === true);
  return Object.assign(b, { emulated, [Symbol.asyncDispose]: () => b.close() });
}

/** Open the backend `o` names. Close it when done: that releases the BAR mapping and removes an unpacked snapshot. */
export async function openBackend(options?: OpenBackendOptions): Promise<OpenedBackend> {
  const o = checked(options);
  o.signal?.throwIfAborted();
  const emulator = async () =>
    (await import('./emulator.js')).createEmuBackend({ ...o.emulator, ...(o.signal ? { signal: o.signal } : {}) });
  let b: OpenedBackend;
  if (o.backend === 'emu') b = await emulator();
  else {
    const { checkSysroot } = await import('../cli/backend-select.js');
    const sysroot = o.sysroot ?? '/';
    if (o.sysroot !== undefined && checkSysroot(sysroot, 'sysroot') === 'snapshot') {
      b = opened(await (await import('../snapshot/backend.js')).openSnapshotBackend(sysroot));
    } else {
      const { openHwBackend } = await import('../hw/index.js');
      b = opened(await openHwBackend({ sysroot }));
      if (o.backend === 'auto' && (await b.units()).length === 0) {
        await b.close();
        if (o.fallback === 'emu') b = await emulator();
        else throw noUnit(sysroot);
      }
    }
  }
  if (b.kind !== 'emu') remember(b, { kind: 'host', sysroot: o.sysroot ?? '/' });
  if (o.unit === undefined) return b;
  try {
    const one = onlyUnit(b, o.unit, await b.units());
    alias(one, b);
    return one;
  } catch (e) {
    await b.close();
    throw e;
  }
}

/** The refusal of `auto` on a host (or sysroot) with no unit, with the three ways on. */
function noUnit(sysroot: string): Hfi1SdmaError {
  const dir = sysroot === '/' ? '/sys/class/infiniband' : `${sysroot.replace(/\/+$/, '')}/sys/class/infiniband`;
  return new Hfi1SdmaError(
    'E_NO_DEVICE',
    `openBackend: no hfi1 or hfi2 unit under ${dir} (the driver is not loaded, or there is no adapter); ` +
      "backend: 'hw' opens the host all the same (units appear when the driver loads), backend: 'emu' runs the emulator, " +
      "fallback: 'emu' runs it only where there is no unit",
  );
}
