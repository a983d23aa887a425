// One error type for the whole program. Code branches on `code`, never on message text.
// Exit codes follow BSD sysexits, as the README's exit-code table fixes them for every command other than
// `health` and `progress` (which have their own documented codes).

/** Stable error codes; scripts and tests may rely on them. */
export type ErrorCode =
  | 'E_USAGE' // a bad flag or argument
  | 'E_PARSE' // malformed input: debugfs text, counters, a kernel log, a snapshot
  | 'E_NO_DEVICE' // no such unit
  | 'E_NO_ENGINE' // no such engine on the unit
  | 'E_NO_INPUT' // an input file named on the command line does not exist
  | 'E_UNAVAILABLE' // a source exists in principle but cannot be read here (not mounted, not bound)
  | 'E_DEVICE_GONE' // registers read all-ones: the device fell off the bus or was reset
  | 'E_PERMISSION' // the source needs privileges this process does not have
  | 'E_CANT_CREATE' // an output (file, directory, listening socket) cannot be created where asked
  | 'E_IO' // a write failed part-way (ENOSPC, EIO): the old output is kept, nothing is left behind
  | 'E_INTERNAL'; // a defect in this program

/** Exit status for each code (sysexits.h: EX_USAGE 64, EX_DATAERR 65, EX_NOINPUT 66, …). */
export const EXIT_CODES: Readonly<Record<ErrorCode, number>> = {
  E_USAGE: 64,
  E_PARSE: 65,
  E_NO_DEVICE: 66,
  E_NO_ENGINE: 66,
  E_NO_INPUT: 66,
  E_UNAVAILABLE: 69,
  E_DEVICE_GONE: 69,
  E_PERMISSION: 77,
  E_CANT_CREATE: 73,
  E_IO: 74,
  E_INTERNAL: 70,
};

/** Marks every Hfi1SdmaError, whichever copy of this module made it (the pure core's entry is bundled whole). */
const BRAND = Symbol.for('hfi1-sdma.error');

/** The base error: a stable code, a message that says what happened and what to do. */
export class Hfi1SdmaError extends Error {
  readonly code: ErrorCode;

  /**
   * `e instanceof Hfi1SdmaError` holds for an error of any copy of this class, so that one thrown by
   * `hfi1-sdma/progress` (a bundle of its own) is one of `hfi1-sdma`'s too; subclasses test as usual.
   */
  static override [Symbol.hasInstance](e: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class tested against, a subclass included
    if (this !== Hfi1SdmaError) return Function.prototype[Symbol.hasInstance].call(this, e);
    return typeof e === 'object' && e !== null && (e as { [BRAND]?: unknown })[BRAND] === true;
  }

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'Hfi1SdmaError';
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** The process exit status this error maps to. */
  get exitCode(): number {
    return EXIT_CODES[this.code];
  }
}

// The class keeps its name in a minified bundle, for a caller that prints `e.constructor.name`.
Object.defineProperty(Hfi1SdmaError, 'name', { value: 'Hfi1SdmaError' });

/** Where in an input a parse failed. `line` and `column` count from 1. */
export interface ParsePosition {
  file: string;
  line: number;
  column: number;
  /** The offending text (the whole line, cut to a readable length). */
  text: string;
}

/** Malformed input. The message names the file, line, column and text. */
export class ParseError extends Hfi1SdmaError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly text: string;

  constructor(pos: ParsePosition, what: string, options?: { cause?: unknown }) {
    const shown = pos.text.length > 160 ? `${pos.text.slice(0, 157)}...` : pos.text;
    // JSON escapes C0 controls; DEL, C1 and the bidirectional controls are escaped too, so no control character reaches a terminal.
    const quoted = JSON.stringify(shown).replace(
      /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    super('E_PARSE', `${pos.file}:${pos.line}:${pos.column}: ${what}\n  ${quoted}`, options);
    this.name = 'ParseError';
    this.file = pos.file;
    this.line = pos.line;
    this.column = pos.column;
    this.text = pos.text;
  }
}

Object.defineProperty(ParseError, 'name', { value: 'ParseError' });

/** A bad argument or flag: exit 64 with the message. */
export function usageError(message: string): Hfi1SdmaError {
  return new Hfi1SdmaError('E_USAGE', message);
}

/** True for our own errors (as opposed to defects and Node's errors). */
export function isHfi1SdmaError(e: unknown): e is Hfi1SdmaError {
  return e instanceof Hfi1SdmaError;
}
