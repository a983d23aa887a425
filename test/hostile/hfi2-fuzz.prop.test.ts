// Randomized hostile hfi2 (CN5000) and Cornelis hfi1 (JKR) sources: one file of a good tree mutated (cut, a byte changed or inserted,
// a line repeated, a field appended, CRLF line ends, NUL bytes) or replaced (a directory, a device link, a link
// loop, a dangling link, empty). Every read answers or fails with one of our errors naming the file or the unit:
// never a JS error, never a hang. A fixed-seed share runs in npm test; `npm run soak` runs thousands.
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { fcParams } from '../support/runs.js';
import { HFI2_FILES as FILES, goodHfi2Tree, goodJkrBar, readEverything } from './hfi2-tree.js';
import { applyMutation, mutation } from './mutate.js';
import { tempRoots } from './sources-tree.js';

const fresh = tempRoots();

describe('a mutated hfi2 source: an answer or one of our errors, never a JS error', () => {
  it('over random files, mutations, BAR presence and module (hfi2, or the Cornelis hfi1 on JKR)', async () => {
    const module = fc.constantFrom('hfi1' as const, 'hfi2' as const);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FILES), mutation, fc.boolean(), module, async (file, m, withBar, mod) => {
        const t = goodHfi2Tree(fresh(), {
          module: mod,
          bar: withBar ? goodJkrBar : null,
          params: { sdma_descq_cnt: '2048\n', pad_sdma_desc: '1\n' },
        });
        applyMutation(t[file], m);
        try {
          await readEverything(t.root);
        } finally {
          rmSync(t.root, { recursive: true, force: true }); // thousands of trees under soak
        }
      }),
      fcParams(25, 1000),
    );
  });
});
