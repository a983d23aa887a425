// Mutations of a source file for the randomized hostile tests: cut, a byte set or bytes inserted, a line repeated,
// a field appended, CRLF line ends, NUL bytes, or the file replaced by an oddity (sources-tree.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { expect } from 'vitest';
import { isHfi1SdmaError } from '../../src/errors.js';
import { type Oddity, replaceWith } from './sources-tree.js';

/** The errors a mutated source may end in: each names the file (under `root`) or the unit. */
const OUR_CODES = new Set(['E_PARSE', 'E_UNAVAILABLE', 'E_DEVICE_GONE', 'E_PERMISSION']);

/** Run `what`; it may answer or throw one of our errors naming the source, never anything else. */
export async function expectOnlyOurErrors(root: string, what: () => Promise<unknown>): Promise<void> {
  try {
    await what();
  } catch (e) {
    if (!isHfi1SdmaError(e)) throw e;
    expect(OUR_CODES.has(e.code), `${e.code}: ${e.message}`).toBe(true);
    expect(e.message.includes(root) || e.message.startsWith('hfi1_0')).toBe(true);
  }
}

export const ODDITIES: Oddity[] = ['dir', 'dev-zero', 'dev-urandom', 'loop', 'dangling', 'empty'];

export type Mutation =
  | { kind: 'cut'; at: number }
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: number[] }
  | { kind: 'repeat-line'; at: number }
  | { kind: 'append-field'; at: number; text: string }
  | { kind: 'crlf' }
  | { kind: 'replace'; oddity: Oddity };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('repeat-line' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('append-field' as const),
    at: fc.nat(),
    text: fc.constantFrom(' X 1', ' NEW 0x5 OLD 9', ' !', '\t', '\0', ',1', '-99999999999999999999'),
  }),
  fc.record({ kind: fc.constant('crlf' as const) }),
  fc.record({ kind: fc.constant('replace' as const), oddity: fc.constantFrom(...ODDITIES) }),
);

/** Apply `m` to the file at `path`. */
export function applyMutation(path: string, m: Mutation): void {
  if (m.kind === 'replace') {
    replaceWith(path, m.oddity);
    return;
  }
  const b = readFileSync(path);
  if (m.kind === 'crlf') {
    writeFileSync(path, Buffer.from(b.toString('latin1').replaceAll('\n', '\r\n'), 'latin1'));
    return;
  }
  const at = b.length === 0 ? 0 : m.at % b.length;
  let out: Buffer;
  if (m.kind === 'cut') out = b.subarray(0, at);
  else if (m.kind === 'set') {
    out = Buffer.from(b);
    if (out.length > 0) out[at] = m.byte;
  } else if (m.kind === 'insert') out = Buffer.concat([b.subarray(0, at), Buffer.from(m.bytes), b.subarray(at)]);
  else {
    const lines = b.toString('latin1').split('\n');
    const i = m.at % lines.length;
    if (m.kind === 'repeat-line') lines.splice(i, 0, lines[i] as string);
    else lines[i] = `${lines[i]}${m.text}`;
    out = Buffer.from(lines.join('\n'), 'latin1');
  }
  writeFileSync(path, out);
}
