// The live-host backend. (Discovery, parsers and the BAR window arrive with the hw backend.)
import type { Backend, UnitInfo } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';

/** Options of the live-host backend. */
export interface HwOptions {
  /** Prefix under which sys/, proc/ and sys/kernel/debug are read; `/` on a live host. */
  sysroot: string;
}

/** hfi1 units under the sysroot; empty when there are none. */
export async function findUnits(_sysroot: string): Promise<UnitInfo[]> {
  return [];
}

/** Open the live-host backend. */
export async function openHwBackend(_opts: HwOptions): Promise<Backend> {
  throw new Hfi1SdmaError('E_UNAVAILABLE', 'the live-host backend is not available in this build; use --backend emu');
}
