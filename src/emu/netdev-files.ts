// The unit's accelerated-IPoIB netdevs in sysfs as the network core shows them (net-sysfs.c): one per port
// (ipoib_add_one), sys/class/net/ib<n>/ with its `device` link to the adapter's PCI device (ipoib sets the netdev's
// parent to the HCA's), `type` 32 (ARPHRD_INFINIBAND), `dev_port` (the port from 0), `operstate`, `tx_queue_len`,
// and per transmit queue (num_sdma of them) `queues/tx-<q>/tx_timeout` (the watchdog timeouts of that queue). The
// emulated queues send on port 1's netdev; the others carry nothing. Written only while the unit has IPoIB queues
// (a choice: ipoib registers them whenever it is loaded); `lo` always.
import { join } from 'node:path';
import { emuNetdev } from './ipoib.js';
import { IPOIB_TX_QUEUE_LEN, ipoibQueues, txQueueCount } from './netdev.js';
import type { TreeWriter } from './tree.js';
import type { EmuUnit } from './unit.js';

/** A sysfs counter (one short line, read whole): overwritten in place when its length is unchanged. */
const IN_PLACE = true;

/** Write the netdevs' files: the loopback every host has, and each port's IPoIB netdev while the unit has IPoIB queues. */
export function writeNetdevFiles(w: TreeWriter, u: EmuUnit, pci: string): void {
  w.file('sys/class/net/lo/type', '772\n'); // ARPHRD_LOOPBACK
  w.file('sys/class/net/lo/operstate', 'unknown\n');
  const queues = ipoibQueues(u);
  if (queues.length === 0) return;
  const ports = u.host.ports;
  for (const p of ports) {
    const dir = join('sys/class/net', emuNetdev(u.info.unit, p.port, ports.length));
    w.link(join(dir, 'device'), `../../../bus/pci/devices/${pci}`);
    w.file(join(dir, 'type'), '32\n');
    w.file(join(dir, 'dev_port'), `${p.port - 1}\n`);
    w.file(join(dir, 'tx_queue_len'), `${IPOIB_TX_QUEUE_LEN}\n`);
    const up = u.host.netdevRegistered && p.state === 'ACTIVE';
    w.file(join(dir, 'operstate'), up ? 'up\n' : 'down\n');
    const timeouts = new Map(p.port === 1 ? queues.map((s) => [s.ipoib?.txq ?? 0, s.ipoib?.timeouts ?? 0]) : []);
    for (let q = 0; q < txQueueCount(u); q++) {
      w.file(join(dir, 'queues', `tx-${q}`, 'tx_timeout'), `${timeouts.get(q) ?? 0}\n`, IN_PLACE);
    }
  }
}
