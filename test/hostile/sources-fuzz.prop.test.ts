// Randomized hostile sources: one file of a good tree mutated (mutate.ts: cut, bytes changed or inserted, a
// line repeated, a field appended, CRLF line ends) or replaced (a directory, a device link, a link loop, a
// dangling link, empty). Every sample and ring either answers or fails with one of our errors
// naming the unit or the file: never a JS error, never a hang. A fixed-seed share runs in npm
// test; `npm run soak` runs thousands.
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openHwBackend } from '../../src/hw/index.js';
import { fcParams } from '../support/runs.js';
import { applyMutation, expectOnlyOurErrors, mutation } from './mutate.js';
import { goodBar, goodTree, tempRoots } from './sources-tree.js';

const fresh = tempRoots();
const FILES = ['sdes', 'counters', 'counterNames', 'interrupts', 'vl', 'cpuList', 'param'] as const;

describe('a mutated source: an answer or one of our errors, never a JS error', () => {
  it('over random files, mutations and BAR presence', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FILES), mutation, fc.boolean(), async (file, m, withBar) => {
        const t = goodTree(fresh(), withBar ? { bar: goodBar } : {});
        applyMutation(t[file], m);
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
