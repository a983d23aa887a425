// Small helpers shared by the parsers: positions for ParseError, strict numbers, byte literals.
import { ParseError } from '../../errors.js';

/** A line of `text` (1-based) with its start offset, for error messages. */
export function lineAt(text: string, offset: number): { line: number; column: number; text: string } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  const end = text.indexOf('\n', start);
  return { line, column: offset - start + 1, text: text.slice(start, end === -1 ? undefined : end) };
}

/** A ParseError at `offset` of `text` (the whole input), naming file, line and column. */
export function errorAt(file: string, text: string, offset: number, what: string): ParseError {
  return new ParseError({ file, ...lineAt(text, offset) }, what);
}

/** Bytes of an ASCII literal, for comparisons in a byte scan. */
export function ascii(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/** True when `lit` occurs in `buf` at `p`. */
export function matchAt(buf: Uint8Array, p: number, lit: Uint8Array): boolean {
  if (p + lit.length > buf.length) return false;
  for (let i = 0; i < lit.length; i++) if (buf[p + i] !== lit[i]) return false;
  return true;
}

/** Hex digit values by byte; −1 for anything else. */
export const HEX_VALUE: Int8Array = (() => {
  const t = new Int8Array(256).fill(-1);
  for (let i = 0; i < 10; i++) t[48 + i] = i;
  for (let i = 0; i < 6; i++) {
    t[97 + i] = 10 + i;
    t[65 + i] = 10 + i;
  }
  return t;
})();

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const SIGNED = /^-?(0|[1-9][0-9]*)$/;
const HEX = /^0x[0-9a-fA-F]{1,16}$/;

/** An unsigned decimal no larger than `max` (as printf %u prints it), or null. */
export function decimalOrNull(s: string, max: number): number | null {
  if (!DECIMAL.test(s) || s.length > 16) return null;
  const v = Number(s);
  return v <= max ? v : null;
}

/** A signed decimal from `min` to `max` (printf %d), or null. */
export function signedOrNull(s: string, min: number, max: number): number | null {
  if (!SIGNED.test(s) || s.length > 17) return null;
  const v = Number(s);
  return v >= min && v <= max ? v : null;
}

/** `0x` and 1–16 hex digits (printf 0x%llx), as a bigint, or null. */
export function hex64OrNull(s: string): bigint | null {
  return HEX.test(s) ? BigInt(s) : null;
}

/** An unsigned decimal up to 2^64 − 1 (printf %llu) as a bigint, or null. */
export function decimal64OrNull(s: string): bigint | null {
  if (!DECIMAL.test(s) || s.length > 20) return null;
  const v = BigInt(s);
  return v <= 0xffff_ffff_ffff_ffffn ? v : null;
}

/**
 * C0 controls but the tab, DEL and C1 controls (what a terminal would act on), and the Unicode
 * bidirectional controls and line separators (which reorder or break what a terminal shows).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** True when `text` holds a character escapeControls would escape (the tab aside). */
export function hasControls(text: string): boolean {
  CONTROL.lastIndex = 0;
  const found = CONTROL.test(text);
  CONTROL.lastIndex = 0;
  return found;
}

/**
 * `text` with each control character written `\xNN` (as the kernel's /dev/kmsg shows them), and each
 * bidirectional control `\uNNNN`: safe to print.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
  });
}

/**
 * Text from a host or a capture (a command name, a user, a note, a state file's text) made safe to
 * show anywhere, once, where it enters: controls escaped as escapeControls does, and cut to at most
 * `maxChars` characters (before escaping), the cut said with `…`.
 */
export function boundedText(text: string, maxChars: number): string {
  let end = maxChars;
  // Never half a surrogate pair at the cut.
  if (end > 0 && end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
  const cut = text.length > maxChars ? `${text.slice(0, end)}…` : text;
  return hasControls(cut) ? escapeControls(cut) : cut;
}
