// The SDMA trace events of tracefs `trace` text that `log` reads (TRACE_SYSTEM hfi1_tx and hfi2_tx, trace_tx.h of
// each driver). Pure: one line in, one event out (null for any other line).
//   engine state change: hfi1_sdma_state `[%s] current state %s new state %s` (no engine number);
//                        hfi2_sdma_state `[%s] SDE%d state: %s -> %s` (the absolute engine index)
//   descriptor written:  *_sdma_descriptor `[%s] SDE(%u) flags:%s addr:0x%016llx gen:%u len:%u d0:%016llx
//                        d1:%016llx to %p,%u`, the flags four letters (I H F L or -) and, on a FIRST descriptor,
//                        ` amode:%u aidx:%u alen:%u` after them; the last number is the ring slot
//   pad descriptors:     hfi1_sdma_pad (the Cornelis hfi1) and hfi2_sdma_pad `SDE (%u) pkts %u pad_sdma_desc %u
//                        packet descriptors %u padding descriptors %u` (no device prefix)
//   IPoIB queue events:  hfi1_txq_stop, _wake, _wakeup, _full, _queued, _xmit_stopped, _xmit_unstopped and
//                        hfi1_flow_flush / _switch (hfi1_ipoib_txq_template, trace_tx.h; hfi2_ likewise) `[%s] txq %llx
//                        idx %u sde %llx head %lx tail %lx flow %x used %u stops %d no_desc %d stopped %u`; later
//                        kernels print the engine and its CPU after the sde pointer: `sde %llx:%u cpu %d`

/** What every event carries: the trace timestamp as printed (`8812.123456`, null when none) and the module. */
interface TraceBase {
  ts: string | null;
  module: 'hfi1' | 'hfi2';
}

/** One state change. */
export interface SdmaStateEvent extends TraceBase {
  kind: 'state';
  /** The PCI address the event names (the `[%s]` device prefix). */
  device: string;
  /** The engine, absolute; null in the hfi1 wording, which does not print it. */
  engine: number | null;
  from: string;
  to: string;
}

/** One descriptor as the driver wrote it to the ring. */
export interface SdmaDescriptorEvent extends TraceBase {
  kind: 'descriptor';
  device: string;
  engine: number;
  /** The four flag letters as printed (`I`/`H`/`F`/`L` or `-`). */
  flags: string;
  /** On a FIRST descriptor, its AHG mode, index and length. */
  ahg: { mode: number; idx: number; len: number } | null;
  addr: bigint;
  gen: number;
  len: number;
  d0: bigint;
  d1: bigint;
  /** The ring slot it was written to. */
  slot: number;
}

/** The pad descriptors added to one request or one batch (the Cornelis hfi1 and hfi2). */
export interface SdmaPadEvent extends TraceBase {
  kind: 'pad';
  engine: number;
  packets: number;
  /** The pad_sdma_desc setting: the multiple of descriptors a request is padded to. */
  padSdmaDesc: number;
  packetDescriptors: number;
  padDescriptors: number;
}

/** One IPoIB transmit queue event (hfi1_ipoib_txq_template, trace_tx.h). */
export interface TxqEvent extends TraceBase {
  kind: 'txq';
  device: string;
  /** The event's name after the module (`txq_stop`, `txq_wake`, `flow_flush`, …). */
  event: string;
  txq: number;
  /** The engine, where the event prints it (`sde %llx:%u`); null in the older wording. */
  engine: number | null;
  head: number;
  tail: number;
  used: number;
  stops: number;
  noDesc: number;
  stopped: boolean;
}

export type TxTraceEvent = SdmaStateEvent | SdmaDescriptorEvent | SdmaPadEvent | TxqEvent;

const EVENT = /(?:\s(\d+\.\d+))?: (hfi[12])_sdma_(state|descriptor|pad): (.*)$/;
const DEVICE = /^\[([^\]]+)\] (.*)$/;
const HFI1_STATE = /^current state (\S+) new state (\S+)$/;
const HFI2_STATE = /^SDE(0|[1-9][0-9]?) state: (\S+) -> (\S+)$/;
const U = '(0|[1-9][0-9]{0,9})';
const X = '([0-9a-fA-F]{1,16})';
const DESCRIPTOR = new RegExp(
  `^SDE\\(${U}\\) flags:([IH-][IH-][F-][L-])(?: amode:${U} aidx:${U} alen:${U})? addr:0x${X} gen:${U} len:${U} d0:${X} d1:${X} to \\S+,${U}$`,
);
const PAD = new RegExp(`^SDE \\(${U}\\) pkts ${U} pad_sdma_desc ${U} packet descriptors ${U} padding descriptors ${U}$`);

const TXQ_EVENT = /(?:\s(\d+\.\d+))?: (hfi[12])_(txq_[a-z_]+|flow_flush|flow_switch): \[([^\]]+)\] (.*)$/;
const TXQ = new RegExp(
  `^txq ${X} idx ${U} sde ${X}(?::${U} cpu -?[0-9]{1,6})? head ${X} tail ${X} flow ${X} used ${U} stops (-?[0-9]{1,10}) no_desc (-?[0-9]{1,10}) stopped ${U}$`,
);

/** An IPoIB queue event of a `trace` line, or null. */
function parseTxqEvent(line: string): TxqEvent | null {
  const m = TXQ_EVENT.exec(line);
  if (!m) return null;
  const q = TXQ.exec(m[5] as string);
  if (!q) return null;
  return {
    ts: m[1] ?? null,
    module: m[2] as 'hfi1' | 'hfi2',
    kind: 'txq',
    device: m[4] as string,
    event: m[3] as string,
    txq: Number(q[2]),
    engine: q[4] === undefined ? null : Number(q[4]),
    head: Number.parseInt(q[5] as string, 16),
    tail: Number.parseInt(q[6] as string, 16),
    used: Number(q[8]),
    stops: Number(q[9]),
    noDesc: Number(q[10]),
    stopped: Number(q[11]) !== 0,
  };
}

/** The SDMA trace event on a line of `trace`; null when the line is another event or in no known wording. */
export function parseTxTraceLine(line: string): TxTraceEvent | null {
  const m = EVENT.exec(line.trimEnd());
  if (!m) return parseTxqEvent(line.trimEnd());
  const base: TraceBase = { ts: m[1] ?? null, module: m[2] as 'hfi1' | 'hfi2' };
  const what = m[3] as string;
  const text = m[4] as string;
  if (what === 'pad') {
    const p = PAD.exec(text);
    if (!p) return null;
    const [engine, packets, padSdmaDesc, packetDescriptors, padDescriptors] = p.slice(1).map(Number) as number[];
    return { ...base, kind: 'pad', engine, packets, padSdmaDesc, packetDescriptors, padDescriptors } as SdmaPadEvent;
  }
  const d = DEVICE.exec(text);
  if (!d) return null;
  const device = d[1] as string;
  const rest = d[2] as string;
  if (what === 'state') {
    const newer = HFI2_STATE.exec(rest);
    if (newer)
      return { ...base, kind: 'state', device, engine: Number(newer[1]), from: newer[2] as string, to: newer[3] as string };
    const older = HFI1_STATE.exec(rest);
    if (older) return { ...base, kind: 'state', device, engine: null, from: older[1] as string, to: older[2] as string };
    return null;
  }
  const q = DESCRIPTOR.exec(rest);
  if (!q) return null;
  return {
    ...base,
    kind: 'descriptor',
    device,
    engine: Number(q[1]),
    flags: q[2] as string,
    ahg: q[3] === undefined ? null : { mode: Number(q[3]), idx: Number(q[4]), len: Number(q[5]) },
    addr: BigInt(`0x${q[6]}`),
    gen: Number(q[7]),
    len: Number(q[8]),
    d0: BigInt(`0x${q[9]}`),
    d1: BigInt(`0x${q[10]}`),
    slot: Number(q[11]),
  };
}
