// The counters of one emulated port (the driver's port counters, chip.c port_cntrs; the RDMA core's PortCounters view of
// them, mad.c pma_get_ib_portcounters) and the traffic that moves them: what the engines that transmit on the port
// and the bulk service send, the ticks the port waits for credits, the link events.
//
// XmitWait counts flit times (64-bit flits at the port's rate) in which the port had data and no credit to send it.
// The driver's TxWait counts TXE cycles that mad.c converts to flit times; the emulator counts flit times directly (a
// choice: the cycle length is not public). A healthy port waits now and then: a sender of traffic on it (an engine,
// or a QP the bulk service carries) that has been sending without a pause for STREAMING_NS or longer has 1/16 of the
// flits it sends wait a tick (a choice standing for the far end's buffers filling under a stream; each sender is
// judged by its own sends, so that one engine's traffic never depends on when another's was sent); under
// `fabric-stall` the far end returns no credits and every tick waits.
import { doubleFields } from './double-fields.js';

/** How long a sender streams without a pause before the far end's buffers make it wait: 100 µs. */
export const STREAMING_NS = 100_000;
/** Bytes per flit (OPA's 64-bit flits). */
export const FLIT_BYTES = 8;

/** The counters and credit state of one port. Values are cumulative since driver load. */
export class PortCounterState {
  xmitBytes = 0;
  xmitPackets = 0;
  rcvBytes = 0;
  rcvPackets = 0;
  /** Flit times the port waited for credits (settled up to `waitSettledNs`). */
  xmitWait = 0;
  xmitDiscards = 0;
  linkDowned = 0;
  linkUp = 0;
  linkErrorRecovery = 0;
  rcvErrors = 0;
  /** Times a QP or an IPoIB queue slept on a dmawait list for this port (n_dmawait, qp.c and ipoib_tx.c). */
  dmaWait = 0;
  /** The far end returns credits (false under `fabric-stall`). */
  credits = true;
  /** Since when (ns) the port waits with no credit; the wait is settled into xmitWait when read. */
  noCreditSinceNs = 0;

  /** `rateBytesPerNs`: the port's link rate (bytes per ns), whose flit times a port without credits waits. */
  constructor(private readonly rateBytesPerNs: number) {
    doubleFields(this, 'xmitBytes', 'rcvBytes', 'noCreditSinceNs');
  }

  /** The credits stop (`fabric-stall`) at `nowNs`. */
  stopCredits(nowNs: number): void {
    if (!this.credits) return;
    this.credits = false;
    this.noCreditSinceNs = nowNs;
  }

  /** XmitWait at `nowNs`: what was counted, and every flit time since the credits stopped. */
  xmitWaitAt(nowNs: number): number {
    if (this.credits) return this.xmitWait;
    return this.xmitWait + Math.floor(((nowNs - this.noCreditSinceNs) * this.rateBytesPerNs) / FLIT_BYTES);
  }
}

/** What one sender of traffic (an engine's chip, or a QP's bulk service) puts on its port, and since when it streams. */
export class TrafficMeter {
  /** When its current stretch of sending without a pause began (ns). */
  streamingSinceNs = Number.POSITIVE_INFINITY;
  /** What this sender has put on ports so far: bytes, packets and waited flit times. */
  bytes = 0;
  packets = 0;
  waits = 0;

  /** The sender starts sending at `nowNs`: a new stretch unless it `continues` the last one without a pause. */
  start(nowNs: number, continues: boolean): void {
    if (!continues) this.streamingSinceNs = nowNs;
  }

  /** `bytes` in `packets` left by port `p` at `nowNs` (an engine's step, or the bulk service). */
  sent(p: PortCounterState, bytes: number, packets: number, nowNs: number): void {
    const waits = nowNs - this.streamingSinceNs >= STREAMING_NS ? Math.floor(bytes / FLIT_BYTES / 16) : 0;
    this.bytes += bytes;
    this.packets += packets;
    this.waits += waits;
    p.xmitBytes += bytes;
    p.xmitPackets += packets;
    // The far end answers in kind: as much comes back (a choice; receive counters only feed the RDMA core's view).
    p.rcvBytes += bytes;
    p.rcvPackets += packets;
    p.xmitWait += waits;
  }
}

/** A port counter of the driver (chip.c port_cntrs, in table order): its name and whether it is 32 bits wide. */
interface DriverCounter {
  name: string;
  bits32?: boolean;
  /** Expanded per VL (TxFlitVL0 … TxFlitVL7, TxFlitVL15). */
  perVl?: boolean;
}

/** The driver's port counters in the order portcounter_names lists them (chip.c port_cntrs, the hfi1 build's). */
const DRIVER_COUNTERS: readonly DriverCounter[] = [
  { name: 'TxUnVLErr', bits32: true },
  { name: 'TxInvalLen', bits32: true },
  { name: 'TxMMLenErr', bits32: true },
  { name: 'TxUnderrun', bits32: true },
  { name: 'TxFlowStall', bits32: true },
  { name: 'TxDropped', bits32: true },
  { name: 'TxHdrErr', bits32: true },
  { name: 'TxPkt' },
  { name: 'TxWords' },
  { name: 'TxWait' },
  { name: 'TxFlitVL', perVl: true },
  { name: 'TxPktVL', perVl: true },
  { name: 'TxWaitVL', perVl: true },
  { name: 'RxPkt' },
  { name: 'RxWords' },
  { name: 'SwLinkDown', bits32: true },
  { name: 'SwLinkUp', bits32: true },
  { name: 'UnknownFrame' },
  { name: 'XmitDscd', bits32: true },
  { name: 'XmitDscdVl', bits32: true, perVl: true },
  { name: 'XmitCstrErr' },
  { name: 'RcvCstrErr' },
  { name: 'LoopPkts' },
  { name: 'RcResend' },
  { name: 'RnrNak' },
  { name: 'OtherNak' },
  { name: 'RcTimeOut' },
  { name: 'PktDrop' },
  { name: 'DmaWait' },
  { name: 'RcSeqNak' },
  { name: 'RcDupRew' },
  { name: 'RdmaSeq' },
  { name: 'Unaligned' },
  { name: 'SeqNak' },
  { name: 'RcCrWait' },
  { name: 'RcAcks' },
  { name: 'RcQacks' },
  { name: 'RcDelayComp' },
];

/** VLs of the per-VL counters, in the driver's order (vl_from_idx: 0-7, then 15). */
const VLS = [0, 1, 2, 3, 4, 5, 6, 7, 15];

/**
 * The names of portcounter_names, `,32` on the 32-bit ones, one per line (chip.c init_cntrs), then RcvHdrOvr<ctx> for
 * each receive context in use (the driver disables those from num_rcv_contexts on; rcv-contexts.ts).
 */
export function portCounterNames(rcvContexts: number): string[] {
  const out: string[] = [];
  for (const c of DRIVER_COUNTERS) {
    const suffix = c.bits32 ? ',32' : '';
    if (c.perVl) for (const vl of VLS) out.push(`${c.name}${vl}${suffix}`);
    else out.push(`${c.name}${suffix}`);
  }
  for (let ctx = 0; ctx < rcvContexts; ctx++) out.push(`RcvHdrOvr${ctx}`);
  return out;
}

/** The values the model has for the driver's names (by bare name); every other counter reads 0. */
export function driverCounterValues(c: PortCounterState, nowNs: number): Map<string, bigint> {
  const u32 = (n: number) => BigInt(n) & 0xffff_ffffn;
  return new Map<string, bigint>([
    ['TxPkt', BigInt(c.xmitPackets)],
    ['TxWords', BigInt(Math.floor(c.xmitBytes / 4))],
    ['TxWait', BigInt(c.xmitWaitAt(nowNs))],
    ['RxPkt', BigInt(c.rcvPackets)],
    ['RxWords', BigInt(Math.floor(c.rcvBytes / 4))],
    ['SwLinkDown', u32(c.linkDowned)],
    ['SwLinkUp', u32(c.linkUp)],
    ['XmitDscd', u32(c.xmitDiscards)],
    ['DmaWait', BigInt(c.dmaWait)],
  ]);
}

/** The port<N>counters values in the order of `names` (portCounterNames). */
export function portCounterValues(c: PortCounterState, nowNs: number, names: readonly string[]): bigint[] {
  const known = driverCounterValues(c, nowNs);
  return names.map((n) => known.get(n.endsWith(',32') ? n.slice(0, -3) : n) ?? 0n);
}

/**
 * The RDMA core's `ports/<N>/counters/` files as hfi1 answers them (ib_core sysfs.c pma_attrs_ext; mad.c
 * pma_get_ib_portcounters and pma_get_ib_portcounters_ext): the error counts saturate at their field's width,
 * port_xmit_data and port_rcv_data are the 64-bit extended values in flits (what hfi1 puts there), and
 * port_xmit_wait reads 0: hfi1's PortCounters answer leaves that field out. Each value with its newline.
 */
export function pmaCounterFiles(c: PortCounterState): [string, string][] {
  const sat = (n: number, bits: number) => Math.min(n, 2 ** bits - 1);
  return [
    ['symbol_error', 0],
    ['link_error_recovery', sat(c.linkErrorRecovery, 8)],
    ['link_downed', sat(c.linkDowned, 8)],
    ['port_rcv_errors', sat(c.rcvErrors, 16)],
    ['port_rcv_remote_physical_errors', 0],
    ['port_rcv_switch_relay_errors', 0],
    ['port_xmit_discards', sat(c.xmitDiscards, 16)],
    ['port_xmit_constraint_errors', 0],
    ['port_rcv_constraint_errors', 0],
    ['local_link_integrity_errors', 0],
    ['excessive_buffer_overrun_errors', 0],
    ['VL15_dropped', 0],
    ['port_xmit_data', Math.floor(c.xmitBytes / FLIT_BYTES)],
    ['port_rcv_data', Math.floor(c.rcvBytes / FLIT_BYTES)],
    ['port_xmit_packets', c.xmitPackets],
    ['port_xmit_wait', 0],
    ['port_rcv_packets', c.rcvPackets],
    ['unicast_rcv_packets', 0],
    ['unicast_xmit_packets', 0],
    ['multicast_rcv_packets', 0],
    ['multicast_xmit_packets', 0],
  ].map(([n, v]) => [n as string, `${v}\n`]);
}
