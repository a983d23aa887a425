// The options that name what kind of unit is meant: `--chip`, `--driver`, `--ports` (with the emulator's
// `--active-ports`) and the engine window `--engines N|A-B`. One meaning each: the emulator renders that unit;
// decode, fit and log read descriptors and ring arithmetic as that chip and driver build would.
import type { Argv } from 'yargs';
import type { ChipKind, DriverBuild } from '../backend.js';
import { usageError } from '../errors.js';
import { CHIP_NAMES, isChipName } from '../progress/chip.js';
import { DRIVER_NAMES, isDriverName } from '../progress/driver.js';

/** Engines of one chip: absolute indexes 0 to 15 (TXE_NUM_SDMA_ENGINES, chip.h). */
export const CHIP_ENGINES = 16;

/** The flavour options, parsed (undefined: not given). */
export interface FlavourOptions {
  engines: number | undefined;
  firstEngine: number | undefined;
  chip: ChipKind | undefined;
  driver: DriverBuild | undefined;
  ports: number | undefined;
  /** `--active-ports LIST`: the emulated ports in use (the others stay down). */
  activePorts: number[] | undefined;
}

/** Declare --chip, --driver and --ports in the Emulator group (no defaults: "not given" is meaningful). */
export function flavourOptions(y: Argv): Argv {
  return y
    .option('chip', {
      type: 'string',
      describe:
        'the chip: wfr (Omni-Path 100) or jkr (CN5000); the emulator renders it, decode and log read descriptors as it lays them out (default: the unit found, else wfr)',
      global: true,
      group: 'Emulator:',
    })
    .option('driver', {
      type: 'string',
      describe:
        'the driver build: upstream, cornelis or hfi2; the emulator renders it, fit counts as it does (default: the unit found, else upstream)',
      global: true,
      group: 'Emulator:',
    })
    .option('ports', { type: 'string', describe: 'emulator: ports of the adapter, 1 or 2', global: true, group: 'Emulator:' })
    .option('active-ports', {
      type: 'string',
      describe: 'emulator: the ports in use, e.g. 2 (a CN5000 cabled on port 2: port 1 stays DOWN, Disabled); default every port',
      global: true,
      group: 'Emulator:',
    });
}

/** `--engines N` (engines 0..N−1) or `--engines A-B` (the absolute window A..B, inclusive, within 0..15). */
export function parseEnginesArg(raw: unknown): { engines: number; firstEngine: number } {
  const s = String(raw ?? '').trim();
  const forms = `N (engines 0 to N-1, N from 1 to ${CHIP_ENGINES}) or A-B (engines A to B inclusive, 0 <= A <= B <= ${CHIP_ENGINES - 1})`;
  const count = /^(\d+)$/.exec(s);
  if (count) {
    const n = Number(count[1]);
    if (n < 1 || n > CHIP_ENGINES) throw usageError(`--engines ${s}: expected ${forms}`);
    return { engines: n, firstEngine: 0 };
  }
  const range = /^(\d+)-(\d+)$/.exec(s);
  if (range) {
    const a = Number(range[1]);
    const b = Number(range[2]);
    if (a > b || b > CHIP_ENGINES - 1) throw usageError(`--engines ${s}: expected ${forms}`);
    return { engines: b - a + 1, firstEngine: a };
  }
  throw usageError(`--engines expects ${forms}, got ${JSON.stringify(raw)}`);
}

/** The --chip value, or a usage error naming the choices. */
export function parseChipArg(raw: unknown): ChipKind {
  const s = String(raw ?? '').toLowerCase();
  if (isChipName(s)) return s;
  throw usageError(`--chip must be one of ${CHIP_NAMES.join(', ')}, got ${JSON.stringify(raw)}`);
}

/** The --driver value, or a usage error naming the choices. */
export function parseDriverArg(raw: unknown): DriverBuild {
  const s = String(raw ?? '').toLowerCase();
  if (isDriverName(s)) return s;
  throw usageError(`--driver must be one of ${DRIVER_NAMES.join(', ')}, got ${JSON.stringify(raw)}`);
}

/** The --ports value: 1 or 2. */
export function parsePortsArg(raw: unknown): number {
  const s = String(raw ?? '').trim();
  if (s === '1' || s === '2') return Number(s);
  throw usageError(`--ports must be 1 or 2 (an adapter has one or two ports), got ${JSON.stringify(raw)}`);
}

/** The --active-ports value: port numbers joined by commas (`2`, `1,2`); which ports exist is the emulator's to check. */
export function parseActivePortsArg(raw: unknown): number[] {
  if (Array.isArray(raw)) throw usageError(`--active-ports was given ${raw.length} times (${raw.join(', ')}); give it once`);
  const s = String(raw ?? '').trim();
  if (!/^[1-9]\d*(,[1-9]\d*)*$/.test(s)) {
    throw usageError(`--active-ports expects port numbers joined by commas (e.g. 2, or 1,2), got ${JSON.stringify(raw)}`);
  }
  return s.split(',').map(Number);
}

/** Parse the flavour options of the parsed arguments (yargs' camel-cased keys). */
export function flavourGlobals(args: Record<string, unknown>): FlavourOptions {
  const window = args.engines === undefined ? undefined : parseEnginesArg(args.engines);
  return {
    engines: window?.engines,
    firstEngine: window?.firstEngine,
    chip: args.chip === undefined ? undefined : parseChipArg(args.chip),
    driver: args.driver === undefined ? undefined : parseDriverArg(args.driver),
    ports: args.ports === undefined ? undefined : parsePortsArg(args.ports),
    activePorts: args.activePorts === undefined ? undefined : parseActivePortsArg(args.activePorts),
  };
}
