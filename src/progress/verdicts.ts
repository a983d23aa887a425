// Every verdict and reason the classifier can give, as lists, for consumers that must show each
// one (the exporter's stable 0/1 series). The records are keyed by the classifier's types, so a
// verdict or reason added there fails the type check here until it is listed.
import type { Reason, Verdict } from './classify.js';

const VERDICT_KEYS: Readonly<Record<Verdict, true>> = {
  idle: true,
  progressing: true,
  stalled: true,
  halted: true,
  backpressure: true,
  gone: true,
};

const REASON_KEYS: Readonly<Record<Reason, true>> = {
  'chip-not-fetching': true,
  'retirement-lost': true,
  'writeback-stalled': true,
  'no-head-movement': true,
  'ring-full': true,
  state: true,
  'status-halted': true,
  'error-bits': true,
  recovering: true,
  waiting: true,
  moving: true,
  empty: true,
  'registers-all-ones': true,
  'no-ring-state': true,
};

/** Every verdict of the classifier. */
export const ALL_VERDICTS: readonly Verdict[] = Object.keys(VERDICT_KEYS) as Verdict[];

/** Every reason of the classifier. */
export const ALL_REASONS: readonly Reason[] = Object.keys(REASON_KEYS) as Reason[];
