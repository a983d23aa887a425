// The unit's context (who the adapter, driver and host are) and its port's link, from the small
// files the RDMA core, the module loader, the PCI core and procfs show. All optional: a file that
// is absent or refuses the read (board_id fails with EINVAL when the board is unknown) is null.
import { join } from 'node:path';
import type { LinkState, PortLink, SourceWarning, UnitContext } from '../backend.js';
import { errnoCode, type HwFs, oddReason } from './fsio.js';
import { identityValue, parsePortRate, parsePortState } from './parse/link.js';
import type { UnitPaths } from './paths.js';
import type { WarningLog } from './warnings.js';

/** The most a one-value sysfs or procfs file holds (one page). */
export const CONTEXT_FILE_CAP_BYTES = 4096;

/** The files behind each context field, under the sysroot. */
export function contextFiles(p: UnitPaths): Record<keyof UnitContext, string> {
  return {
    kernelRelease: p.osrelease,
    driverVersion: join(p.moduleDir, 'version'),
    driverSrcversion: join(p.moduleDir, 'srcversion'),
    fwVer: join(p.classDir, 'fw_ver'),
    boardId: join(p.classDir, 'board_id'),
    hwRev: join(p.classDir, 'hw_rev'),
    serial: join(p.classDir, 'serial'),
    boardVersion: join(p.classDir, 'boardversion'),
    pciLinkSpeed: join(p.pciDir, 'current_link_speed'),
    pciLinkWidth: join(p.pciDir, 'current_link_width'),
  };
}

/** The port files behind LinkState, under the sysroot (port 1's, or those of `portDir`). */
export function linkFiles(p: UnitPaths, portDir = p.portDir): Record<keyof LinkState, string> {
  return { state: join(portDir, 'state'), physState: join(portDir, 'phys_state'), rate: join(portDir, 'rate') };
}

/** Why a present file cannot be used as the kernel's (not regular, too large, leads outside the tree), or null for an ordinary failure. */
function contextOddReason(e: unknown): string | null {
  if (errnoCode(e) === 'EFBIG') return `holds more than ${CONTEXT_FILE_CAP_BYTES} bytes: not the kernel's file`;
  return oddReason(e);
}

/** A small file's text, or null (with the reason when the file is there but is not the kernel's). */
async function readSmall(fs: HwFs, path: string): Promise<{ text: string | null; odd: string | null }> {
  try {
    return { text: Buffer.from(await fs.readFile(path, CONTEXT_FILE_CAP_BYTES)).toString('utf8'), odd: null };
  } catch (e) {
    return { text: null, odd: contextOddReason(e) };
  }
}

/** Read the unit's context once; never fails. Files there but not the kernel's become warnings. */
export async function readUnitContext(fs: HwFs, p: UnitPaths): Promise<{ context: UnitContext; warnings: SourceWarning[] }> {
  const files = contextFiles(p);
  const context = {} as Record<keyof UnitContext, string | null>;
  const warnings: SourceWarning[] = [];
  for (const [field, path] of Object.entries(files) as [keyof UnitContext, string][]) {
    const { text, odd } = await readSmall(fs, path);
    context[field] = text === null ? null : identityValue(text);
    if (odd !== null) {
      warnings.push({ source: 'sysfs', path, key: `context:${path}`, message: `${path}: ${odd}; ${field} is left out` });
    }
  }
  return { context, warnings };
}

/**
 * The port's link now. A file that is absent or unreadable is null; one that is there but
 * malformed (or not a regular file) is null with a warning naming it. Null when no file is there.
 */
export async function readLinkState(fs: HwFs, p: UnitPaths, log: WarningLog, portDir = p.portDir): Promise<LinkState | null> {
  const files = linkFiles(p, portDir);
  const parsers: Record<keyof LinkState, (text: string, file: string) => string> = {
    state: parsePortState,
    physState: parsePortState,
    rate: parsePortRate,
  };
  const out: LinkState = { state: null, physState: null, rate: null };
  let present = false;
  for (const field of ['state', 'physState', 'rate'] as const) {
    const path = files[field];
    const { text, odd } = await readSmall(fs, path);
    if (odd !== null) {
      present = true;
      log.add({ source: 'sysfs', path, key: `link:${path}`, message: `${path}: ${odd}; the link's ${field} is left out` });
      continue;
    }
    if (text === null) continue;
    present = true;
    try {
      out[field] = parsers[field](text, path);
    } catch (e) {
      log.leftOut('sysfs', path, `link:${path}`, e, `the link's ${field} is left out`);
    }
  }
  return present ? out : null;
}

/** The port numbers among a unit's `ports/` entries (1 and 2 on a CN5000), ascending; [1] when none is listed. */
export function portNumbers(entries: readonly string[]): number[] {
  const ports = entries.filter((n) => /^[1-9][0-9]?$/.test(n)).map(Number);
  return ports.length === 0 ? [1] : [...new Set(ports)].sort((a, b) => a - b);
}

/** Every port's link now (ports/<p>/ for each listed port); a port with no file there is left out. */
export async function readPortLinks(fs: HwFs, p: UnitPaths, entries: readonly string[], log: WarningLog): Promise<PortLink[]> {
  const out: PortLink[] = [];
  for (const port of portNumbers(entries)) {
    const l = await readLinkState(fs, p, log, join(p.classDir, 'ports', String(port)));
    if (l) out.push({ port, ...l });
  }
  return out;
}
