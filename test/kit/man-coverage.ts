// Which commands and options of the CLI the man page's source does not document.
import type { CliSurface } from './cli-surface.js';

/** The source's `### command` sections and the GLOBAL OPTIONS section, by heading. */
export function manSections(markdown: string): { global: string; commands: Map<string, string> } {
  const global = /^## GLOBAL OPTIONS\n([\s\S]*?)(?=^## )/m.exec(markdown)?.[1] ?? '';
  const commands = new Map<string, string>();
  const parts = markdown.split(/^### (.+)$/m);
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const body = (parts[i + 1] ?? '').split(/^## /m)[0] ?? '';
    commands.set((parts[i] ?? '').trim(), body);
  }
  return { global, commands };
}

/** An option is documented by a list item of its own: a line `* \`--name\` …` (aliases on the same line). */
const mentions = (text: string, option: string) =>
  text.split('\n').some((line) => line.startsWith('* `') && line.split(':')[0]?.includes(`\`${option}\``));

/** One line per gap, e.g. "health: --timeout not documented"; empty when the page covers the CLI. */
export function manGaps(markdown: string, surface: CliSurface): string[] {
  const { global, commands } = manSections(markdown);
  const gaps: string[] = [];
  for (const option of surface.global) if (!mentions(global, option)) gaps.push(`GLOBAL OPTIONS: ${option} not documented`);
  for (const [command, options] of surface.commands) {
    const own = commands.get(command);
    if (own === undefined) {
      gaps.push(`${command}: no "### ${command}" section`);
      continue;
    }
    const actions = surface.actions.get(command) ?? [];
    for (const action of actions)
      if (!commands.has(`${command} ${action}`)) gaps.push(`${command} ${action}: no "### ${command} ${action}" section`);
    // A command with actions documents each option under the action it belongs to.
    const text = [own, ...actions.map((a) => commands.get(`${command} ${a}`) ?? '')].join('\n');
    for (const option of options) if (!mentions(text, option)) gaps.push(`${command}: ${option} not documented`);
  }
  return gaps;
}
