// The waiters of an emulated unit, straight from the model: every iowait on an engine's dmawait list, named as
// a live host would name it (a QP by QPN and state, a PSM writer by PID and command, an IPoIB queue by netdev and
// queue index: a live host cannot see those, the model can).
import type { QpStateName, Waiter, WaitersSample, WaiterVisibility } from '../backend.js';
import { WAITER_KINDS } from '../progress/waiters.js';
import type { Engine } from './engine.js';
import { type IoWait, SleepKind } from './iowait.js';
import { emuNetdev } from './ipoib.js';
import type { Sender } from './sender.js';

/** QPN of the emulated QP sender `id`: 0x100 + id (QP0 and QP1 are the port's specials). */
export const EMU_QPN_BASE = 0x100;
/** PID of the emulated PSM writer `id`: 20000 + id. */
export const EMU_PID_BASE = 20000;
/** PID of the process owning the QP sender `id` (qp-owners.ts): 30000 + id. */
export const EMU_QP_PID_BASE = 30000;
/** ib_qp_state of every emulated QP: RTS (3). */
export const EMU_QP_STATE = 3;

/** QPN of the sender (or bare iowait) `id`. */
export function emuQpn(id: number): number {
  return EMU_QPN_BASE + id;
}

/** enum ib_qp_state (ib_verbs.h) by name: what qp_stats prints in its state column. */
export const QP_STATE_NUMBERS: Readonly<Record<QpStateName, number>> = {
  RESET: 0,
  INIT: 1,
  RTR: 2,
  RTS: 3,
  SQD: 4,
  SQE: 5,
  ERR: 6,
};

/** The QPN of a QP sender: the one a seed named it by, else the emulator's. */
export function senderQpn(s: Sender): number {
  return s.identity?.qpn ?? emuQpn(s.id);
}

/** The state of a QP sender: the one a seed named, else RTS. */
export function senderQpState(s: Sender): QpStateName {
  return s.identity?.qpState ?? 'RTS';
}

/** The PID of a PSM writer: the one a seed named, else the emulator's. */
export function senderPsmPid(s: Sender, unit: number): number {
  return s.identity?.pid ?? emuPid(s.id, unit);
}

/** The command of a PSM writer: the one a seed named, else mpi_rank_<rank>. */
export function senderPsmCommand(s: Sender): string {
  return s.identity?.command ?? emuCommand(s.rank);
}

/** PIDs of unit N's processes are N times this above unit 0's: two units of one host run other processes. */
export const EMU_PID_UNIT_STRIDE = 100_000;

/** PID of the PSM writer (or bare iowait) `id` of unit `unit`. */
export function emuPid(id: number, unit = 0): number {
  return EMU_PID_BASE + unit * EMU_PID_UNIT_STRIDE + id;
}

/** Command of the PSM writer of rank `rank` among the unit's PSM writers. */
export function emuCommand(rank: number): string {
  return `mpi_rank_${rank}`;
}

/** What a model needs to list its waiters: engines, the senders by id, and the clock. */
export interface WaiterModel {
  readonly engines: readonly Engine[];
  readonly senders: readonly Sender[];
  readonly nowMs: number;
  readonly info: { unit: number };
}

const VISIBLE: WaiterVisibility[] = WAITER_KINDS.map((kind) => ({ kind, visible: true, source: 'model' }));

/** One waiter from an iowait asleep on engine `e`. */
export function modelWaiter(m: WaiterModel, e: Engine, w: IoWait): Waiter {
  const sender = m.senders[w.id];
  const own = sender !== undefined && sender.wait === w ? sender : null;
  const common = {
    waitsFor: 'dma-desc' as const,
    descriptorsNeeded: w.txHead[0]?.numDesc ?? w.needDesc,
    engine: e.idx,
    onList: true,
    ownPending: w.sdmaBusy,
    sinceMs: w.sleptAtNs / 1e6,
    source: 'model' as const,
  };
  if (w.sleepKind === SleepKind.qp) {
    return {
      kind: 'qp',
      qpn: own ? senderQpn(own) : emuQpn(w.id),
      qpState: own ? senderQpState(own) : 'RTS',
      creatorPid: own?.identity?.pid ?? EMU_QP_PID_BASE + m.info.unit * EMU_PID_UNIT_STRIDE + w.id,
      ...common,
    };
  }
  if (w.sleepKind === SleepKind.ipoib) {
    const q = own?.ipoib ?? null;
    const waiter: Waiter = {
      kind: 'ipoib',
      netdev: emuNetdev(m.info.unit, 1, e.host.ports.length),
      txq: q ? q.txq : null,
      ...common,
    };
    if (q && own) {
      const stopped = q.subqueueStopped ? 1 : 0;
      waiter.evidence = {
        stopped: q.subqueueStopped,
        stops: stopped,
        noDesc: stopped,
        ringFull: 0,
        sent: q.placed,
        completed: q.placed - own.outstanding,
        used: own.outstanding,
        waitQueued: true,
        timeouts: q.timeouts,
        lastTimeoutMs: q.lastTimeoutNs < 0 ? null : q.lastTimeoutNs / 1e6,
        source: 'model',
      };
    }
    return waiter;
  }
  if (own) return { kind: 'psm', pid: senderPsmPid(own, m.info.unit), command: senderPsmCommand(own), ...common };
  return { kind: 'psm', pid: emuPid(w.id, m.info.unit), command: emuCommand(w.id), ...common };
}

/** Every sender asleep on a dmawait list of the unit now; every kind is visible through the model. */
export function modelWaiters(m: WaiterModel): WaitersSample {
  const waiters: Waiter[] = [];
  for (const e of m.engines) for (const w of e.dmawait) waiters.push(modelWaiter(m, e, w));
  return { unit: m.info.unit, timeMs: m.nowMs, waiters, visibility: VISIBLE.map((v) => ({ ...v })) };
}
