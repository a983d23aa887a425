// Randomized hostile kernel logs and trace text: lines of the Cornelis, hfi2 and trace fixtures cut, with bytes
// changed or inserted (NUL, ESC, CR, bytes that are not UTF-8), numbers made huge, long runs of one text, repeated, in CRLF, fed in
// random chunks. The reader never throws, keeps what it keeps in bounded memory, and the text report it gives
// holds no control character a terminal would act on. A fixed-seed share in npm test; thousands under soak.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { painter } from '../../src/cli/io.js';
import { renderLog } from '../../src/cli/log.js';
import { MAX_EVENTS, MAX_UNITS } from '../../src/kmsg/parse.js';
import { readKernelLog } from '../../src/kmsg/stream.js';
import { fixture } from '../hw/fixtures.js';
import { fcParams } from '../support/runs.js';

const LINES = ['kmsg/cornelis-jkr.dmesg', 'kmsg/hfi2-window.dmesg', 'kmsg/engine-error.dmesg', 'kmsg/trace-states.txt']
  .flatMap((f) => fixture(f).split('\n'))
  .filter((l) => l !== '');
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROLS = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;

type Edit =
  | { kind: 'cut'; at: number }
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: number[] }
  | { kind: 'huge-number'; at: number }
  | { kind: 'long-run'; at: number; text: string }
  | { kind: 'none' };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.array(fc.constantFrom(0, 7, 9, 13, 27, 0x9b, 0xc2, 0xff, 0x5b, 0x5d, 0x3a), { minLength: 1, maxLength: 6 }),
  }),
  fc.record({ kind: fc.constant('huge-number' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('long-run' as const),
    at: fc.nat(),
    text: fc.constantFrom(' ', '\t', '[', '1', '1.', ': ', ',', 'hfi1 ', 'sdma', 'a'),
  }),
  fc.constant({ kind: 'none' as const }),
);

function applyEdit(line: string, e: Edit): Buffer {
  const b = Buffer.from(line, 'utf8');
  if (e.kind === 'none') return b;
  const at = b.length === 0 ? 0 : e.at % b.length;
  if (e.kind === 'cut') return b.subarray(0, at);
  if (e.kind === 'set') {
    const out = Buffer.from(b);
    out[at] = e.byte;
    return out;
  }
  if (e.kind === 'insert') return Buffer.concat([b.subarray(0, at), Buffer.from(e.bytes), b.subarray(at)]);
  if (e.kind === 'long-run') return Buffer.concat([b.subarray(0, at), Buffer.from(e.text.repeat(20_000)), b.subarray(at)]);
  // Every run of digits after `at` made 40 digits long.
  return Buffer.concat([
    b.subarray(0, at),
    Buffer.from(b.subarray(at).toString('latin1').replace(/\d+/g, '9'.repeat(40)), 'latin1'),
  ]);
}

const line = fc.record({ i: fc.nat(), e: edit, times: fc.integer({ min: 1, max: 3 }) });

describe('a mutated kernel log: parsed without a throw, reported without control characters', () => {
  it('over random lines, edits, line ends and chunkings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.constantFrom('wfr' as const, 'jkr' as const),
        async (picked, crlf, cuts, chip) => {
          const nl = Buffer.from(crlf ? '\r\n' : '\n');
          const parts: Buffer[] = [];
          for (const p of picked) {
            const l = applyEdit(LINES[p.i % LINES.length] as string, p.e);
            for (let k = 0; k < p.times; k++) parts.push(l, nl);
          }
          const bytes = Buffer.concat(parts);
          const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const log = await readKernelLog(
            (async function* () {
              let from = 0;
              for (const c of at) {
                yield bytes.subarray(from, c);
                from = c;
              }
              yield bytes.subarray(from);
            })(),
            { chip },
          );
          expect(log.events.length).toBeLessThanOrEqual(MAX_EVENTS);
          expect(log.units.length).toBeLessThanOrEqual(MAX_UNITS);
          for (const u of log.units) expect(u.engineCpu.length).toBeLessThanOrEqual(16);
          const shown = renderLog(log, painter(false), { value: chip, from: 'option' });
          expect(shown.replaceAll('\n', '').replaceAll('\t', '')).not.toMatch(CONTROLS);
          expect(JSON.parse(JSON.stringify(log, (_k, v) => (typeof v === 'bigint' ? String(v) : v)))).toBeTruthy();
        },
      ),
      fcParams(150, 5000),
    );
  });
});
