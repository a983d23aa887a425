// The manual page, --help and the README say what the program does, from the same tables: every exit status,
// every verdict reason and every waiter reason, the files of both modules.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_STATUSES } from '../../src/cli/exit-status.js';
import { REASON_WORDS, VERDICT_WORDS, WAITER_VERDICT_WORDS } from '../../src/cli/verdict-words.js';
import { EXIT_CODES } from '../../src/errors.js';
import { REASONS, VERDICTS } from '../../src/progress/classify.js';
import { WAITER_REASONS, WAITER_VERDICTS } from '../../src/progress/strand.js';
import { ROOT } from '../support/child.js';
import { runCli } from '../support/cli.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const man = readFileSync(join(ROOT, 'man/hfi1-sdma.8.md'), 'utf8');

describe('one account of the program', () => {
  it('every exit status the errors map to is in the one list, in --help, the README table and the page', async () => {
    const codes = EXIT_STATUSES.map((s) => s.code);
    for (const c of Object.values(EXIT_CODES)) expect(codes).toContain(c);
    const help = (await runCli(['--help'])).stdout.replace(/\s+/g, ' ');
    const table = new Set([...readme.matchAll(/^\| `(\d+)`(?:, `(\d+)`)? \|/gm)].flatMap((m) => [m[1], m[2]]).map(Number));
    for (const s of EXIT_STATUSES) {
      if (s.code !== 130) expect(help, `--help lacks ${s.code}`).toContain(`${s.code} ${s.short}`);
      expect(table.has(s.code), `the README's exit-code table lacks ${s.code}`).toBe(true);
    }
    expect(man).toContain('<!-- exit-status -->');
  });

  it('every engine verdict and reason, and every waiter verdict and reason, is explained once and named in the README', () => {
    expect(Object.keys(VERDICT_WORDS).sort()).toEqual([...VERDICTS].sort());
    expect(
      Object.values(VERDICT_WORDS)
        .flatMap((w) => w.reasons)
        .sort(),
    ).toEqual([...new Set(REASONS)].sort());
    expect(Object.keys(REASON_WORDS).sort()).toEqual([...REASONS].sort());
    expect(Object.keys(WAITER_VERDICT_WORDS).sort()).toEqual([...WAITER_VERDICTS].sort());
    expect([...new Set(Object.values(WAITER_VERDICT_WORDS).flatMap((w) => w.reasons))].sort()).toEqual(
      [...WAITER_REASONS].sort(),
    );
    for (const r of [...REASONS, ...WAITER_REASONS]) expect(readme, `the README never names ${r}`).toContain(`\`${r}\``);
    expect(man).toContain('<!-- verdicts -->');
    expect(man).toContain('<!-- waiter-verdicts -->');
  });

  it('the FILES of the page cover hfi1 and hfi2 alike', () => {
    const files = man.slice(man.indexOf('## FILES'), man.indexOf('## EXAMPLES'));
    for (const m of ['`hfi1`', '`hfi2`', '/sys/kernel/debug/', '/sys/module/', 'qp_stats', 'hw_resources', 'rdma']) {
      expect(files).toContain(m);
    }
  });

  it('the textfile carries the kernel counters, as the page and the README say', () => {
    expect(man).toMatch(/The kernel's counters are written with their cumulative\s+values/);
    expect(readme).not.toMatch(/[Cc]ounters are left out/);
    expect(man).not.toMatch(/[Cc]ounters are left out/);
  });
});
