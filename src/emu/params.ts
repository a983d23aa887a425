// Module parameters the emulator takes as `--param NAME=VALUE` and what they change: the Cornelis hfi1's bulk service
// (use_bulksvc and the bulksvc_* parameters of bulksvc.c), num_vls and cap_mask (driver.c). Parsing is pure; a value
// the driver would refuse, or a parameter the chosen build does not have, is a usage error naming what it takes.
//
// The bulk service, as the Cornelis hfi1 sets it up (hfi1_alloc_devdata, init.c; hfi1_bulksvc_init,
// hfi1_bulksvc_loan_resources, bulksvc.c): never on a WFR chip (the driver only notes it at debug level); on a JKR it
// takes the last bulksvc_num_sdma engines of the unit (dd->rsrcs.last_sdma_engine moves down to the first of them),
// provided num_vls engines are left for SDMA. Where the driver cannot have them it fails the probe and the adapter is
// not registered at all: the emulator, which models a registered unit, refuses that setting as a usage error that
// quotes the driver's line. With the service on, verbs traffic is carried by it: the emulator sends a QP's packets
// larger than BULKSVC_MIN_BYTES through it, off SDMA (a choice: Cornelis describes the service as taking verbs
// messages over 2 KB; its selection rule is not in the public sources).
import type { UnitSettings } from '../backend.js';
import { usageError } from '../errors.js';
import { SEND_DMA_MEM_SIZE_OBSERVED } from '../progress/constants.js';
import { KERN_ERR, KERN_INFO } from './host.js';

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

/** A line the driver logs while setting the bulk service up: its printk level, text, and whether dd_dev_* prints it (the unit's prefix). */
export interface BulkLogLine {
  level: number;
  text: string;
  device: boolean;
}

/** What the bulk service takes: its engines (absolute) and the lines the driver logs at probe. */
export interface BulkService {
  engines: number[];
  log: BulkLogLine[];
}

/** What the bulk service's set-up looks at. */
export interface BulkServiceHost {
  chip: 'wfr' | 'jkr';
  /** The unit's engine window. */
  first: number;
  count: number;
  /** The num_vls module parameter (not capped by the engine count). */
  numVls: number;
  ports: number;
  unit: number;
}

/** SDMA_BLOCK_SIZE (sdma.h): the unit of the engines' memory the credit check of hfi1_bulksvc_init counts in. */
const SDMA_BLOCK_SIZE = 64;
/** The chip's receive contexts (chip_rcv_contexts: 160). */
const CHIP_RCV_CONTEXTS = 160;
/** __LINE__ of the dd_dev_err calls of hfi1_bulksvc_loan_resources in the Cornelis release read (bulksvc.c). */
const LINE_NOT_ENOUGH_SDMA = 259;
const LINE_NOT_ENOUGH_PORTS = 293;

function probeFails(p: EmuParams, why: string, driverLine: string, fix: string): never {
  throw usageError(
    `--param use_bulksvc=Y with bulksvc_num_sdma ${p.bulksvcNumSdma}: the Cornelis hfi1 would fail the probe of this adapter (${why}); it logs "${driverLine}" and registers no unit. ${fix}`,
  );
}

/**
 * The bulk service of a Cornelis hfi1 unit with use_bulksvc=Y (hfi1_alloc_devdata and init_one, init.c;
 * hfi1_bulksvc_init and hfi1_bulksvc_loan_resources, bulksvc.c): none on WFR; on a JKR the last bulksvc_num_sdma
 * engines of the window and the lines the driver logs, `Bulksvc configured to run on CPU %d` (the unit's CPU on its
 * node, the first CPU counted from 0), `Not enough ports to enable bulk service (1)` on a one-port adapter (the
 * service keeps its engines) and pr_info's `Bulksvc configured to be event driven`. A setting the driver cannot take
 * fails the probe: a usage error.
 */
export function bulkService(p: EmuParams, h: BulkServiceHost): BulkService {
  if (!p.useBulksvc || h.chip === 'wfr') return { engines: [], log: [] };
  const credits = Number(p.bulksvc.bulksvc_per_sdma_credits);
  const rctx = Number(p.bulksvc.bulksvc_num_rctx);
  const blocks = SEND_DMA_MEM_SIZE_OBSERVED / SDMA_BLOCK_SIZE;
  if (!(credits < blocks && rctx < CHIP_RCV_CONTEXTS)) {
    throw usageError(
      `--param use_bulksvc=Y: the Cornelis hfi1 fails the probe of this adapter: hfi1_bulksvc_init takes bulksvc_per_sdma_credits below ${blocks} (the engines' memory in ${SDMA_BLOCK_SIZE}-byte blocks) and bulksvc_num_rctx below ${CHIP_RCV_CONTEXTS} (the chip's receive contexts), got ${credits} and ${rctx}`,
    );
  }
  const n = p.bulksvcNumSdma;
  const most = h.count - h.numVls;
  const fix = most >= 1 ? `Give bulksvc_num_sdma from 1 to ${most}, or a smaller num_vls.` : `Give a num_vls below ${h.count}.`;
  if (n === 0 || n > h.count) {
    probeFails(
      p,
      `init_one: the service needs 1 to ${h.count} engines`,
      `bulksvc requires ${n} SDMA engines, but only ${h.count} available`,
      fix,
    );
  }
  if (h.count - n < h.numVls) {
    probeFails(
      p,
      `hfi1_bulksvc_loan_resources: it would leave fewer than num_vls (${h.numVls}) of the ${h.count} engines to SDMA`,
      `bulksvc.c:${LINE_NOT_ENOUGH_SDMA}:hfi1_bulksvc_loan_resources() Not enough sdma engines(${h.count}) to cover VLs(${h.numVls}) and enable hfisvc (${n})`,
      fix,
    );
  }
  const log: BulkLogLine[] = [{ level: KERN_INFO, text: `Bulksvc configured to run on CPU ${h.unit}`, device: true }];
  if (h.ports < 2) {
    log.push({
      level: KERN_ERR,
      text: `bulksvc.c:${LINE_NOT_ENOUGH_PORTS}:hfi1_bulksvc_loan_resources() Not enough ports to enable bulk service (${h.ports})`,
      device: true,
    });
  }
  log.push({ level: KERN_INFO, text: 'Bulksvc configured to be event driven', device: false });
  return { engines: Array.from({ length: n }, (_, i) => h.first + h.count - n + i), log };
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
