// The context a support engineer needs beside the SDMA files (what opacapture gathers), all
// optional and read-only: the kernel and its command line, the hfi1/hfi2 module, the adapter's PCI
// identity and link, the RDMA core's device and port files, qp_stats, the kernel log.
import { join } from 'node:path';
import type { FoundUnit } from '../hw/discover.js';
import { formatBytes } from '../hw/read-file.js';
import { CONTEXT_CAP_BYTES } from './format.js';

/** The PCI device files that identify the adapter and its link (the PCI core's sysfs attributes). */
export const PCI_IDENTITY = [
  'subsystem_vendor',
  'subsystem_device',
  'revision',
  'class',
  'current_link_speed',
  'current_link_width',
  'max_link_speed',
  'max_link_width',
] as const;

/** The RDMA core's device files that name the adapter (fw_ver, board_id, hw_rev) and the driver's (serial, boardversion). */
export const DEVICE_IDENTITY = ['fw_ver', 'board_id', 'hw_rev', 'serial', 'boardversion'] as const;

/** The port files, read at every instant: a link can drop between two. */
export const PORT_FILES = ['state', 'phys_state', 'rate'] as const;

/** Context files that do not change while the driver is loaded: captured with the first instant. */
export function onceContextFiles(sysroot: string, units: readonly FoundUnit[]): string[] {
  const out = [join(sysroot, 'proc/sys/kernel/osrelease'), join(sysroot, 'proc/cmdline')];
  for (const dir of new Set(units.map((u) => u.paths.moduleDir))) out.push(join(dir, 'version'), join(dir, 'srcversion'));
  for (const u of units) {
    out.push(...PCI_IDENTITY.map((f) => join(u.paths.pciDir, f)));
    out.push(...DEVICE_IDENTITY.map((f) => join(u.paths.classDir, f)));
  }
  return out;
}

/** Context files of one unit captured at every instant: every port's link files and debugfs qp_stats. */
export function everyContextFiles(u: FoundUnit): string[] {
  const ports = u.flavourInputs.ports.filter((n) => /^[1-9][0-9]?$/.test(n));
  const dirs = ports.length === 0 ? [u.paths.portDir] : ports.map((n) => join(u.paths.classDir, 'ports', n));
  return [...dirs.flatMap((d) => PORT_FILES.map((f) => join(d, f))), join(u.paths.debugDir, 'qp_stats')];
}

/** The bytes the context files may still add; once spent, each further one is left out with why. */
export class ContextBudget {
  private usedBytes = 0;

  constructor(private readonly capBytes = CONTEXT_CAP_BYTES) {}

  /** Null when `bytes` more fit (and counts them), else the reason the file is left out. */
  take(bytes: number): string | null {
    if (this.usedBytes + bytes > this.capBytes) {
      return `left out: the context files of this snapshot reached their cap of ${formatBytes(this.capBytes)} (the SDMA files are captured regardless); capture fewer --samples to keep more of them`;
    }
    this.usedBytes += bytes;
    return null;
  }
}
