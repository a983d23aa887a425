// Letting time pass between samples: wall time on a live host; on the emulator, its virtual
// clock is advanced by the same amount so that a watch shows traffic moving.
import type { Backend } from '../backend.js';
import type { Io } from './io.js';

/** A backend whose time can be advanced (the emulator). */
interface Advanceable {
  advanceMs(ms: number): void | Promise<void>;
}

function isAdvanceable(b: unknown): b is Advanceable {
  return typeof b === 'object' && b !== null && typeof (b as Partial<Advanceable>).advanceMs === 'function';
}

/** Wait `ms`: sleep on the wall clock, and advance an emulated backend's virtual time. */
export async function pace(backend: Backend, io: Io, ms: number): Promise<void> {
  await io.sleep(ms);
  if (isAdvanceable(backend)) await backend.advanceMs(ms);
}
