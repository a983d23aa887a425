// The CLI (in-process) on a randomly mutated hfi2 (CN5000) tree (the mutations of hfi2-fuzz.prop.test.ts): a
// documented exit code, the file named (directly, or by doctor when no unit is left), no stack trace and no
// character a terminal acts on. A fixed-seed share in npm test; thousands under soak.
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fcParams } from '../support/runs.js';
import { HFI2_FILES as FILES, goodHfi2Tree, goodJkrBar } from './hfi2-tree.js';
import { applyMutation, mutation } from './mutate.js';
import { tempRoots } from './sources-tree.js';

const fresh = tempRoots();

describe('the CLI on a mutated hfi2 tree: a documented exit code, the file named, nothing a terminal acts on', () => {
  const COMMANDS = [['engines'], ['engines', '--json'], ['show', '9'], ['ring', '8'], ['waiters'], ['doctor']];
  it('over random files, mutations and commands', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FILES), mutation, fc.constantFrom(...COMMANDS), async (file, m, args) => {
        const t = goodHfi2Tree(fresh(), { bar: goodJkrBar, params: { pad_sdma_desc: '1\n' } });
        applyMutation(t[file], m);
        try {
          const r = await runCli(['--sysroot', t.root, ...args], { NO_COLOR: '1' });
          const what = `${args.join(' ')}: ${r.code} ${r.stderr}`;
          // doctor also answers 1: a check failed (no unit found is one), named in its report on stdout. Any other
          // failure names the file in its error, or (waiters' 69: no kind of waiter visible) in its notes on stdout.
          expect(args[0] === 'doctor' ? [0, 1, 65, 66, 69, 77] : [0, 65, 66, 69, 77], what).toContain(r.code);
          if (r.code === 1) expect(r.stdout, what).toContain(t.root);
          else if (r.code === 66) {
            // No unit left (a PCI id garbled into no known chip): the message sends to doctor, which names the file.
            expect(r.stderr, what).toContain("run 'hfi1-sdma doctor'");
            expect((await runCli(['--sysroot', t.root, 'doctor'])).stdout, what).toContain(t.root);
          } else if (r.code !== 0) expect(`${r.stdout}${r.stderr}`, what).toContain(t.root);
          expect(r.stderr, what).not.toMatch(/\n\s+at /);
          // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
          expect(`${r.stdout}${r.stderr}`.replace(/[\n\t]/g, ''), what).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
        } finally {
          rmSync(t.root, { recursive: true, force: true });
        }
      }),
      // Found by the soak: a cut PCI vendor id leaves no unit, and doctor says so with its documented 1; a qp_stats
      // that is a directory leaves no waiter visible, and waiters names it in a note.
      {
        ...fcParams(20, 2000),
        examples: [
          ['vendor', { kind: 'cut', at: 523028663 }, ['doctor']],
          ['qpStats', { kind: 'replace', oddity: 'dir' }, ['waiters']],
        ],
      },
    );
  });
});
