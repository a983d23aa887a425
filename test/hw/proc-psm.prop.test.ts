import { describe, expect } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { parseProcStack, parseProcSyscall, psmVerdict } from '../../src/hw/parse/proc-psm.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';
import { fixture } from './fixtures.js';

const FILES = ['stack-blocked', 'stack-blocked-rhel7', 'stack-poll', 'syscall-writev', 'syscall-poll', 'syscall-running'].map(
  (n) => fixture(`proc/psm/${n}`),
);

/** Character edits of one of the /proc fixtures. */
const mutated = fc
  .tuple(
    fc.constantFrom(...FILES),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 127 }), fc.boolean()), { minLength: 1, maxLength: 3 }),
  )
  .map(([text, edits]) => {
    const chars = [...text];
    for (const [at, c, insert] of edits) {
      const i = chars.length === 0 ? 0 : at % chars.length;
      if (insert) chars.splice(i, 0, String.fromCharCode(c));
      else chars[i] = String.fromCharCode(c);
    }
    return chars.join('');
  });

function onlyParseError(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    expect(e.line).toBeGreaterThanOrEqual(1);
  }
}

describe('/proc parsers (fs/proc/base.c) fail only with ParseError', () => {
  test.prop([fc.oneof(mutated, fc.string({ maxLength: 200 }))], fcParams(200, 5000))('stack, syscall and the verdict', (s) => {
    onlyParseError(() => parseProcStack(s));
    onlyParseError(() => parseProcSyscall(s));
    onlyParseError(() =>
      psmVerdict({ pid: 1, comm: s, fds: [{ fd: 3, target: '/dev/hfi1_0' }], stack: s, syscall: s, wchan: s }),
    );
  });
});
