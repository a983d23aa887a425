// One line rule of the kernel-log reader: a pattern for the message after the device prefix, and what a
// match records in the parse state of its unit.
import type { ChipName } from '../progress/chip.js';
import type { LogEvent, LogUnit } from './parse.js';

/** A newer dump's `[desc N]` tag: the engine it names and the last descriptor printed under it. */
export interface TaggedDump {
  /** Undefined when the descriptor lines came before (or without) their dump. */
  engine: number | undefined;
  desc: LogEvent | undefined;
}

/** The parse state a rule sees for the line's unit. */
export interface Ctx {
  unit: LogUnit;
  /** The chip whose layout decodes descriptor qwords (the caller's choice, never guessed from a line). */
  chip: ChipName;
  /** The engine of the last ring dump (upstream descriptor lines carry none). */
  engine: number | undefined;
  /** The descriptor an untagged continuation line (desc0:, aidx:) belongs to. */
  desc: LogEvent | undefined;
  /** The newer dumps' tags of this unit. */
  tags: Map<number, TaggedDump>;
  /** The unit's last IPoIB timeout block, which its later lines complete (ipoib.ts). */
  block: LogEvent | undefined;
  /** The port the line's prefix names (`hfi2_0.1:` is port 2); 1 under the unit's own prefix. */
  port: number;
  emit(e: Omit<LogEvent, 'line' | 'unit' | 'ts'>): LogEvent;
}

/** A message pattern and what a match records. */
export interface Rule {
  re: RegExp;
  apply: (m: RegExpExecArray, ctx: Ctx) => void;
}
