// Module parameters the emulator takes as `--param NAME=VALUE` and what they change: the Cornelis hfi1's bulk service
// (use_bulksvc and the bulksvc_* parameters of bulksvc.c), num_vls and cap_mask (driver.c). Parsing is pure; a value
// the driver would refuse, or a parameter the chosen build does not have, is a usage error naming what it takes.
//
// The bulk service (hfi1_bulksvc_loan_resources, bulksvc.c) takes the last bulksvc_num_sdma engines of the unit
// (dd->rsrcs.last_sdma_engine moves down to the first of them) provided num_vls engines are left for SDMA; else the
// driver logs that it has not enough engines and runs without it. With it, verbs traffic is carried by the bulk
// service: the emulator sends a QP's packets larger than BULKSVC_MIN_BYTES through it, off SDMA (a choice: Cornelis
// describes the service as taking verbs messages over 2 KB; its selection rule is not in the public sources).
import type { UnitSettings } from '../backend.js';
import { usageError } from '../errors.js';

/** A QP packet larger than this goes through the bulk service when it is on. */
export const BULKSVC_MIN_BYTES = 2048;

/** The bulk-service parameters with their defaults as the driver shows them (bulksvc.c module_param). */
export const BULKSVC_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({
  bulksvc_num_sdma: '4',
  bulksvc_per_sdma_credits: '392',
  bulksvc_num_sctx: '2',
  bulksvc_num_rctx: '2',
  bulksvc_user_queue_size_pages_log2: '3',
  bulksvc_progress_interval: '1000',
});

/** HFI1_CAP_SDMA (common.h): bit 1 of cap_mask. */
export const CAP_SDMA = 0x2;

/** The parameters `--param` takes. */
export const PARAM_NAMES: readonly string[] = ['use_bulksvc', ...Object.keys(BULKSVC_DEFAULTS), 'num_vls', 'cap_mask'];

/** What the parameters set. */
export interface EmuParams {
  useBulksvc: boolean;
  /** The bulk-service parameters as the driver shows them (defaults filled in). */
  bulksvc: Record<string, string>;
  bulksvcNumSdma: number;
  numVls: number | undefined;
  capMask: number | undefined;
}

function bool(name: string, v: string): boolean {
  if (/^(y|Y|1)$/.test(v)) return true;
  if (/^(n|N|0)$/.test(v)) return false;
  throw usageError(`--param ${name}=${v}: ${name} is a bool: Y or N (1 or 0)`);
}

function uint(name: string, v: string, lo: number, hi: number): number {
  const n = /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!(n >= lo && n <= hi)) throw usageError(`--param ${name}=${v}: ${name} is an integer from ${lo} to ${hi}`);
  return n;
}

/** Parse `NAME=VALUE` settings (repeatable `--param`); a name given twice or unknown is a usage error. */
export function parseParams(list: readonly string[]): EmuParams {
  const seen = new Map<string, string>();
  for (const raw of list) {
    const m = /^([a-z_0-9]+)=(.*)$/.exec(raw.trim());
    if (!m) throw usageError(`--param ${JSON.stringify(raw)}: expected NAME=VALUE, e.g. use_bulksvc=Y`);
    const [, name = '', value = ''] = m;
    if (!PARAM_NAMES.includes(name)) {
      throw usageError(`--param ${name}: the emulator takes ${PARAM_NAMES.join(', ')}`);
    }
    if (seen.has(name)) throw usageError(`--param ${name} was given twice (${seen.get(name)}, ${value}); give it once`);
    seen.set(name, value);
  }
  const bulksvc: Record<string, string> = { ...BULKSVC_DEFAULTS };
  for (const name of Object.keys(BULKSVC_DEFAULTS)) {
    const v = seen.get(name);
    if (v !== undefined) bulksvc[name] = String(uint(name, v, 0, 0xffff_ffff));
  }
  const vls = seen.get('num_vls');
  const cap = seen.get('cap_mask');
  let capMask: number | undefined;
  if (cap !== undefined) {
    capMask = /^0x[0-9a-fA-F]{1,12}$/.test(cap) ? Number(cap) : /^\d{1,15}$/.test(cap) ? Number(cap) : Number.NaN;
    if (Number.isNaN(capMask)) throw usageError(`--param cap_mask=${cap}: cap_mask is a number (0x… or decimal)`);
  }
  return {
    useBulksvc: seen.has('use_bulksvc') ? bool('use_bulksvc', seen.get('use_bulksvc') as string) : false,
    bulksvc,
    bulksvcNumSdma: Number(bulksvc.bulksvc_num_sdma),
    numVls: vls === undefined ? undefined : uint('num_vls', vls, 1, 8),
    capMask,
  };
}

/** Refuse the bulk service on a build that has none (only the Cornelis hfi1 has use_bulksvc). */
export function checkParamsForBuild(p: EmuParams, driver: string, given: readonly string[]): void {
  if (driver === 'cornelis') return;
  const bulk = given.find((g) => /^(use_bulksvc|bulksvc_)/.test(g.trim()));
  if (bulk) {
    throw usageError(
      `--param ${bulk.trim()}: the bulk service is a parameter of the Cornelis hfi1 build only; use --driver cornelis (${driver} has no use_bulksvc)`,
    );
  }
  void p;
}

/**
 * The engines the bulk service takes from a window of `count` engines from `first` (the last bulksvc_num_sdma), or
 * null with the driver's complaint when it cannot have them (fewer than num_vls engines would be left for SDMA).
 */
export function bulkServiceEngines(
  p: EmuParams,
  first: number,
  count: number,
  numVls: number,
): { engines: number[] } | { refused: string } {
  const n = p.bulksvcNumSdma;
  if (n === 0 || n > count || count - n < numVls) {
    return {
      refused: `bulksvc.c:hfi1_bulksvc_loan_resources() Not enough sdma engines(${count}) to cover VLs(${numVls}) and enable hfisvc (${n})`,
    };
  }
  return { engines: Array.from({ length: n }, (_, i) => first + count - n + i) };
}

/** The settings a unit shows (UnitSettings) from its parameters, bulk engines and build. */
export function emuSettings(o: {
  driver: string;
  params: EmuParams;
  bulkEngines: readonly number[];
  engines: number;
  numVls: number;
  capMask: number;
  given: readonly string[];
}): UnitSettings {
  const cornelis = o.driver === 'cornelis';
  const given = o.given.length > 0 ? ` --param ${o.given.map((g) => g.trim()).join(' --param ')}` : '';
  return {
    useBulksvc: cornelis ? o.params.useBulksvc : null,
    bulksvc: cornelis ? { ...o.params.bulksvc } : {},
    bulkServiceEngines: [...o.bulkEngines],
    numSdma: o.engines === 16 ? 0 : o.engines,
    numVls: o.numVls,
    capMask: `0x${o.capMask.toString(16)}`,
    sdmaEnabled: (o.capMask & CAP_SDMA) !== 0,
    evidence: [`the emulator (--driver ${o.driver}${given})`],
  };
}
