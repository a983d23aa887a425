// A hand-built sysroot (the sysroot layout) for backend tests, from the fixtures.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fixture, fixtureBytes } from './fixtures.js';

export const BDF = '0000:05:00.0';

/** What to put in the tree. */
export interface TreeOptions {
  engines?: number;
  sdes?: string | null;
  counters?: boolean;
  hwCounters?: Record<string, string> | null;
  interrupts?: string | null;
  bar?: ((resource0: string) => void) | null;
  descqCntParam?: string | null;
  /** debugfs: 'mounted' with hfi1, 'empty' (not mounted) or 'absent'. */
  debugfs?: 'mounted' | 'empty' | 'absent';
  vendorDevice?: [string, string];
  /** The identity and port files (CONTEXT_FILES, PORT_FILES); written unless false. */
  context?: boolean;
  /** Overrides of single files, by sysroot-relative path (null: leave the file out). */
  files?: Record<string, string | null>;
}

/** The identity files of a hand-built host, by sysroot-relative path. */
export const CONTEXT_FILES: Readonly<Record<string, string>> = {
  'proc/sys/kernel/osrelease': '6.8.0-45-generic\n',
  'proc/cmdline': 'BOOT_IMAGE=/vmlinuz ro quiet\n',
  'sys/module/hfi1/version': '10.9-0\n',
  'sys/module/hfi1/srcversion': 'A1B2C3D4E5F60718293A4B5\n',
  'sys/class/infiniband/hfi1_0/fw_ver': '1.27.0\n',
  'sys/class/infiniband/hfi1_0/board_id': 'Intel Omni-Path Host Fabric Interface Adapter 100 Series\n',
  'sys/class/infiniband/hfi1_0/hw_rev': '17\n',
  'sys/class/infiniband/hfi1_0/serial': '0x00631a8f\n',
  'sys/class/infiniband/hfi1_0/boardversion': 'ChipABI 3.0, ChipRev 7.17, SW Compat 3\n',
  [`sys/bus/pci/devices/${BDF}/subsystem_vendor`]: '0x8086\n',
  [`sys/bus/pci/devices/${BDF}/subsystem_device`]: '0xe2ff\n',
  [`sys/bus/pci/devices/${BDF}/revision`]: '0x11\n',
  [`sys/bus/pci/devices/${BDF}/class`]: '0x0c8000\n',
  [`sys/bus/pci/devices/${BDF}/current_link_speed`]: '8.0 GT/s PCIe\n',
  [`sys/bus/pci/devices/${BDF}/current_link_width`]: '16\n',
  [`sys/bus/pci/devices/${BDF}/max_link_speed`]: '8.0 GT/s PCIe\n',
  [`sys/bus/pci/devices/${BDF}/max_link_width`]: '16\n',
  'sys/class/infiniband/hfi1_0/ports/1/state': '4: ACTIVE\n',
  'sys/class/infiniband/hfi1_0/ports/1/phys_state': '5: LinkUp\n',
  'sys/class/infiniband/hfi1_0/ports/1/rate': '100 Gb/sec (4X EDR)\n',
  'sys/kernel/debug/hfi1/hfi1_0/qp_stats': '',
};

function put(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
}

/** Write a tree for unit hfi1_0 under `root`. */
export function writeTree(root: string, o: TreeOptions = {}): void {
  const engines = o.engines ?? 2;
  const cls = join(root, 'sys/class/infiniband/hfi1_0');
  const pci = join(root, 'sys/bus/pci/devices', BDF);
  mkdirSync(cls, { recursive: true });
  mkdirSync(pci, { recursive: true });
  symlinkSync(`../../../bus/pci/devices/${BDF}`, join(cls, 'device'));
  const [vendor, device] = o.vendorDevice ?? ['0x8086', '0x24f0'];
  put(join(pci, 'vendor'), `${vendor}\n`);
  put(join(pci, 'device'), `${device}\n`);
  for (let e = 0; e < engines; e++) {
    put(join(cls, `sdma${e}`, 'vl'), `${e % 8}\n`);
    put(join(cls, `sdma${e}`, 'cpu_list'), e === 0 ? '0-3,8\n' : 'empty\n');
  }
  if (o.descqCntParam !== null) put(join(root, 'sys/module/hfi1/parameters/sdma_descq_cnt'), o.descqCntParam ?? '2048\n');
  const debugfs = o.debugfs ?? 'mounted';
  if (debugfs === 'empty') mkdirSync(join(root, 'sys/kernel/debug'), { recursive: true });
  if (debugfs === 'mounted') {
    const dbg = join(root, 'sys/kernel/debug/hfi1/hfi1_0');
    mkdirSync(dbg, { recursive: true });
    if (o.sdes !== null) put(join(dbg, 'sdes'), o.sdes ?? fixture('sdes/upstream.txt'));
    if (o.counters !== false) {
      put(join(dbg, 'counter_names'), fixture('counters/counter_names'));
      put(join(dbg, 'counters'), fixtureBytes('counters/counters'));
    }
  }
  if (o.hwCounters) for (const [name, v] of Object.entries(o.hwCounters)) put(join(cls, 'hw_counters', name), v);
  if (o.interrupts !== null) put(join(root, 'proc/interrupts'), o.interrupts ?? fixture('proc/interrupts'));
  o.bar?.(join(pci, 'resource0'));
  const files = { ...(o.context === false ? {} : CONTEXT_FILES), ...o.files };
  for (const [rel, text] of Object.entries(files)) {
    if (text === null) continue;
    if (rel.startsWith('sys/kernel/debug/') && debugfs !== 'mounted') continue;
    put(join(root, rel), text);
  }
}
