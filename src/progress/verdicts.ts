// Every verdict and reason the classifier can give, for consumers that must list them all (the
// exporter exports each as a 0/1 series, so series are stable).
import { REASONS, type Reason, VERDICTS, type Verdict } from './classify.js';

/** Every verdict of the classifier. */
export const ALL_VERDICTS: readonly Verdict[] = VERDICTS;

/** Every reason of the classifier. */
export const ALL_REASONS: readonly Reason[] = REASONS;
