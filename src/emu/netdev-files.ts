// The unit's accelerated-IPoIB netdev in sysfs as the network core shows it (net-sysfs.c): sys/class/net/ib<unit>/
// with its `device` link to the adapter's PCI device (ipoib sets the netdev's parent to the HCA's), `type` 32
// (ARPHRD_INFINIBAND), `dev_port` (the port from 0), `operstate`, and per transmit queue `queues/tx-<q>/tx_timeout`
// (the watchdog timeouts of that queue). Written only while the unit has IPoIB queues; `lo` always.
import { join } from 'node:path';
import { emuNetdev } from './ipoib.js';
import { ipoibQueues, txQueueCount } from './netdev.js';
import type { TreeWriter } from './tree.js';
import type { EmuUnit } from './unit.js';

/** Write the netdevs' files: the loopback every host has, and the IPoIB netdev while the unit has IPoIB queues. */
export function writeNetdevFiles(w: TreeWriter, u: EmuUnit, pci: string): void {
  w.file('sys/class/net/lo/type', '772\n'); // ARPHRD_LOOPBACK
  w.file('sys/class/net/lo/operstate', 'unknown\n');
  const queues = ipoibQueues(u);
  if (queues.length === 0) return;
  const dir = join('sys/class/net', emuNetdev(u.info.unit));
  w.link(join(dir, 'device'), `../../../bus/pci/devices/${pci}`);
  w.file(join(dir, 'type'), '32\n');
  w.file(join(dir, 'dev_port'), '0\n');
  const up = u.host.netdevRegistered && u.host.ports.some((p) => p.state === 'ACTIVE');
  w.file(join(dir, 'operstate'), up ? 'up\n' : 'down\n');
  const timeouts = new Map(queues.map((s) => [s.ipoib?.txq ?? 0, s.ipoib?.timeouts ?? 0]));
  for (let q = 0; q < txQueueCount(u); q++) {
    w.file(join(dir, 'queues', `tx-${q}`, 'tx_timeout'), `${timeouts.get(q) ?? 0}\n`, true);
  }
}
