// Bounded reads: a source that blocks (a hung debugfs read, an NFS-mounted sysroot) costs a round its
// timeout once, and the unit is not read again until that read settles, so reads never pile up.
import type { EngineSample, Unit } from '../backend.js';
import { type Hfi1SdmaError, isHfi1SdmaError } from '../errors.js';

/** A timer that can be cancelled (injected so tests need no wall-clock waits). */
export type Timer = (ms: number) => { done: Promise<void>; cancel(): void };

/** The real timer; it never keeps the process alive. */
export const realTimer: Timer = (ms) => {
  let t: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    t = setTimeout(resolve, ms);
    t.unref();
  });
  return { done, cancel: () => clearTimeout(t) };
};

/** How a unit's sample went. */
export type SampleOutcome =
  | { ok: true; samples: EngineSample[] }
  | { ok: false; message: string; gone: boolean; error: Hfi1SdmaError | null; late: boolean; defect?: unknown };

/** Reads of one monitor, each bounded by `limitMs` (unbounded when null). */
export class BoundedReads {
  /** A sample still running after its timeout, by unit name: the unit is not sampled again until it settles. */
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor(
    private readonly limitMs: number | null,
    private readonly timer: Timer = realTimer,
  ) {}

  /** Whether a late sample is still running on some unit. */
  busy(): boolean {
    return this.pending.size > 0;
  }

  /** Sample one unit, never waiting on it longer than the limit. An error not of ours is a failure carrying it as `defect`. */
  async sample(unit: Unit): Promise<SampleOutcome> {
    const name = unit.info.name;
    if (this.pending.has(name)) {
      return { ok: false, message: 'the previous sample has not finished yet', gone: false, error: null, late: true };
    }
    let result: SampleOutcome | null = null;
    const sample = unit.sample().then(
      (samples) => {
        result = { ok: true, samples };
      },
      (e: unknown) => {
        if (!isHfi1SdmaError(e)) {
          result = {
            ok: false,
            message: e instanceof Error ? e.message : String(e),
            gone: false,
            error: null,
            late: false,
            defect: e,
          };
          return;
        }
        result = { ok: false, message: e.message, gone: e.code === 'E_DEVICE_GONE', error: e, late: false };
      },
    );
    if (this.limitMs === null) {
      await sample;
    } else {
      const t = this.timer(this.limitMs);
      await Promise.race([sample, t.done]);
      t.cancel();
    }
    if (result !== null) return result;
    this.pending.set(name, sample);
    void sample.finally(() => this.pending.delete(name));
    return { ok: false, message: `no answer within ${this.limitMs} ms (a source blocks)`, gone: false, error: null, late: true };
  }

  /** `p`, or null when it takes longer than the limit (a late rejection is then ignored). */
  async within<T>(p: Promise<T>): Promise<T | null> {
    if (this.limitMs === null) return p;
    p.catch(() => undefined);
    const t = this.timer(this.limitMs);
    try {
      return await Promise.race([p, t.done.then(() => null)]);
    } finally {
      t.cancel();
    }
  }
}
