// Waiter records for tests: a QP asleep for descriptors and a PSM writer seen through /proc, with
// the fields a test cares about overridden.
import type { Waiter } from '../../src/backend.js';

/** A QP in RTS waiting for 3 descriptors on engine 2, on the list, nothing of its own in flight. */
export function qpWaiter(over: Partial<Waiter & { kind: 'qp' }> = {}): Waiter {
  return {
    kind: 'qp',
    qpn: 0x12,
    qpState: 'RTS',
    waitsFor: 'dma-desc',
    descriptorsNeeded: 3,
    engine: 2,
    onList: true,
    ownPending: 0,
    sinceMs: 0,
    source: 'model',
    ...over,
  } as Waiter;
}

/** A PSM writer blocked in the user SDMA request, engine unknown (as /proc shows it). */
export function psmWaiter(over: Partial<Waiter & { kind: 'psm' }> = {}): Waiter {
  return {
    kind: 'psm',
    pid: 4242,
    command: 'mpi_rank',
    waitsFor: 'dma-desc',
    descriptorsNeeded: null,
    engine: null,
    onList: null,
    ownPending: null,
    sinceMs: 0,
    source: 'proc',
    ...over,
  } as Waiter;
}
