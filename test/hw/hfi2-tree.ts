// A hand-built sysroot of a CN5000 (or Cornelis hfi1) host, from the hand-written fixtures under
// test/fixtures/hfi2 and test/fixtures/cornelis: the device, its engine window, debugfs under the module's
// directory, the module's parameters, ports and /proc/interrupts.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fixture } from './fixtures.js';

export const JKR_BDF = '0000:41:00.0';

/** What to put in the tree. */
export interface Hfi2TreeOptions {
  /** The unit name's module (hfi2 by default) and the module the driver link names (the same by default). */
  module?: 'hfi1' | 'hfi2';
  driverLink?: 'hfi1' | 'hfi2' | null;
  /** device/vendor and device/device; null leaves them out. */
  pciId?: [string, string] | null;
  subsystemDevice?: string;
  /** The engines that get an sdma<E> directory (absolute indexes); [] writes none. */
  engineDirs?: number[];
  /** sdma<E>/vl text of each directory. */
  vl?: (engine: number) => string;
  hwResources?: string | null;
  sdes?: string | null;
  /** Module parameters by file name (value text). */
  params?: Record<string, string>;
  ports?: number;
  counters?: boolean;
  interrupts?: string | null;
  bar?: ((resource0: string) => void) | null;
  /** Extra files by sysroot-relative path. */
  files?: Record<string, string>;
}

function put(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
}

/** The counters file matching counter_names-jkr: SDMAInt<E> = 1000 + E, SDEDscFdCn<E> = 5000 + E, others 0. */
export function jkrCounterValues(): Buffer {
  const names = fixture('hfi2/counter_names-jkr')
    .split('\n')
    .filter((l) => l !== '');
  const out = Buffer.alloc(names.length * 8);
  names.forEach((raw, i) => {
    const m = /^(SDMAInt|SDEDscFdCn)([0-9]+),32$/.exec(raw);
    const v = m ? (m[1] === 'SDMAInt' ? 1000 : 5000) + Number(m[2]) : 0;
    out.writeBigUInt64LE(BigInt(v), i * 8);
  });
  return out;
}

/** Write unit <module>_0 under `root`; returns the class directory. */
export function writeHfi2Tree(root: string, o: Hfi2TreeOptions = {}): string {
  const module = o.module ?? 'hfi2';
  const name = `${module}_0`;
  const cls = join(root, 'sys/class/infiniband', name);
  const pci = join(root, 'sys/bus/pci/devices', JKR_BDF);
  mkdirSync(cls, { recursive: true });
  mkdirSync(pci, { recursive: true });
  symlinkSync(`../../../bus/pci/devices/${JKR_BDF}`, join(cls, 'device'));
  const link = o.driverLink === undefined ? module : o.driverLink;
  if (link !== null) {
    mkdirSync(join(root, 'sys/bus/pci/drivers', link), { recursive: true });
    symlinkSync(`../../../bus/pci/drivers/${link}`, join(pci, 'driver'));
  }
  const id = o.pciId === undefined ? ['0x434e', '0x0001'] : o.pciId;
  if (id !== null) {
    put(join(pci, 'vendor'), `${id[0]}\n`);
    put(join(pci, 'device'), `${id[1]}\n`);
    put(join(pci, 'subsystem_device'), `${o.subsystemDevice ?? '0x0002'}\n`);
  }
  for (const e of o.engineDirs ?? [8, 9, 10, 11, 12, 13, 14, 15]) {
    put(join(cls, `sdma${e}`, 'vl'), o.vl ? o.vl(e) : '0,0');
    put(join(cls, `sdma${e}`, 'cpu_list'), 'empty\n');
  }
  if (o.hwResources !== null) put(join(cls, 'hw_resources'), o.hwResources ?? fixture('hfi2/hw_resources'));
  for (let p = 1; p <= (o.ports ?? 2); p++) {
    put(join(cls, 'ports', String(p), 'state'), '4: ACTIVE\n');
    put(join(cls, 'ports', String(p), 'phys_state'), '5: LinkUp\n');
    put(join(cls, 'ports', String(p), 'rate'), '400 Gb/sec (4X XDR)\n');
  }
  for (const [f, v] of Object.entries(o.params ?? {})) put(join(root, 'sys/module', module, 'parameters', f), v);
  const dbg = join(root, 'sys/kernel/debug', module, name);
  mkdirSync(dbg, { recursive: true });
  if (o.sdes !== null) put(join(dbg, 'sdes'), o.sdes ?? fixture('hfi2/sdes-jkr.txt'));
  put(join(dbg, 'sdma_cpu_list'), fixture('hfi2/sdma_cpu_list'));
  put(join(dbg, 'qp_stats'), '');
  if (o.counters !== false) {
    put(join(dbg, 'counter_names'), fixture('hfi2/counter_names-jkr'));
    put(join(dbg, 'counters'), jkrCounterValues());
    put(join(dbg, 'portcounter_names'), 'TxPkt\nDmaWait\n');
    put(join(dbg, 'port1counters'), Buffer.alloc(16));
    put(join(dbg, 'port2counters'), Buffer.alloc(16));
  }
  if (o.interrupts !== null) put(join(root, 'proc/interrupts'), o.interrupts ?? fixture('hfi2/interrupts'));
  o.bar?.(join(pci, 'resource0'));
  for (const [rel, text] of Object.entries(o.files ?? {})) put(join(root, rel), text);
  return cls;
}
