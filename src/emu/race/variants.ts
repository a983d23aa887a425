// The orders of the submitter's shortage path the explorer compares (sdma_check_progress and the
// sleep callbacks iowait_sleep / defer_packet_queue).

/**
 * The submitter orders: today's kernel (sdma_check_progress: free count, then the sample, then the
 * sleep callback), the PSM callback before 2019, no progress check at all, and the kernel's order with the
 * sequence sampled before the free count is recomputed.
 */
export const VARIANTS = ['kernel', 'psm-pre-2019', 'no-progress-check', 'kernel-sample-first'] as const;

export type Variant = (typeof VARIANTS)[number];

/** defer_packet_queue before 2019 retried an -EAGAIN at most this often per txreq. */
export const MAX_DEFER_RETRY_COUNT = 1;

/** One line per variant: the order of its shortage path after the free-count check. */
export const VARIANT_ORDER: Readonly<Record<Variant, string>> = {
  kernel:
    'free count, sample head_lock, take waitlock, sdma_progress, enqueue on dmawait, release (sdma_check_progress; iowait_sleep for a QP, defer_packet_queue for a PSM queue)',
  'psm-pre-2019':
    'PSM: sdma_progress outside waitlock (one retry), then take waitlock, enqueue, release (defer_packet_queue before the 2019 fix); QP: as kernel (iowait_sleep)',
  'no-progress-check': 'take waitlock, enqueue on dmawait, release: no sdma_progress at all',
  'kernel-sample-first': 'sample head_lock before recomputing the free count, then as kernel',
};

/** True for a known variant name. */
export function isVariant(name: string): name is Variant {
  return (VARIANTS as readonly string[]).includes(name);
}

/** The variant samples head_lock before it recomputes the free count. */
export function samplesFirst(v: Variant): boolean {
  return v === 'kernel-sample-first';
}
