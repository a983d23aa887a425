// Randomized hostile answers of rdma and /proc files for the QP owner: bytes cut, changed or inserted in a real
// answer, numbers made huge, nesting and types swapped. The parsers never throw anything but the SyntaxError the
// reader turns into a reason, and what they return is well formed. A fixed-seed share in npm test; thousands
// under soak.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePasswd, parseProcStatus } from '../../src/hw/parse/proc-status.js';
import { parseRdmaResQp } from '../../src/hw/parse/rdma-res.js';
import { fcParams } from '../support/runs.js';

const ANSWER = JSON.stringify([
  { ifindex: 1, ifname: 'hfi1_0', port: 1, lqpn: 0, type: 'SMI', state: 'RTS', 'sq-psn': 0, comm: 'ib_core' },
  { ifindex: 1, ifname: 'hfi1_0', port: 1, lqpn: 258, rqpn: 258, type: 'RC', state: 'RTS', pid: 30002, comm: 'verbs_rank_2' },
]);
const STATUS = 'Name:\txhpl\nTgid:\t4240\nPid:\t4242\nUid:\t1001\t1001\t1001\t1001\n';

const edited = (base: string) =>
  fc
    .array(
      fc.oneof(
        fc.record({ at: fc.nat(), cut: fc.constant(true), text: fc.constant('') }),
        fc.record({
          at: fc.nat(),
          cut: fc.constant(false),
          text: fc.constantFrom(
            '\0',
            '\u001b[2J',
            '{',
            '}',
            '[',
            ']',
            '"',
            ',',
            '99999999999999999999',
            '-1',
            'null',
            '\n',
            ':',
            '\t',
          ),
        }),
      ),
      { maxLength: 6 },
    )
    .map((edits) => {
      let s = base;
      for (const e of edits) {
        const at = e.at % (s.length + 1);
        s = e.cut ? s.slice(0, at) : s.slice(0, at) + e.text + s.slice(at);
      }
      return s;
    });

describe('hostile QP owner sources', () => {
  it('rdma answers: a SyntaxError or well-formed QPs', () => {
    fc.assert(
      fc.property(edited(ANSWER), (text) => {
        try {
          const r = parseRdmaResQp(text);
          for (const q of r.qps) {
            expect(Number.isSafeInteger(q.qpn) && q.qpn >= 0).toBe(true);
            expect(q.pid === null || (Number.isSafeInteger(q.pid) && q.pid > 0)).toBe(true);
            expect(q.device.length).toBeLessThanOrEqual(256);
          }
        } catch (e) {
          expect(e).toBeInstanceOf(SyntaxError);
        }
      }),
      fcParams(300, 20_000),
    );
  });

  it('/proc/<pid>/status and /etc/passwd never throw; numbers are integers or null', () => {
    fc.assert(
      fc.property(edited(STATUS), edited('root:x:0:0::/root:/bin/sh\nalice:x:1001:1001::/home/alice:/bin/bash\n'), (st, pw) => {
        const s = parseProcStatus(st);
        for (const v of [s.tgid, s.uid]) expect(v === null || Number.isSafeInteger(v)).toBe(true);
        for (const [uid, name] of parsePasswd(pw)) {
          expect(Number.isSafeInteger(uid)).toBe(true);
          expect(name.length).toBeGreaterThan(0);
        }
      }),
      fcParams(300, 20_000),
    );
  });
});
