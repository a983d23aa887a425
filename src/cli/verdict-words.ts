// What every verdict and reason means, once: the manual's VERDICTS and WAITERS lists are made from these tables,
// and a test checks that the README names every reason.
import type { Reason, Verdict } from '../progress/classify.js';
import type { WaiterReason, WaiterVerdict } from '../progress/strand.js';

/** An engine verdict: what it means and the reasons it is given with. */
export const VERDICT_WORDS: Readonly<Record<Verdict, { meaning: string; reasons: readonly Reason[] }>> = {
  idle: { meaning: 'nothing in flight', reasons: ['empty', 'bulk-service'] },
  progressing: {
    meaning: 'work in flight and the head moved within `--stall-ms`',
    reasons: ['moving', 'waiting', 'writeback-stalled'],
  },
  backpressure: { meaning: 'progressing while the descq-full count rises: senders find the ring full', reasons: ['ring-full'] },
  stalled: {
    meaning: 'work in flight, engine running, no head movement for `--stall-ms`, confirmed by a second sample',
    reasons: ['chip-not-fetching', 'retirement-lost', 'no-head-movement', 'no-credits', 'link-lost'],
  },
  halted: {
    meaning: 'a state other than running or idle beyond the recovery window, or a halt-class error',
    reasons: ['state', 'status-halted', 'error-bits'],
  },
  gone: {
    meaning: 'the device was reset or fell off the bus: every read command prints what it could and exits 69',
    reasons: ['registers-all-ones'],
  },
  unknown: {
    meaning: 'no verdict yet, or none possible from what can be read',
    reasons: ['warming-up', 'stall-suspected', 'recovering', 'single-instant-capture', 'no-ring-state'],
  },
};

/** Every engine reason. */
export const REASON_WORDS: Readonly<Record<Reason, string>> = {
  'chip-not-fetching': 'the hardware head and the fetched counter are frozen while the hardware tail is ahead: the chip stopped',
  'retirement-lost': 'the chip moved past the software head: a lost interrupt, or a stuck handler',
  'no-head-movement': 'no head moves and neither more specific cause shows',
  'no-credits':
    'its port is ACTIVE and its XmitWait rises while it sends next to nothing: the far end returns no credits (a fabric stall, not the host)',
  'link-lost': 'a port it sends on lost its link or retrained during the stall',
  'writeback-stalled':
    'the head written back to host memory is frozen while the HEAD register moves (the driver reads the register)',
  moving: 'the head moved this interval',
  waiting: 'no movement this interval, but within `--stall-ms`',
  'ring-full': 'the descq-full count rose',
  empty: 'nothing in flight',
  'bulk-service': "the Cornelis hfi1's bulk service (use_bulksvc=Y) owns the engine: its ring is not SDMA's and is not judged",
  state: 'a non-operational state outlasted the recovery window',
  'status-halted': 'SEND_DMA_STATUS says halted',
  'error-bits': 'a halt-class ENG_ERR_STATUS bit is set',
  'registers-all-ones': 'its registers read all-ones',
  'no-ring-state': 'only interrupt counts are readable, so work in flight is not known',
  'warming-up': 'too few samples',
  'stall-suspected': 'no movement for `--stall-ms`, awaiting the confirming sample',
  recovering: 'a halt or clean-up inside its recovery window',
  'single-instant-capture': 'a snapshot of one instant, which supports no time-based verdict',
};

/** A waiter verdict: what it means and its reasons. */
export const WAITER_VERDICT_WORDS: Readonly<Record<WaiterVerdict, { meaning: string; reasons: readonly WaiterReason[] }>> = {
  waiting: {
    meaning: 'a normal wait',
    reasons: ['engine-busy', 'own-pending', 'other-list', 'off-list', 'confirming', 'unit-busy'],
  },
  stranded: {
    meaning:
      'waiting for descriptors, on a wait list, with nothing of its own in flight, on an engine that is running, empty and quiet for 3 samples spanning `--strand-ms`: the wake-up was lost, and a QP waits until other traffic uses the engine or it is destroyed; probable (`stranded?`) while another engine of its VL is busy and short of room, or the VL map is unknown',
    reasons: ['lost-wakeup', 'batch-limit'],
  },
  orphaned: {
    meaning: 'waiting on an engine that is not running (the link is down, or a flush left it)',
    reasons: ['engine-not-running'],
  },
  'psm-stall': {
    meaning: 'a PSM writer blocked on an idle, quiet unit: it gives up after 1 s and retries, a repeated stall, not a hang',
    reasons: ['lost-wakeup'],
  },
  'error-state': { meaning: 'a QP in ERR left on a wait list: harmless until destroyed', reasons: ['qp-error'] },
  unknown: { meaning: 'it cannot be judged', reasons: ['engine-unknown', 'no-ring-state', 'device-gone'] },
};

/** Every waiter reason. */
export const WAITER_REASON_WORDS: Readonly<Record<WaiterReason, string>> = {
  'engine-busy': 'its engine has work in flight or moved: a retirement will harvest it',
  'own-pending': 'descriptors of its own are in flight, and their retirement wakes it',
  'other-list': "a PIO, TX or KMEM wait, not an engine's wait list",
  'off-list': 'the wait flag without the on-list bit (a torn read, or a wake-up in progress)',
  confirming: 'the rule holds, for fewer than 3 samples or less than `--strand-ms` so far',
  'unit-busy': 'a PSM writer whose engine is not known while some engine of its unit is busy',
  'lost-wakeup': 'asleep on a running, empty, quiet engine',
  'batch-limit': 'as lost-wakeup, with more than 20 waiters on the engine (the driver wakes at most 20 a pass)',
  'engine-not-running': 'its engine is not in s99_Running',
  'qp-error': 'the QP is in ERR',
  'engine-unknown': 'no engine named, or no sample of it',
  'no-ring-state': "its engine's ring is not readable",
  'device-gone': 'the device reads all-ones: the device is the finding, not its waiters',
};

function list<V extends string, R extends string>(
  verdicts: Readonly<Record<V, { meaning: string; reasons: readonly R[] }>>,
  reasons: Readonly<Record<R, string>>,
): string {
  return `${Object.entries<{ meaning: string; reasons: readonly R[] }>(verdicts)
    .map(([v, w]) => {
      const why = w.reasons.map((r) => `\`${r}\`, ${reasons[r]}`).join('; ');
      return `* \`${v}\`: ${w.meaning}. ${w.reasons.length === 1 ? 'Reason' : 'Reasons'}: ${why}.`;
    })
    .join('\n')}\n`;
}

/** The manual's list of engine verdicts with every reason. */
export function verdictSection(): string {
  return list(VERDICT_WORDS, REASON_WORDS);
}

/** The manual's list of waiter verdicts with every reason. */
export function waiterVerdictSection(): string {
  return list(WAITER_VERDICT_WORDS, WAITER_REASON_WORDS);
}
