// The library's arguments, checked where a caller hands them over: a bad one is an E_USAGE error that names it as
// the caller wrote it (`advance(ms)`, `stallMs`), says what it must be and what it was, never a command-line flag.
// TypeScript callers meet most of these at compile time; plain JavaScript meets them here, before a NaN can
// spin a loop or a negative time be taken for zero.
import { usageError } from '../errors.js';

/** A value as an error message shows it: strings quoted, numbers as JavaScript prints them, anything else by type. */
export function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || v === undefined || v === null) {
    return typeof v === 'bigint' ? `${v}n` : String(v);
  }
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

/** What a number must be: a range, whole or not, and what it counts (for the message). */
export interface NumberRule {
  min?: number;
  max?: number;
  /** Strictly above this (a time that must pass). */
  above?: number;
  integer?: boolean;
  /** What it is, e.g. `a time in ms`; the message says `<where>: <name> must be <what> …`. */
  what: string;
}

/** `v` as a number that keeps `rule`, else E_USAGE naming `name` (as `where` takes it). */
export function checkNumber(where: string, name: string, v: unknown, rule: NumberRule): number {
  const ok =
    typeof v === 'number' &&
    Number.isFinite(v) &&
    (!rule.integer || Number.isInteger(v)) &&
    (rule.min === undefined || v >= rule.min) &&
    (rule.max === undefined || v <= rule.max) &&
    (rule.above === undefined || v > rule.above);
  if (ok) return v;
  const bounds: string[] = [];
  if (rule.above !== undefined) bounds.push(`above ${rule.above}`);
  if (rule.min !== undefined && rule.max !== undefined) bounds.push(`from ${rule.min} to ${rule.max}`);
  else if (rule.min !== undefined) bounds.push(`${rule.min} or more`);
  else if (rule.max !== undefined) bounds.push(`${rule.max} or less`);
  const kind = rule.integer ? 'a whole number' : 'a finite number';
  throw usageError(`${where}: ${name} must be ${rule.what}, ${kind} ${bounds.join(' and ')}; got ${shown(v)}`);
}

/** A time that may be 0 (ms): `advance(0)` lets nothing pass. */
export function checkTimeMs(where: string, name: string, v: unknown): number {
  return checkNumber(where, name, v, { min: 0, what: 'a time in ms' });
}

/** A period that must be longer than 0 (ms): an interval, a threshold. */
export function checkPeriodMs(where: string, name: string, v: unknown): number {
  return checkNumber(where, name, v, { above: 0, what: 'a time in ms' });
}

/** `v` as one of `values`, else E_USAGE listing them. */
export function checkOneOf<T extends string | number | boolean>(
  where: string,
  name: string,
  v: unknown,
  values: readonly T[],
): T {
  if ((values as readonly unknown[]).includes(v)) return v as T;
  const list = values.map((x) => shown(x));
  const said = list.length === 2 ? `${list[0]} or ${list[1]}` : `one of ${list.join(', ')}`;
  throw usageError(`${where}: ${name} must be ${said}; got ${shown(v)}`);
}

/** A string that is not empty. */
export function checkText(where: string, name: string, v: unknown, what: string): string {
  if (typeof v === 'string' && v !== '') return v;
  throw usageError(`${where}: ${name} must be ${what}, a string that is not empty; got ${shown(v)}`);
}

/** An AbortSignal, or nothing. */
export function checkSignal(where: string, v: unknown): AbortSignal | undefined {
  if (v === undefined || v instanceof AbortSignal) return v;
  throw usageError(`${where}: signal must be an AbortSignal (e.g. AbortSignal.timeout(ms)); got ${shown(v)}`);
}

/**
 * The options object of `where`: an object (or nothing) whose keys are all among `known`. A misspelt option would
 * otherwise be ignored in silence, and the default it leaves in place taken for what was asked.
 */
export function checkOptions<T extends object>(where: string, o: T | undefined, known: readonly string[]): Partial<T> {
  if (o === undefined) return {};
  if (o === null || typeof o !== 'object' || Array.isArray(o))
    throw usageError(`${where}: the options must be an object; got ${shown(o)}`);
  for (const key of Object.keys(o)) {
    if (!known.includes(key)) {
      throw usageError(`${where}: there is no option ${JSON.stringify(key)}; the options are ${known.join(', ')}`);
    }
  }
  return o;
}
