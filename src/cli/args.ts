// Strict parsing of numeric arguments: a bad value is a usage error that names the flag.
import { usageError } from '../errors.js';
import { isValidDescqCnt } from '../progress/ring.js';

/** An integer from `min` to `max`, written in decimal or as 0x-prefixed hex. */
export function parseIntArg(flag: string, raw: unknown, min: number, max: number): number {
  const s = String(raw ?? '').trim();
  let v: number;
  if (/^0x[0-9a-f]+$/i.test(s)) v = Number.parseInt(s.slice(2), 16);
  else if (/^[0-9]+$/.test(s)) v = Number(s);
  else throw usageError(`${flag} expects an integer (decimal or 0x hex), got ${JSON.stringify(raw)}`);
  if (!Number.isSafeInteger(v) || v < min || v > max) {
    throw usageError(`${flag} must be from ${min} to ${max}, got ${s}`);
  }
  return v;
}

/** A 64-bit value written as 0x-prefixed hex or decimal. */
export function parseU64Arg(name: string, raw: unknown): bigint {
  const s = String(raw ?? '').trim();
  let v: bigint;
  if (/^0x[0-9a-f]{1,16}$/i.test(s)) v = BigInt(s);
  else if (/^[0-9]+$/.test(s)) v = BigInt(s);
  else throw usageError(`${name} expects a 64-bit value as 0x-prefixed hex or decimal, got ${JSON.stringify(raw)}`);
  if (v > 0xffff_ffff_ffff_ffffn) throw usageError(`${name} does not fit 64 bits: ${s}`);
  return v;
}

/** A ring size: a power of two from 64 to 32768 (sdma_get_descq_cnt, sdma.c). */
export function parseDescqCnt(raw: unknown): number {
  const v = parseIntArg('--descq-cnt', raw, 1, 0xffff_ffff);
  if (!isValidDescqCnt(v)) {
    throw usageError(`--descq-cnt must be a power of two from 64 to 32768 (the driver's valid ring sizes), got ${v}`);
  }
  return v;
}

/** `--unit`: a number (0-255), or a unit's name `hfi1_N` / `hfi2_N` (numbers repeat across the two modules). */
export function parseUnitArg(raw: unknown): number | string {
  const s = String(raw ?? '').trim();
  if (/^hfi[12]_\d{1,3}$/.test(s)) return s;
  return parseIntArg('--unit', raw, 0, 255);
}
