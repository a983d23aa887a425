// The warnings a unit's sources raised: each said once (by key), kept for Unit.warnings().
import type { SourceName, SourceWarning } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';

/** Distinct warnings by key, in the order first seen. */
export class WarningLog {
  private readonly byKey = new Map<string, SourceWarning>();

  constructor(initial: readonly SourceWarning[] = []) {
    for (const w of initial) this.add(w);
  }

  /** Record a warning unless one with the same key was recorded already. */
  add(w: SourceWarning): void {
    if (!this.byKey.has(w.key)) this.byKey.set(w.key, w);
  }

  /** Record that a source was left out because of `e`, and what stood in for it. */
  leftOut(source: SourceName, path: string, key: string, e: unknown, instead: string): void {
    const what = e instanceof Error ? e.message.split('\n')[0] : String(e);
    this.add({ source, path, key, message: `${what}; ${instead}` });
  }

  /** Every warning so far. */
  all(): readonly SourceWarning[] {
    return [...this.byKey.values()];
  }
}

/**
 * The one rule for a source that is present but cannot be used (malformed, not a regular file,
 * larger than it can be): it is left out when another source gives what it gives, else it fails.
 * True when the error is of that kind (a parse error or an unavailable file), not a lost device
 * or a missing privilege, which keep their own meaning.
 */
export function isSourceFault(e: unknown): boolean {
  return isHfi1SdmaError(e) && (e.code === 'E_PARSE' || e.code === 'E_UNAVAILABLE');
}
