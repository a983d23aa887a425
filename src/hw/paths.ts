// Where each source of a unit lives under the sysroot (DESIGN.md "Sysroot"; §g.1, §h.1–§h.4, §f.7).
import { join } from 'node:path';

/** Paths of one unit's sources. */
export interface UnitPaths {
  classDir: string; // sys/class/infiniband/hfi1_<u> (§h.1)
  debugRoot: string; // sys/kernel/debug (§g.1)
  debugDir: string; // sys/kernel/debug/hfi1/hfi1_<u> (§g.1)
  sdes: string; // §g.2
  counterNames: string; // §g.4
  counters: string; // §g.4
  hwCounters: string; // §h.1
  interrupts: string; // proc/interrupts (§h.3)
  pciDir: string; // sys/bus/pci/devices/<bdf>
  resource0: string; // §f.7
  params: string; // sys/module/hfi1/parameters (§h.4)
  lockdown: string; // sys/kernel/security/lockdown
}

/** The class directory that lists RDMA devices. */
export function infinibandDir(sysroot: string): string {
  return join(sysroot, 'sys/class/infiniband');
}

/** Where the PCI devices are listed. */
export function pciDevicesDir(sysroot: string): string {
  return join(sysroot, 'sys/bus/pci/devices');
}

/** The paths of unit `name` (hfi1_<u>) at PCI address `pci` (empty when unknown). */
export function unitPaths(sysroot: string, name: string, pci: string): UnitPaths {
  const classDir = join(infinibandDir(sysroot), name);
  const debugRoot = join(sysroot, 'sys/kernel/debug');
  const debugDir = join(debugRoot, 'hfi1', name);
  const pciDir = pci === '' ? join(classDir, 'device') : join(pciDevicesDir(sysroot), pci);
  return {
    classDir,
    debugRoot,
    debugDir,
    sdes: join(debugDir, 'sdes'),
    counterNames: join(debugDir, 'counter_names'),
    counters: join(debugDir, 'counters'),
    hwCounters: join(classDir, 'hw_counters'),
    interrupts: join(sysroot, 'proc/interrupts'),
    pciDir,
    resource0: join(pciDir, 'resource0'),
    params: join(sysroot, 'sys/module/hfi1/parameters'),
    lockdown: join(sysroot, 'sys/kernel/security/lockdown'),
  };
}

/** An engine's sysfs directory (§h.2). */
export function engineDir(paths: UnitPaths, engine: number): string {
  return join(paths.classDir, `sdma${engine}`);
}
