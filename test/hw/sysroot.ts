// A hand-built sysroot (the sysroot layout) for backend tests, from the fixtures.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fixture, fixtureBytes } from './fixtures.js';

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
}

export const BDF = '0000:05:00.0';

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
}
