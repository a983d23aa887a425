// Opening a backend from code, as the command line does: the live host (or a sysroot directory, or a snapshot
// file) through the read-only readers, or the emulator; `auto` reads the host when it has an hfi1 or hfi2 unit
// and runs the emulator otherwise (the backend's `kind` says which).
import type { Backend, Unit, UnitInfo } from '../backend.js';
import { usageError } from '../errors.js';
import { selectionError } from '../monitor/monitor.js';
import { lookupUnit } from '../unit-id.js';
import type { EmulatorOptions } from './emulator.js';

/** Where the numbers come from. */
export interface OpenBackendOptions {
  /** `hw` the host (or `sysroot`), `emu` the emulator, `auto` (default) the host when it has a unit, else the emulator. */
  backend?: 'auto' | 'hw' | 'emu';
  /** Read under this directory instead of `/`, or a snapshot (`.tar.gz`, as `hfi1-sdma snapshot` writes). Never falls back. */
  sysroot?: string;
  /** Only this unit: its number (hfi1_N or hfi2_N) or its name (`hfi2_0`); E_NO_DEVICE when there is none. */
  unit?: number | string;
  /** The emulator's host, for `emu` (and `auto` falling back). */
  emulator?: EmulatorOptions;
  /** Stops a long opening (the emulator's warm-up). */
  signal?: AbortSignal;
}

/** A backend restricted to one unit. */
function onlyUnit(b: Backend, id: number | string, infos: readonly UnitInfo[]): Backend {
  const err = selectionError(infos, id);
  if (err) throw err;
  const hit = lookupUnit(infos, id);
  const name = 'found' in hit ? hit.found.name : String(id);
  return {
    ...b,
    kind: b.kind,
    ...(b.recording ? { recording: b.recording } : {}),
    ...(b.origin ? { origin: b.origin } : {}),
    units: async () => (await b.units()).filter((u) => u.name === name),
    unit: async (n): Promise<Unit> => {
      const u = await b.unit(n);
      if (u.info.name !== name) throw selectionError([u.info], id) ?? usageError(`only ${name} was opened`);
      return u;
    },
    close: () => b.close(),
  };
}

/** Open the backend `o` names. Close it when done. */
export async function openBackend(o: OpenBackendOptions = {}): Promise<Backend> {
  o.signal?.throwIfAborted();
  const kind = o.backend ?? 'auto';
  if (kind !== 'auto' && kind !== 'hw' && kind !== 'emu')
    throw usageError(`backend must be auto, hw or emu, got ${JSON.stringify(kind)}`);
  let b: Backend;
  const emulator = async () =>
    (await import('./emulator.js')).createEmuBackend({ ...o.emulator, ...(o.signal ? { signal: o.signal } : {}) });
  if (kind === 'emu') b = await emulator();
  else {
    const { checkSysroot } = await import('../cli/backend-select.js');
    const sysroot = o.sysroot ?? '/';
    const named = o.sysroot !== undefined && o.sysroot !== '';
    if (named && checkSysroot(sysroot) === 'snapshot') {
      b = await (await import('../snapshot/backend.js')).openSnapshotBackend(sysroot);
    } else {
      const { findUnits, openHwBackend } = await import('../hw/index.js');
      if (kind === 'hw' || named || (await findUnits(sysroot)).length > 0) b = await openHwBackend({ sysroot });
      else b = await emulator();
    }
  }
  if (o.unit === undefined) return b;
  try {
    return onlyUnit(b, o.unit, await b.units());
  } catch (e) {
    await b.close();
    throw e;
  }
}
