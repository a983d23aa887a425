// The driver settings that decide which engines carry traffic (UnitInfo.settings), read once when a unit is opened:
// the module parameters use_bulksvc and bulksvc_* (the Cornelis hfi1's bulk service, bulksvc.c), num_sdma, num_vls
// and cap_mask (driver.c; its SDMA bit, HFI1_CAP_SDMA of common.h, is bit 1), and the engines the bulk service owns
// (hw_resources line `bulksvc.sde a-b`). Every file is optional; one that does not parse is a warning naming it.
import { join } from 'node:path';
import type { SourceWarning, UnitSettings } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { type HwFs, readdirOrNull } from './fsio.js';
import { parseBulkServiceEngines } from './parse/hw-resources.js';
import { escapeControls } from './parse/text.js';
import type { UnitPaths } from './paths.js';

/** HFI1_CAP_SDMA (common.h). */
const CAP_SDMA = 0x2n;

async function text(fs: HwFs, path: string): Promise<string | null> {
  try {
    return Buffer.from(await fs.readFile(path, 4096)).toString('utf8');
  } catch {
    return null;
  }
}

/** A parameter's text as shown: trimmed, at most 64 characters, control characters escaped (a file may hold anything). */
function shown(t: string): string {
  const v = t.trim();
  return escapeControls(v.length > 64 ? `${v.slice(0, 64)}…` : v);
}

/** Parse a module parameter as the kernel prints a bool (`Y`/`N`), or null when it is not one. */
export function paramBool(t: string): boolean | null {
  const v = t.trim();
  return v === 'Y' || v === '1' ? true : v === 'N' || v === '0' ? false : null;
}

/** Read the unit's settings; never fails. */
export async function readUnitSettings(fs: HwFs, p: UnitPaths): Promise<{ settings: UnitSettings; warnings: SourceWarning[] }> {
  const warnings: SourceWarning[] = [];
  const evidence: string[] = [];
  const bad = (path: string, what: string) =>
    warnings.push({ source: 'sysfs', path, key: `settings:${path}`, message: `${path}: ${what}; the setting is left out` });
  const param = async (name: string) => {
    const path = join(p.params, name);
    const t = await text(fs, path);
    if (t !== null) evidence.push(`${name} ${shown(t)} (${path})`);
    return { t, path };
  };
  const bulk = await param('use_bulksvc');
  let useBulksvc: boolean | null = null;
  if (bulk.t !== null) {
    useBulksvc = paramBool(bulk.t);
    if (useBulksvc === null) bad(bulk.path, 'not Y or N');
  }
  const bulksvc: Record<string, string> = {};
  for (const name of (await readdirOrNull(fs, p.params)) ?? []) {
    if (!/^bulksvc_[a-z0-9_]+$/.test(name)) continue;
    const t = await text(fs, join(p.params, name));
    if (t !== null) bulksvc[name] = shown(t);
  }
  const uint = async (name: string) => {
    const { t, path } = await param(name);
    if (t === null) return null;
    if (!/^\d{1,10}\n?$/.test(t)) {
      bad(path, 'not an unsigned integer');
      return null;
    }
    return Number(t);
  };
  const numSdma = await uint('num_sdma');
  const numVls = await uint('num_vls');
  const cap = await param('cap_mask');
  let capMask: string | null = null;
  let sdmaEnabled: boolean | null = null;
  if (cap.t !== null) {
    if (/^0x[0-9a-fA-F]{1,16}\n?$/.test(cap.t)) {
      capMask = cap.t.trim().toLowerCase();
      sdmaEnabled = (BigInt(capMask) & CAP_SDMA) !== 0n;
    } else bad(cap.path, "not a hexadecimal mask ('0x…')");
  }
  let bulkServiceEngines: number[] = [];
  const hw = await text(fs, p.hwResources);
  if (hw !== null) {
    try {
      const b = parseBulkServiceEngines(hw, p.hwResources);
      if (b) {
        bulkServiceEngines = b.engines;
        evidence.push(`bulksvc.sde ${b.engines[0]}-${b.engines[b.engines.length - 1]} (${p.hwResources} line ${b.line})`);
      }
    } catch (e) {
      if (!isHfi1SdmaError(e)) throw e;
      warnings.push({
        source: 'sysfs',
        path: p.hwResources,
        key: 'settings:bulksvc.sde',
        message: `${e.message}; the bulk service's engines are left out`,
      });
    }
  }
  return {
    settings: { useBulksvc, bulksvc, bulkServiceEngines, numSdma, numVls, capMask, sdmaEnabled, evidence },
    warnings,
  };
}
