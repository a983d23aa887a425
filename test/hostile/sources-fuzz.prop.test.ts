// Randomized hostile sources: one file of a good tree mutated (cut, bytes changed or inserted, a
// line repeated, a field appended) or replaced (a directory, a device link, a link loop, a
// dangling link, empty). Every sample and ring either answers or fails with one of our errors
// naming the unit or the file: never a JS error, never a hang. A fixed-seed share runs in npm
// test; `npm run soak` runs thousands.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHfi1SdmaError } from '../../src/errors.js';
import { openHwBackend } from '../../src/hw/index.js';
import { fcParams } from '../support/runs.js';
import { goodBar, goodTree, type Oddity, replaceWith, tempRoots } from './sources-tree.js';

const fresh = tempRoots();
const FILES = ['sdes', 'counters', 'counterNames', 'interrupts', 'vl', 'cpuList', 'param'] as const;
const ODDITIES: Oddity[] = ['dir', 'dev-zero', 'dev-urandom', 'loop', 'dangling', 'empty'];
const CODES = new Set(['E_PARSE', 'E_UNAVAILABLE', 'E_DEVICE_GONE', 'E_PERMISSION']);

type Mutation =
  | { kind: 'cut'; at: number }
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: number[] }
  | { kind: 'repeat-line'; at: number }
  | { kind: 'append-field'; at: number; text: string }
  | { kind: 'replace'; oddity: Oddity };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
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
    text: fc.constantFrom(' X 1', ' NEW 0x5 OLD 9', ' !', '\t'),
  }),
  fc.record({ kind: fc.constant('replace' as const), oddity: fc.constantFrom(...ODDITIES) }),
);

function apply(path: string, m: Mutation): void {
  if (m.kind === 'replace') {
    replaceWith(path, m.oddity);
    return;
  }
  const b = readFileSync(path);
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

async function expectOnlyOurErrors(root: string, what: () => Promise<unknown>): Promise<void> {
  try {
    await what();
  } catch (e) {
    if (!isHfi1SdmaError(e)) throw e;
    expect(CODES.has(e.code), `${e.code}: ${e.message}`).toBe(true);
    expect(e.message.includes(root) || e.message.startsWith('hfi1_0')).toBe(true);
  }
}

describe('a mutated source: an answer or one of our errors, never a JS error', () => {
  it('over random files, mutations and BAR presence', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FILES), mutation, fc.boolean(), async (file, m, withBar) => {
        const t = goodTree(fresh(), withBar ? { bar: goodBar } : {});
        apply(t[file], m);
        let backend: Awaited<ReturnType<typeof openHwBackend>> | null = null;
        await expectOnlyOurErrors(t.root, async () => {
          backend = await openHwBackend({ sysroot: t.root });
        });
        if (!backend) return rmSync(t.root, { recursive: true, force: true });
        const b: Awaited<ReturnType<typeof openHwBackend>> = backend;
        try {
          for (const info of await b.units()) {
            const u = await b.unit(info.unit);
            await expectOnlyOurErrors(t.root, () => u.sample());
            for (let e = 0; e < info.engines; e++) await expectOnlyOurErrors(t.root, () => u.ring(e));
            for (const w of u.warnings?.() ?? []) expect(w.message).toContain(t.root);
          }
        } finally {
          await b.close();
          rmSync(t.root, { recursive: true, force: true }); // thousands of trees under soak
        }
      }),
      fcParams(60, 1000),
    );
  });
});
