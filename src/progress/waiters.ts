// Senders asleep waiting for SDMA ring space (or another I/O wait), as a backend reports them: QPs (iowait_sleep,
// qp.c), PSM writers (defer_packet_queue, user_sdma.c) and IPoIB transmit queues (the ipoib_tx.c sleep callback).
// Types and pure helpers only: the records come from the emulator's model, debugfs qp_stats, /proc or trace events.

import type { QpStateName, Waiter, WaiterIdentity, WaiterKind, WaiterSource, WaiterVisibility, WaitFor } from '../backend.js';

export type { QpStateName, Waiter, WaiterIdentity, WaiterKind, WaiterSource, WaiterVisibility, WaitFor };

/** Every kind of waiter, in the order reports list them. */
export const WAITER_KINDS: readonly WaiterKind[] = ['qp', 'psm', 'ipoib'];

/** enum ib_qp_state (ib_verbs.h), by value. */
export const QP_STATE_NAMES: readonly QpStateName[] = ['RESET', 'INIT', 'RTR', 'RTS', 'SQD', 'SQE', 'ERR'];

/** The fields of a parsed debugfs qp_stats record that the waiter rule reads (qp_iter_print, hfi1 qp.c). */
export interface QpStatsWaitInput {
  qpn: number;
  stateName: QpStateName | null;
  /** The decoded s_flags in the file's layout: the I/O waits that are set. */
  flags: { waitDmaDesc: boolean; ioWaits: readonly ('dma-desc' | 'pio' | 'pio-drain' | 'tx' | 'kmem')[] };
  onList: boolean;
  sdmaPending: number;
  engine: number | null;
  /** PID: the creating thread (0 for a kernel QP); null or absent in formats without it. */
  pid?: number | null;
}

/** A stable key for one waiter across polls (the same sender seen again). */
export function waiterKey(w: WaiterIdentity): string {
  switch (w.kind) {
    case 'qp':
      return `qp:${w.qpn}`;
    case 'psm':
      return `psm:${w.pid}`;
    case 'ipoib':
      return `ipoib:${w.netdev ?? ''}:${w.txq ?? ''}`;
  }
}

/** The waiting QPs of a qp_stats read at `nowMs`: those whose s_flags has RVT_S_WAIT_DMA_DESC or that sit on a list. */
export function qpWaiters(records: readonly QpStatsWaitInput[], nowMs: number): Waiter[] {
  const byQpn = new Map<number, Waiter>();
  for (const r of records) {
    if (!r.flags.waitDmaDesc && !r.onList) continue;
    const waitsFor: WaitFor = r.flags.waitDmaDesc ? 'dma-desc' : (r.flags.ioWaits[0] ?? 'unknown');
    // A PIO, TX or KMEM waiter sits on a send-context or device list, not on an engine (pio_wait, __get_txreq,
    // hfi1_wait_kmem); the printed SDE is only meaningful for a dmawait (or an on-list QP whose flag is not yet seen).
    const onEngine = waitsFor === 'dma-desc' || waitsFor === 'unknown';
    // A read in several chunks may list a QP twice (the iterator restarts at *pos): the later line wins.
    byQpn.set(r.qpn, {
      kind: 'qp',
      qpn: r.qpn,
      qpState: r.stateName,
      ...(r.pid === undefined ? {} : { creatorPid: r.pid }),
      waitsFor,
      descriptorsNeeded: null,
      engine: onEngine ? r.engine : null,
      onList: r.onList,
      ownPending: r.sdmaPending,
      sinceMs: nowMs,
      source: 'qp_stats',
    });
  }
  return [...byQpn.values()];
}

/** Keep `sinceMs` of each waiter already seen in `previous` (same key, same wait); new ones keep theirs. */
export function carrySince(previous: readonly Waiter[], current: readonly Waiter[]): Waiter[] {
  const seen = new Map<string, Waiter>();
  for (const w of previous) seen.set(waiterKey(w), w);
  return current.map((w) => {
    const before = seen.get(waiterKey(w));
    return before && before.waitsFor === w.waitsFor && before.sinceMs < w.sinceMs ? { ...w, sinceMs: before.sinceMs } : w;
  });
}

/** The waiters on one engine. */
export function waitersOnEngine(waiters: readonly Waiter[], engine: number): Waiter[] {
  return waiters.filter((w) => w.engine === engine);
}

/** Visibility of every kind, in WAITER_KINDS order, from what the backend knows (kinds it omits are not visible). */
export function visibilityOf(known: readonly WaiterVisibility[]): WaiterVisibility[] {
  return WAITER_KINDS.map(
    (kind) =>
      known.find((v) => v.kind === kind) ?? {
        kind,
        visible: false,
        reason: 'no source of this backend shows this kind of waiter',
      },
  );
}

/** How an operator turns the user-SDMA trace events of `module` (hfi1 or hfi2) on by hand (the tool never does). */
export function traceEnableFix(module: string): string {
  return `to tie PSM writers to their engine, enable the events by hand: echo 1 > /sys/kernel/tracing/events/${module}_tx/${module}_usdma_defer/enable (likewise ${module}_usdma_activate, ${module}_usdma_we)`;
}

/** A QP's last sleep or wake-up trace event (hfi1_qpsleep, hfi1_qpwakeup; trace_tx.h). */
export interface QpSleep {
  qpn: number;
  /** Asleep: the last event is a qpsleep (a qpwakeup ends it). */
  asleep: boolean;
  /** The wait flag of that event (RVT_S_WAIT_DMA_DESC for an engine's dmawait, iowait_sleep, qp.c). */
  flags: number;
  /** Its trace timestamp (s since boot, the trace clock). */
  atSec: number;
}

/** RVT_S_WAIT_DMA_DESC in the s_flags layout of the kernels whose qpsleep events print ps_flags (rdmavt_qp.h). */
const TRACE_WAIT_DMA_DESC = 0x1000;

/** What a QP kind seen only through the trace events cannot show. */
export const QP_TRACE_PARTIAL =
  "from the qpsleep and qpwakeup trace events only: they do not name the engine, and a QP asleep since before the trace buffer's oldest event is not seen";

/**
 * The QP waiters with what the trace adds, at `nowMs` of the backend's clock when the kernel's uptime is
 * `uptimeSec`: a QP of qp_stats asleep on dmawait since a qpsleep event takes that event's time as `sinceMs`; when
 * qp_stats cannot be read, the QPs whose last event is a qpsleep on dmawait are listed from the trace (engine
 * unknown), the kind then partly visible.
 */
export function withQpSleeps(
  qp: { waiters: Waiter[]; visibility: WaiterVisibility },
  sleeps: ReadonlyMap<number, QpSleep>,
  nowMs: number,
  uptimeSec: number | null,
): { waiters: Waiter[]; visibility: WaiterVisibility } {
  const onDmawait = (s: QpSleep | undefined): s is QpSleep => s?.asleep === true && (s.flags & TRACE_WAIT_DMA_DESC) !== 0;
  const sleptAtMs = (s: QpSleep): number | null => (uptimeSec === null ? null : nowMs - Math.max(0, uptimeSec - s.atSec) * 1000);
  if (qp.visibility.visible) {
    const waiters = qp.waiters.map((w) => {
      if (w.kind !== 'qp' || w.waitsFor !== 'dma-desc') return w;
      const s = sleeps.get(w.qpn);
      const at = onDmawait(s) ? sleptAtMs(s) : null;
      return at !== null && at < w.sinceMs ? { ...w, sinceMs: at } : w;
    });
    return { waiters, visibility: qp.visibility };
  }
  const waiters: Waiter[] = [...sleeps.values()].filter(onDmawait).map((s) => ({
    kind: 'qp',
    qpn: s.qpn,
    qpState: null,
    waitsFor: 'dma-desc',
    descriptorsNeeded: null,
    engine: null,
    onList: null,
    ownPending: null,
    sinceMs: sleptAtMs(s) ?? nowMs,
    source: 'trace',
  }));
  const why = qp.visibility.reason ? `; qp_stats: ${qp.visibility.reason}` : '';
  return { waiters, visibility: { kind: 'qp', visible: true, source: 'trace', partial: `${QP_TRACE_PARTIAL}${why}` } };
}
