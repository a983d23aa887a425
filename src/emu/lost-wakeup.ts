// The fault `lost-wakeup[:qp|psm|ipoib]@T[:E]`: opens the window of sdma_check_progress (sdma.c) once,
// deterministically. At T the engine's other senders end their jobs and one sender (a QP if the engine has one, else
// a PSM writer, else an accelerated-IPoIB queue, or the kind named) fills the ring. When its next request does not fit, its CPU stalls after the free-count load and
// before the head_lock sample; meanwhile the chip completes the whole ring and the interrupt handler retires it,
// running sdma_desc_avail while the sender is not yet on dmawait. The sample then sees a sequence no retirement will
// move again, sdma_progress answers 0, and the sender sleeps on an engine that is running, empty and quiet: a QP or
// an IPoIB queue stays there (neither has a timeout), a PSM writer gives up after SDMA_IOWAIT_TIMEOUT (1 s) and retries.
import { usageError } from '../errors.js';
import { INT_IDLE } from './chip.js';
import type { Engine } from './engine.js';
import { type FaultSpec, LOST_WAKEUP_KIND } from './faults.js';
import type { Host } from './host.js';
import type { IoWait } from './iowait.js';
import { engineInterrupt } from './retire.js';
import type { Sender } from './sender.js';

const KIND_NAMES = { qp: 'QP', psm: 'PSM', ipoib: 'IPoIB' } as const;

/** The senders armed per engine, and the fault text that armed each engine, by unit. */
interface Armed {
  victims: Map<number, Sender>;
  faults: Map<number, string>;
  vectorCounts: number[];
}
const armedByHost = new WeakMap<Host, Armed>();

/** The sender a `lost-wakeup` fault with `param` picks on engine `engine`, or null when there is none. */
export function lostWakeupVictim(senders: readonly Sender[], engine: number, param: number): Sender | null {
  const kind = LOST_WAKEUP_KIND[param] ?? 'auto';
  const on = senders.filter((s) => s.engine.idx === engine && s.spec.load > 0);
  if (kind === 'auto') {
    return (
      on.find((s) => s.spec.kind === 'qp') ??
      on.find((s) => s.spec.kind === 'psm') ??
      on.find((s) => s.spec.kind === 'ipoib') ??
      null
    );
  }
  return on.find((s) => s.spec.kind === kind) ?? null;
}

/** Refuse a `lost-wakeup` fault aimed at an engine without a sender of the kind it needs (a usage error). */
export function checkLostWakeup(senders: readonly Sender[], engineIds: readonly number[], f: FaultSpec, workload: string): void {
  const kind = LOST_WAKEUP_KIND[f.param] ?? 'auto';
  const which = f.engine === null ? engineIds : [f.engine];
  for (const i of which) {
    if (lostWakeupVictim(senders, i, f.param) === null) {
      throw usageError(
        `--fault ${JSON.stringify(f.text)}: engine ${i} has no ${kind === 'auto' ? 'QP, PSM or IPoIB' : KIND_NAMES[kind]} sender in workload ${JSON.stringify(workload)}; pick an engine that has one or a workload with senders (e.g. mixed)`,
      );
    }
  }
}

/** The text of the `lost-wakeup` fault that armed engine `engine` of this unit, or null. */
export function lostWakeupFaultOn(host: Host, engine: number): string | null {
  return armedByHost.get(host)?.faults.get(engine) ?? null;
}

/** Whether a `lost-wakeup` fault has armed engine `engine` and not yet stalled its sender. */
export function lostWakeupArmed(host: Host, engine: number): boolean {
  return armedByHost.get(host)?.victims.has(engine) ?? false;
}

/** Apply a `lost-wakeup` fault to engine `e` when its time comes. */
export function armLostWakeup(host: Host, e: Engine, senders: readonly Sender[], f: FaultSpec, vectorCounts: number[]): void {
  const victim = lostWakeupVictim(senders, e.idx, f.param);
  if (victim === null) return;
  let armed = armedByHost.get(host);
  if (!armed) {
    const a: Armed = { victims: new Map(), faults: new Map(), vectorCounts };
    armedByHost.set(host, a);
    armed = a;
    const previous = host.beforeSeqSample;
    host.beforeSeqSample = (engine, wait) => {
      previous?.(engine, wait);
      stall(a, engine, wait);
    };
  }
  armed.victims.set(e.idx, victim);
  armed.faults.set(e.idx, f.text);
  for (const s of senders) if (s.engine === e && s !== victim) s.stopped = true;
  victim.burst = true;
  if (!victim.asleep) victim.start(host.sched.nowNs);
}

/** The stalled CPU: the chip finishes the ring and the interrupt handler retires it before the sample is taken. */
function stall(armed: Armed, engine: number, wait: IoWait): void {
  const victim = armed.victims.get(engine);
  if (!victim || victim.wait !== wait) return;
  const e = victim.engine;
  // Descriptors of this very call not yet handed to the chip (sdma_send_txlist writes TAIL at its end) would retire
  // later and wake the sender: wait for a call whose first request is the one that does not fit.
  if (e.chip.hwTail !== (e.descqTail & e.mask)) return;
  armed.victims.delete(engine);
  victim.burst = false;
  const bits = e.chip.drainNow();
  armed.vectorCounts[e.pos] = (armed.vectorCounts[e.pos] ?? 0) + 1;
  engineInterrupt(e, bits !== 0 ? bits : INT_IDLE);
  e.chip.kick();
}
