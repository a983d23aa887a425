// The sleep and wake-up trace events of tracefs `trace` text (hfi1 and hfi2 alike, only the prefix differs). Pure:
// one line in, one event out (null for any other line).
//   QP sleep and wake-up:  hfi1_qpsleep, hfi1_qpwakeup (TRACE_SYSTEM hfi1_tx, hfi1_qpsleepwakeup_template in
//                          trace_tx.h) `[%s] qpn 0x%x flags 0x%x s_flags 0x%x ps_flags 0x%x iow_flags 0x%lx`:
//                          `flags` the wait flag slept on or cleared (RVT_S_WAIT_DMA_DESC for dmawait, iowait_sleep,
//                          qp.c); staging-era kernels print only `qpn … flags … s_flags …`
//   iowait pending flags:  hfi1_iowait_set, hfi1_iowait_clear (TRACE_SYSTEM hfi1_iowait, trace_iowait.h)
//                          `iowait 0x%lx qp %u flags 0x%lx flag 0x%x`, no device prefix: the QP (decimal) whose
//                          IOWAIT_PENDING_IB/TID bit (`flag`, 1 << bit) is set when it goes to sleep (hfi1_qp_unbusy)
//                          and cleared when its wake-up schedules it again (hfi1_qp_schedule, qp.c); `flags` is
//                          the iowait's flags before the change
//   PSM queue:             hfi1_usdma_defer `[%s] pq %llx sde %llx wait %llx engine %d empty %d` and
//                          hfi1_usdma_activate `[%s] pq %llx wait %llx reason %d` (user_sdma.c, trace_tx.h)

/** The trace line's task and time: `comm-pid [cpu] flags time: event: …` (the default `trace` output). */
export interface TraceContext {
  /** The task as printed (`kworker/3:1H`, `<idle>`, `mpi_rank_0`), its pid, its CPU; null when not printed. */
  comm: string | null;
  pid: number | null;
  cpu: number | null;
  /** The timestamp as printed (`1234.567890`), null when none. */
  ts: string | null;
  module: 'hfi1' | 'hfi2';
}

/** A QP going to sleep on a wait list, or woken from it. */
export interface QpWaitEvent extends TraceContext {
  kind: 'qp-sleep' | 'qp-wakeup';
  device: string;
  qpn: number;
  /** The wait flag (RVT_S_WAIT_DMA_DESC 0x1000 in today's s_flags layout: dmawait). */
  flags: number;
  sFlags: number;
  /** The driver's own QP flags and the iowait's flags; null in the staging-era wording. */
  psFlags: number | null;
  iowFlags: number | null;
}

/** An iowait pending flag set or cleared. */
export interface IowaitFlagEvent extends TraceContext {
  kind: 'iowait-set' | 'iowait-clear';
  /** The iowait's kernel address, as printed (hex digits). */
  iowait: string;
  qpn: number;
  /** The iowait's flags before the change, and the flag changed (1 << bit). */
  flags: number;
  flag: number;
}

/** A PSM packet queue deferred on an engine's dmawait, or activated from it. */
export interface UsdmaEvent extends TraceContext {
  kind: 'psm-defer' | 'psm-activate';
  device: string;
  /** The packet queue's kernel address (hex digits). */
  pq: string;
  /** defer: the engine, and whether its iowait was on no list yet (1 = not queued); activate: the reason. */
  engine: number | null;
  empty: boolean | null;
  reason: number | null;
}

export type WaitTraceEvent = QpWaitEvent | IowaitFlagEvent | UsdmaEvent;

const CONTEXT =
  /^\s*(?:(.+?)-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(\d+)\]\s+(?:[^\s:]+\s+)?)?(\d+\.\d+): (hfi[12])_(qpsleep|qpwakeup|iowait_set|iowait_clear|usdma_defer|usdma_activate): (.*)$/;
const X = '([0-9a-fA-F]{1,16})';
const QP = new RegExp(`^\\[([^\\]]+)\\] qpn 0x${X} flags 0x${X} s_flags 0x${X}(?: ps_flags 0x${X} iow_flags 0x${X})?$`);
const IOWAIT = new RegExp(`^iowait 0x${X} qp (\\d{1,10}) flags 0x${X} flag 0x${X}$`);
const DEFER = new RegExp(`^\\[([^\\]]+)\\] pq ${X} sde ${X} wait ${X} engine (-?\\d{1,6}) empty (-?\\d{1,6})$`);
const ACTIVATE = new RegExp(`^\\[([^\\]]+)\\] pq ${X} wait ${X} reason (-?\\d{1,6})$`);

const hex = (s: string): number => Number.parseInt(s, 16);

/** The sleep or wake-up event on a line of `trace`; null for any other line or a wording not known. */
export function parseWaitTraceLine(line: string): WaitTraceEvent | null {
  const m = CONTEXT.exec(line.trimEnd());
  if (!m) return null;
  const ctx: TraceContext = {
    comm: m[1] ?? null,
    pid: m[2] === undefined ? null : Number(m[2]),
    cpu: m[3] === undefined ? null : Number(m[3]),
    ts: m[4] as string,
    module: m[5] as 'hfi1' | 'hfi2',
  };
  const what = m[6] as string;
  const text = m[7] as string;
  if (what === 'qpsleep' || what === 'qpwakeup') {
    const q = QP.exec(text);
    if (!q) return null;
    return {
      ...ctx,
      kind: what === 'qpsleep' ? 'qp-sleep' : 'qp-wakeup',
      device: q[1] as string,
      qpn: hex(q[2] as string),
      flags: hex(q[3] as string),
      sFlags: hex(q[4] as string),
      psFlags: q[5] === undefined ? null : hex(q[5]),
      iowFlags: q[6] === undefined ? null : hex(q[6]),
    };
  }
  if (what === 'iowait_set' || what === 'iowait_clear') {
    const q = IOWAIT.exec(text);
    if (!q) return null;
    return {
      ...ctx,
      kind: what === 'iowait_set' ? 'iowait-set' : 'iowait-clear',
      iowait: (q[1] as string).toLowerCase(),
      qpn: Number(q[2]),
      flags: hex(q[3] as string),
      flag: hex(q[4] as string),
    };
  }
  if (what === 'usdma_defer') {
    const q = DEFER.exec(text);
    if (!q) return null;
    return {
      ...ctx,
      kind: 'psm-defer',
      device: q[1] as string,
      pq: (q[2] as string).toLowerCase(),
      engine: Number(q[5]),
      empty: Number(q[6]) !== 0,
      reason: null,
    };
  }
  const q = ACTIVATE.exec(text);
  if (!q) return null;
  return {
    ...ctx,
    kind: 'psm-activate',
    device: q[1] as string,
    pq: (q[2] as string).toLowerCase(),
    engine: null,
    empty: null,
    reason: Number(q[4]),
  };
}
