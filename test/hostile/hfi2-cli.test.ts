// The CLI (in-process) on an hfi2 (CN5000) tree with one file garbled (a NUL and an escape inserted in its first
// line, or the file cut in half): `engines --json`, `ring 8` and `waiters` each answer (exit 0) or exit 65/69 with a
// message naming a file of the tree; never a stack trace, a control character on the terminal, or any other code.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { goodHfi2Tree, goodJkrBar } from './hfi2-tree.js';
import { tempRoots } from './sources-tree.js';

const fresh = tempRoots();
const FILES = ['hwResources', 'vl', 'sdmaCpuList', 'sdes', 'counters', 'counterNames', 'qpStats', 'interrupts'] as const;

function garble(path: string, how: 'junk' | 'half'): void {
  const b = readFileSync(path);
  const at = Math.max(0, b.indexOf(10) >> 1);
  const junk = Buffer.concat([b.subarray(0, at), Buffer.from('\0\x1b[2J'), b.subarray(at)]);
  writeFileSync(path, how === 'half' ? b.subarray(0, b.length >> 1) : junk);
}

describe('the CLI on an hfi2 tree with one garbled file', () => {
  it.each(FILES.flatMap((f) => [[f, 'junk'] as const, [f, 'half'] as const]))('%s (%s)', async (file, how) => {
    const t = goodHfi2Tree(fresh(), { bar: goodJkrBar });
    garble(t[file], how);
    for (const args of [['engines', '--json'], ['ring', '8'], ['waiters']]) {
      const r = await runCli(['--sysroot', t.root, ...args], { NO_COLOR: '1' });
      const what = `${args.join(' ')}: ${r.code} ${r.stderr}`;
      expect([0, 65, 69], what).toContain(r.code);
      if (r.code !== 0) expect(r.stderr, what).toContain(t.root);
      expect(r.stderr, what).not.toMatch(/\n\s+at /);
      expect(`${r.stdout}${r.stderr}`, what).not.toContain('\x1b');
    }
  });
});
