// The man page hfi1-sdma(8): rendered from its source, readable by man, and covering every command
// and option that the CLI's own --help lists.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAN_PAGE, MAN_SOURCE, renderManPage } from '../../scripts/man.js';
import { ROOT } from '../support/child.js';
import { onPath } from '../support/on-path.js';
import { spawnSync } from '../support/spawn.js';
import { type CliSurface, cliSurface } from './cli-surface.js';
import { manGaps } from './man-coverage.js';

const groffFound = onPath('groff');
const manFound = onPath('man');
const source = readFileSync(join(ROOT, MAN_SOURCE), 'utf8');
const page = readFileSync(join(ROOT, MAN_PAGE), 'utf8');

let surface: CliSurface;
beforeAll(async () => {
  surface = await cliSurface();
}, 120_000);

describe('hfi1-sdma(8)', { timeout: 120_000 }, () => {
  it(`${MAN_PAGE} is what ${MAN_SOURCE} renders to (else run 'npm run man')`, () => {
    expect(page === renderManPage(ROOT), `${MAN_PAGE} is stale: run 'npm run man' and commit it`).toBe(true);
  });

  it('documents every command and option that --help lists (the list below is what is missing)', () => {
    expect(surface.commands.size).toBeGreaterThanOrEqual(13);
    expect(surface.commands.get('watch')).toContain('--interval-ms');
    expect(manGaps(source, surface)).toEqual([]);
  });

  it('names an undocumented option and a missing section', () => {
    const withoutCount = source.replace('* `--count` *N*: stop after *N* samples (default: until interrupted).\n', '');
    expect(withoutCount).not.toBe(source);
    expect(manGaps(withoutCount, surface)).toEqual(['watch: --count not documented']);
    const withoutRace = source.replace('### emu race', '### emu racing');
    expect(manGaps(withoutRace, surface)).toContain('emu race: no "### emu race" section');
  });

  it('mentions no document outside the repository', () => {
    expect(source).not.toMatch(/DESIGN\.md|reference\/|§/);
  });

  it.skipIf(!groffFound)('renders with groff without a warning (skipped: groff is not installed)', () => {
    const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z', join(ROOT, MAN_PAGE)], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.skipIf(!manFound)('reads with man -l (skipped: man is not installed)', () => {
    const r = spawnSync('man', ['-l', join(ROOT, MAN_PAGE)], {
      encoding: 'utf8',
      env: { ...process.env, MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '80', LC_ALL: 'C.UTF-8' },
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^HFI1-SDMA\(8\)/m);
    for (const heading of ['NAME', 'SYNOPSIS', 'GLOBAL OPTIONS', 'COMMANDS', 'EXIT STATUS', 'SEE ALSO']) {
      expect(r.stdout).toMatch(new RegExp(`^${heading}$`, 'm'));
    }
    expect(Math.max(...r.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
  });
});
