// Host-wide facts `doctor` reports besides the per-unit sources: privileges, debugfs, lockdown,
// the iomem= boot option (pci_mmap_resource, drivers/pci; the hfi1 debugfs tree, debugfs.c).
import { join } from 'node:path';
import { type HwFs, hwFsFor, readTextOrNull } from './fsio.js';
import { lockdownMode } from './sources.js';

/** What the host says about reading hfi1 sources. */
export interface HostFacts {
  /** Effective uid is 0 (null where the platform has no uids). */
  root: boolean | null;
  /** sys/kernel/debug lists something (debugfs mounted); null when it cannot be listed. */
  debugfsMounted: boolean | null;
  /** Kernel lockdown mode (`none`, `integrity`, `confidentiality`), or null when unknown. */
  lockdown: string | null;
  /** The kernel command line has iomem=relaxed; null when proc/cmdline is not readable. */
  iomemRelaxed: boolean | null;
}

/** Gather the host facts under a sysroot. */
export async function hostFacts(
  sysroot: string,
  fs: HwFs = hwFsFor(sysroot),
  euid: number | null = process.geteuid?.() ?? null,
): Promise<HostFacts> {
  const debugRoot = join(sysroot, 'sys/kernel/debug');
  let debugfsMounted: boolean | null;
  try {
    debugfsMounted = (await fs.readdir(debugRoot)).length > 0;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    debugfsMounted = code === 'ENOENT' ? false : null; // EACCES: mounted or not, we cannot tell
  }
  const cmdline = await readTextOrNull(fs, join(sysroot, 'proc/cmdline')).catch(() => null);
  return {
    root: euid === null ? null : euid === 0,
    debugfsMounted,
    lockdown: await lockdownMode(fs, join(sysroot, 'sys/kernel/security/lockdown')),
    iomemRelaxed: cmdline === null ? null : /(^|\s)iomem=relaxed(\s|$)/.test(cmdline),
  };
}
