// Helpers for the emulator tests: a unit with no traffic, brought to s99_Running, and txreqs of a
// given descriptor count built with src/progress/txreq.ts.
import { INT_IDLE, INT_PROGRESS } from '../../src/emu/chip.js';
import { IoWait, SleepKind, type WaitClient } from '../../src/emu/iowait.js';
import { EmuTx, type TxOwner } from '../../src/emu/tx.js';
import { EmuUnit, type EmuUnitOptions } from '../../src/emu/unit.js';
import { buildTx, isTxFailure, type TxReq } from '../../src/progress/txreq.js';

export { INT_IDLE, INT_PROGRESS };

/** A unit with the `idle` workload run until every engine is in s99_Running, chips paused. */
export function quietUnit(opts: EmuUnitOptions = {}): EmuUnit {
  const u = new EmuUnit({ workload: 'idle', engines: 2, ...opts });
  u.runUntilMs(2);
  u.pause();
  return u;
}

/** A finished txreq of `numDesc` descriptors: a 64-byte header and numDesc − 1 payload pieces. */
export function txOf(numDesc: number, flags = 0): TxReq {
  const fragments = Array.from({ length: numDesc }, (_, i) => ({
    kind: i === 0 ? ('single' as const) : ('page' as const),
    len: 64,
  }));
  const tx = buildTx({ flags, tlen: 64 * numDesc, fragments });
  if (isTxFailure(tx)) throw new Error(tx.message);
  return tx;
}

/** Completions as they happen. */
export class Recorder implements TxOwner {
  readonly done: { tx: EmuTx; status: number }[] = [];
  complete(tx: EmuTx, status: number): void {
    this.done.push({ tx, status });
  }
  /** A pooled-style txreq owned by this recorder. */
  tx(req: TxReq): EmuTx {
    return new EmuTx(this).load(req);
  }
}

/** An iowait whose wake-ups are recorded (with the head-lock sequence seen at the time). */
export class Waiter implements WaitClient {
  readonly wakes: { flushed: boolean; seq: number }[] = [];
  readonly wait: IoWait;
  seqAtWake: () => number = () => -1;
  constructor(kind: 'qp' | 'psm' = 'qp', id = 100) {
    this.wait = new IoWait(id, kind === 'qp' ? SleepKind.qp : SleepKind.psm, this);
  }
  wakeup(_w: IoWait, flushed: boolean): void {
    this.wakes.push({ flushed, seq: this.seqAtWake() });
  }
  canSend(): boolean {
    return true;
  }
}

/** A two-port CN5000 under the Cornelis hfi1, four engines on small rings, a light QP load: the port-side tests' unit. */
export const TWO_PORT_CN5000: EmuUnitOptions = {
  seed: 3,
  chip: 'jkr',
  driver: 'cornelis',
  ports: 2,
  engines: 4,
  descqCnt: 256,
  workload: 'qp:gbps=5',
};
