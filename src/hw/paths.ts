// Where each source of a unit lives under the sysroot: the same paths as on a live host.

import { join } from 'node:path';
import { containmentOf } from './contain.js';

/** Paths of one unit's sources. */
export interface UnitPaths {
  /** The sysroot every path below lies under (`/` on a live host). */
  sysroot: string;
  /** The driving module: hfi1 or hfi2. */
  module: HfiModule;
  /** The sysroot itself (`/` on a live host). */
  root: string;
  classDir: string; // sys/class/infiniband/hfi1_<u> or hfi2_<u> (the hfi1/hfi2 sysfs attributes, sysfs.c)
  debugRoot: string; // sys/kernel/debug (the debugfs tree, debugfs.c)
  debugDir: string; // sys/kernel/debug/<module>/<module>_<u> (hfi1_dbg_ibdev_init / hfi2_dbg_ibdev_init, debugfs.c)
  hwResources: string; // sys/class/infiniband/hfi2_<u>/hw_resources (hfi2 sysfs.c: the engine window `sde a-b`)
  sdmaCpuList: string; // debugfs sdma_cpu_list (sdma_seqfile_dump_cpu_list, sdma.c)
  sdes: string; // sdma_seqfile_dump_sde, sdma.c
  counterNames: string; // the debugfs counters, debugfs.c
  counters: string; // the debugfs counters, debugfs.c
  portCounterNames: string; // debugfs portcounter_names (the debugfs port counters, debugfs.c); values in port<N>counters
  hwCounters: string; // the hfi1 sysfs attributes, sysfs.c
  interrupts: string; // proc/interrupts (/proc/interrupts)
  pciDir: string; // sys/bus/pci/devices/<bdf>
  resource0: string; // pci_mmap_resource, drivers/pci
  params: string; // sys/module/<module>/parameters (every hfi2 parameter is optional)
  lockdown: string; // sys/kernel/security/lockdown
  portDir: string; // sys/class/infiniband/hfi1_<u>/ports/1 (the RDMA core's port files)
  moduleDir: string; // sys/module/<module> (version, srcversion)
  driverLink: string; // the PCI device's driver link (its target's basename is the module bound to it)
  osrelease: string; // proc/sys/kernel/osrelease
  qpStats: string; // sys/kernel/debug/hfi1/hfi1_<u>/qp_stats (qp_iter_print, hfi1 qp.c)
  procDir: string; // proc (the processes: /proc/<pid>/fd, stack, syscall, comm)
  verbsDir: string; // sys/class/infiniband_verbs (uverbs<N>/ibdev names the RDMA device of /dev/infiniband/uverbs<N>)
  netDir: string; // sys/class/net (the netdevs: an IPoIB netdev's device link names the adapter, net-sysfs.c)
  uptime: string; // proc/uptime (seconds since boot: what dates a /dev/kmsg record)
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

/** The kernel module of a unit name (`hfi1_<u>` or `hfi2_<u>`), or null for another RDMA device's name. */
export function moduleOfName(name: string): HfiModule | null {
  const m = /^(hfi[12])_(0|[1-9][0-9]{0,2})$/.exec(name);
  return m ? (m[1] as HfiModule) : null;
}

/** The two kernel modules that drive an Omni-Path HFI: hfi1 (upstream or the Cornelis build) and hfi2. */
export type HfiModule = 'hfi1' | 'hfi2';

/**
 * The paths of unit `name` at PCI address `pci` (empty when unknown), driven by `module` (the name's prefix by
 * default): debugfs sys/kernel/debug/<module>/<name> and sys/module/<module> follow the module, not the name.
 */
export function unitPaths(
  sysroot: string,
  name: string,
  pci: string,
  module: HfiModule = moduleOfName(name) ?? 'hfi1',
): UnitPaths {
  const classDir = join(infinibandDir(sysroot), name);
  const debugRoot = join(sysroot, 'sys/kernel/debug');
  const debugDir = join(debugRoot, module, name);
  const pciDir = pci === '' ? join(classDir, 'device') : join(pciDevicesDir(sysroot), pci);
  return {
    sysroot,
    module,
    root: sysroot,
    classDir,
    hwResources: join(classDir, 'hw_resources'),
    sdmaCpuList: join(debugDir, 'sdma_cpu_list'),
    driverLink: join(pciDir, 'driver'),
    debugRoot,
    debugDir,
    sdes: join(debugDir, 'sdes'),
    counterNames: join(debugDir, 'counter_names'),
    counters: join(debugDir, 'counters'),
    portCounterNames: join(debugDir, 'portcounter_names'),
    hwCounters: join(classDir, 'hw_counters'),
    interrupts: join(sysroot, 'proc/interrupts'),
    pciDir,
    resource0: join(pciDir, 'resource0'),
    params: join(sysroot, `sys/module/${module}/parameters`),
    lockdown: join(sysroot, 'sys/kernel/security/lockdown'),
    portDir: join(classDir, 'ports/1'),
    moduleDir: join(sysroot, `sys/module/${module}`),
    osrelease: join(sysroot, 'proc/sys/kernel/osrelease'),
    qpStats: join(debugDir, 'qp_stats'),
    procDir: join(sysroot, 'proc'),
    verbsDir: join(sysroot, 'sys/class/infiniband_verbs'),
    netDir: join(sysroot, 'sys/class/net'),
    uptime: join(sysroot, 'proc/uptime'),
    tracingDirs: [join(sysroot, 'sys/kernel/tracing'), join(debugRoot, 'tracing')],
  };
}

/** A port's debugfs counter values (port<N>counters, debugfs.c). */
export function portCountersFile(paths: UnitPaths, port: number): string {
  return join(paths.debugDir, `port${port}counters`);
}

/** A port's sysfs directory (ports/<N>/: state, counters/, hw_counters/). */
export function portSysfsDir(paths: UnitPaths, port: number): string {
  return join(paths.classDir, 'ports', String(port));
}

/** An engine's sysfs directory (sdma<N>/vl and cpu_list, sysfs.c). */
export function engineDir(paths: UnitPaths, engine: number): string {
  return join(paths.classDir, `sdma${engine}`);
}

/** The file `emu write` and `emu serve` leave at the root of the trees they write: the sysroot is the emulator's. */
export const EMULATED_MARKER = '.hfi1-sdma-emulated';

/** Whether a sysroot directory is an emulated host (its root holds the marker as a regular file, not a link). */
export function isEmulatedSysroot(sysroot: string): boolean {
  const within = containmentOf(sysroot);
  if (within === null) return false;
  try {
    return within.lstat(join(sysroot, EMULATED_MARKER))?.isFile() === true;
  } catch {
    return false;
  }
}
