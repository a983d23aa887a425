// Where each source of a unit lives under the sysroot: the same paths as on a live host.
import { join } from 'node:path';

/** Paths of one unit's sources. */
export interface UnitPaths {
  classDir: string; // sys/class/infiniband/hfi1_<u> (the hfi1 sysfs attributes, sysfs.c)
  debugRoot: string; // sys/kernel/debug (the hfi1 debugfs tree, debugfs.c)
  debugDir: string; // sys/kernel/debug/hfi1/hfi1_<u> (the hfi1 debugfs tree, debugfs.c)
  sdes: string; // sdma_seqfile_dump_sde, sdma.c
  counterNames: string; // the debugfs counters, debugfs.c
  counters: string; // the debugfs counters, debugfs.c
  hwCounters: string; // the hfi1 sysfs attributes, sysfs.c
  interrupts: string; // proc/interrupts (/proc/interrupts)
  pciDir: string; // sys/bus/pci/devices/<bdf>
  resource0: string; // pci_mmap_resource, drivers/pci
  params: string; // sys/module/hfi1/parameters (the hfi1 module parameters)
  lockdown: string; // sys/kernel/security/lockdown
  portDir: string; // sys/class/infiniband/hfi1_<u>/ports/1 (the RDMA core's port files)
  moduleDir: string; // sys/module/hfi1 (version, srcversion)
  osrelease: string; // proc/sys/kernel/osrelease
  qpStats: string; // sys/kernel/debug/hfi1/hfi1_<u>/qp_stats (qp_iter_print, hfi1 qp.c)
  procDir: string; // proc (the processes: /proc/<pid>/fd, stack, syscall, comm)
  /** tracefs where it may be mounted: sys/kernel/tracing, then the older sys/kernel/debug/tracing. */
  tracingDirs: string[];
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
    portDir: join(classDir, 'ports/1'),
    moduleDir: join(sysroot, 'sys/module/hfi1'),
    osrelease: join(sysroot, 'proc/sys/kernel/osrelease'),
    qpStats: join(debugDir, 'qp_stats'),
    procDir: join(sysroot, 'proc'),
    tracingDirs: [join(sysroot, 'sys/kernel/tracing'), join(debugRoot, 'tracing')],
  };
}

/** An engine's sysfs directory (sdma<N>/vl and cpu_list, sysfs.c). */
export function engineDir(paths: UnitPaths, engine: number): string {
  return join(paths.classDir, `sdma${engine}`);
}
