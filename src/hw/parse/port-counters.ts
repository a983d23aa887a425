// A port's counters from what the driver and the RDMA core print: the driver's port counters by name (debugfs
// portcounter_names + port<N>counters, or sysfs ports/<N>/hw_counters; chip.c port_cntrs) and the RDMA core's
// PortCounters files (sysfs ports/<N>/counters; ib_core sysfs.c show_pma_counter, answered by mad.c
// pma_get_ib_portcounters[_ext]). Pure: names and texts in, values out.
//
// What hfi1 puts where (mad.c): LinkDowned is SwLinkDown, XmitDiscards XmitDscd, port data the device's flit
// counters; LinkErrorRecovery (DcLinkSeqCrc + DcReinitPeer) and PortRcvErrors (DcRecvErr) are device counters that
// only the PortCounters view gives per port, truncated to 8 and 16 bits. The PortCounters port_xmit_wait field is
// left out of hfi1's answer and reads 0, so XmitWait is taken from the driver's TxWait only.
import type { PortCounterName, PortCounterSource, PortCounters } from '../../backend.js';
import { parseHwCounterValue } from './counters.js';

/** The driver's port counter names (chip.c port_cntrs, bare of `,32`) behind each value, and how to scale them. */
export const DRIVER_PORT_COUNTERS: Readonly<Partial<Record<PortCounterName, { name: string; divide?: bigint }>>> = {
  xmitWait: { name: 'TxWait' },
  // TxWords counts 4-byte words; the contract counts 8-byte flits.
  xmitData: { name: 'TxWords', divide: 2n },
  xmitPackets: { name: 'TxPkt' },
  xmitDiscards: { name: 'XmitDscd' },
  linkDowned: { name: 'SwLinkDown' },
  dmaWait: { name: 'DmaWait' },
};

/** The PortCounters files (ports/<N>/counters) behind each value and the width of the field they saturate at. */
export const PMA_PORT_COUNTERS: Readonly<Partial<Record<PortCounterName, { file: string; bits: number }>>> = {
  linkErrorRecovery: { file: 'link_error_recovery', bits: 8 },
  rcvErrors: { file: 'port_rcv_errors', bits: 16 },
  linkDowned: { file: 'link_downed', bits: 8 },
  xmitDiscards: { file: 'port_xmit_discards', bits: 16 },
  xmitData: { file: 'port_xmit_data', bits: 64 },
  xmitPackets: { file: 'port_xmit_packets', bits: 64 },
};

/** Every counter the contract names, in the order outputs list them. */
export const PORT_COUNTER_NAMES: readonly PortCounterName[] = [
  'xmitWait',
  'xmitData',
  'xmitPackets',
  'xmitDiscards',
  'linkDowned',
  'linkErrorRecovery',
  'rcvErrors',
  'dmaWait',
];

/** The names the driver's hw_counters files carry for the counters the tool reads (with and without `,32`). */
export function driverFileNames(): string[] {
  return Object.values(DRIVER_PORT_COUNTERS).flatMap((c) => (c ? [c.name, `${c.name},32`] : []));
}

/** An empty record for `port`: every value null. */
export function emptyPortCounters(port: number): PortCounters {
  const values = Object.fromEntries(PORT_COUNTER_NAMES.map((n) => [n, null])) as Record<PortCounterName, bigint | null>;
  return { port, values, sources: {}, saturated: [] };
}

/** Fill what the driver's counters give (by bare name) into `out`, marked with `source`; values already there stay. */
export function fromDriverCounters(
  out: PortCounters,
  byName: ReadonlyMap<string, bigint>,
  source: Extract<PortCounterSource, 'debugfs' | 'hwCounters'>,
): PortCounters {
  for (const [field, c] of Object.entries(DRIVER_PORT_COUNTERS) as [PortCounterName, { name: string; divide?: bigint }][]) {
    const v = byName.get(c.name);
    if (v === undefined || out.values[field] !== null) continue;
    out.values[field] = c.divide ? v / c.divide : v;
    out.sources[field] = source;
  }
  return out;
}

/**
 * Fill what the PortCounters files give (`texts` by file name, each as read) into `out`; a value at its field's
 * largest is marked saturated. A file that does not parse is an error naming it (`dir` is its directory).
 */
export function fromPmaCounters(out: PortCounters, texts: ReadonlyMap<string, string>, dir: string): PortCounters {
  for (const [field, c] of Object.entries(PMA_PORT_COUNTERS) as [PortCounterName, { file: string; bits: number }][]) {
    const text = texts.get(c.file);
    if (text === undefined || out.values[field] !== null) continue;
    const v = parseHwCounterValue(text, `${dir}/${c.file}`);
    out.values[field] = v;
    out.sources[field] = 'pma';
    if (c.bits < 64 && v >= (1n << BigInt(c.bits)) - 1n) out.saturated.push(field);
  }
  return out;
}

/** The PortCounters files a reader needs: those whose values the driver's counters did not give. */
export function pmaFilesWanted(out: PortCounters): string[] {
  return (Object.entries(PMA_PORT_COUNTERS) as [PortCounterName, { file: string }][])
    .filter(([field]) => out.values[field] === null)
    .map(([, c]) => c.file);
}
