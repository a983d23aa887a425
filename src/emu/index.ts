// The emulated backend. (The engine and chip model arrive with the emulator.)
import type { Backend } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';

/** Emulator options as the CLI passes them (DESIGN.md, "Emulator options"). */
export interface EmuCliOptions {
  seed: number;
  engines: number | undefined;
  descqCnt: number | undefined;
  workload: string | undefined;
  atMs: number | undefined;
  fault: string[];
}

/** Create the emulated backend. */
export function createEmuBackend(_opts: EmuCliOptions): Backend {
  throw new Hfi1SdmaError('E_UNAVAILABLE', 'the emulator is not available in this build');
}
