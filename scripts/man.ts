// `npm run man`: render man/hfi1-sdma.8.md (marked-man) to man/hfi1-sdma.8. The page date is the
// one written in the source, so the same source always gives the same page.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exitStatusSection } from '../src/cli/exit-status.js';
import { findingCodes } from '../src/cli/explain.js';
import { verdictSection, waiterVerdictSection } from '../src/cli/verdict-words.js';
import { EXPLANATIONS } from '../src/monitor/explain.js';

/** Where the page's source and rendered output live in the repository. */
export const MAN_SOURCE = 'man/hfi1-sdma.8.md';
export const MAN_PAGE = 'man/hfi1-sdma.8';

/** Render the page's source under `rootDir` to roff text (version from package.json). */
export function renderManPage(rootDir: string): string {
  const source = readFileSync(join(rootDir, MAN_SOURCE), 'utf8');
  const date = /^<!-- date: (\d{4}-\d{2}-\d{2}) -->$/m.exec(source)?.[1];
  if (!date) throw new Error(`${MAN_SOURCE}: no "<!-- date: YYYY-MM-DD -->" line`);
  const { version } = JSON.parse(readFileSync(join(rootDir, 'package.json'), 'utf8')) as { version: string };
  const bin = join(rootDir, 'node_modules', 'marked-man', 'bin', 'marked-man.js');
  const args = ['--name', 'hfi1-sdma', '--section', '8', '--version', version, '--manual', 'System Administration'];
  // The findings come from the one table the program uses (explain prints the same); HTML comments are
  // notes for the page's editors, which marked-man would print.
  const input = source
    .replace('<!-- findings -->', findingsSection())
    .replace('<!-- exit-status -->', exitStatusSection())
    .replace('<!-- verdicts -->', verdictSection())
    .replace('<!-- waiter-verdicts -->', waiterVerdictSection())
    .replace(/<!--[\s\S]*?-->\n?/g, '');
  return execFileSync(process.execPath, [bin, ...args, '--date', date, '--no-breaks'], { encoding: 'utf8', input });
}

/** The FINDINGS list of the page: every code with its severity, count, title, meaning and what to do. */
export function findingsSection(): string {
  const items = findingCodes().map((f) => {
    const e = EXPLANATIONS[f.kind];
    const count = f.count ? `, count \`${f.count}\`` : '';
    return `* \`${f.code}\` (${f.severity}${count}): **${f.title}**. ${e.meaning} *What to do:* ${e.action}`;
  });
  return `${items.join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  writeFileSync(join(root, MAN_PAGE), renderManPage(root));
  process.stdout.write(`wrote ${MAN_PAGE}\n`);
}
