// The pure core's arguments, checked in the words of each function's own parameters (`freeCount: descqHead must
// be an unsigned 32-bit counter`): a ring size that is not one, a counter that is NaN or past u32, a driver or a
// chip that does not exist, a word that is no 64-bit bigint.
import { usageError } from '../errors.js';
import { CHIP_NAMES, type ChipName } from '../progress/chip.js';
import { DRIVER_NAMES, type DriverName } from '../progress/driver.js';
import { isValidDescqCnt } from '../progress/ring.js';
import { checkNumber, checkOneOf } from './check.js';

/** A ring size: what descqCntFromParam gives, a power of two from 64 to 32768 (sdma_get_descq_cnt, sdma.c). */
export function ringSize(where: string, v: unknown): number {
  if (typeof v === 'number' && isValidDescqCnt(v)) return v;
  checkNumber(where, 'descqCnt', v, { min: 64, max: 32768, integer: true, what: 'a ring size' });
  throw usageError(
    `${where}: descqCnt must be a ring size, a power of two from 64 to 32768 (descqCntFromParam turns a module parameter into one); got ${v}`,
  );
}

/** A free-running u32 counter (descq_head, descq_tail, the head-lock sequence). */
export function u32(where: string, name: string, v: unknown): number {
  return checkNumber(where, name, v, { min: 0, max: 0xffff_ffff, integer: true, what: 'an unsigned 32-bit counter' });
}

/** The descriptors of one request (num_desc, a u16 of struct sdma_txreq). */
export function descCount(where: string, v: unknown): number {
  return checkNumber(where, 'numDesc', v, { min: 0, max: 0xffff, integer: true, what: 'a count of descriptors' });
}

/** A driver build's name. */
export function driverName(where: string, v: unknown): DriverName {
  return checkOneOf(where, 'driver', v, DRIVER_NAMES);
}

/** A chip's name. */
export function chipName(where: string, v: unknown): ChipName {
  return checkOneOf(where, 'chip', v, CHIP_NAMES);
}

/** A 64-bit descriptor word. */
export function qword(where: string, name: string, v: unknown): bigint {
  if (typeof v === 'bigint' && v >= 0n && v <= 0xffff_ffff_ffff_ffffn) return v;
  throw usageError(`${where}: ${name} must be a 64-bit word as a bigint (0n to 0xffffffffffffffffn); got ${String(v)}`);
}

/** The head, tail and size of a ring. */
export function ringArgs(where: string, descqCnt: unknown, descqHead: unknown, descqTail: unknown): void {
  ringSize(where, descqCnt);
  u32(where, 'descqHead', descqHead);
  u32(where, 'descqTail', descqTail);
}

/** What sdma_progress reads of an engine. */
export function progressState(where: string, s: unknown): void {
  if (s === null || typeof s !== 'object')
    throw usageError(`${where}: state must be { seq, descqCnt, descqHead, descqTail }; got ${String(s)}`);
  const st = s as Record<string, unknown>;
  u32(where, 'state.seq', st.seq);
  ringArgs(where, st.descqCnt, st.descqHead, st.descqTail);
}

/** An encoder's RangeError as the library's usage error. */
export function encoded<T>(where: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof RangeError) throw usageError(`${where}: ${e.message}`);
    throw e;
  }
}
