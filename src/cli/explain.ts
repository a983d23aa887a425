// `explain [CODE]`: what a finding means, the kernel code it concerns, how to confirm it, what to do and what to
// capture; without a code, every code with its severity and title. The manual page lists the same (one source).
import type { Argv } from 'yargs';
import { usageError } from '../errors.js';
import { FINDING_KINDS, type FindingKindName } from '../monitor/codes.js';
import { EXPLANATIONS, explainCode } from '../monitor/explain.js';
import type { CommandSpec } from './context.js';
import { table } from './format.js';
import { documentStamp, stamped } from './stamp.js';

/** The codes in code order, with their kind. */
export function findingCodes(): { kind: FindingKindName; code: string; severity: string; count: string | null; title: string }[] {
  return (Object.entries(FINDING_KINDS) as [FindingKindName, (typeof FINDING_KINDS)[FindingKindName]][])
    .map(([kind, k]) => ({ kind, code: k.code, severity: k.severity, count: k.count, title: k.title }))
    .sort((a, b) => a.code.localeCompare(b.code));
}

/** Wrap `text` at `width` columns, each line indented by `indent`. */
function wrap(text: string, width: number, indent: string): string {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      out.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(indent + line);
  return `${out.join('\n')}\n`;
}

export const explainCommand: CommandSpec = {
  command: 'explain [code]',
  describe: 'what a finding code (SD201, …) means, how to confirm it, what to do and capture; every code without one',
  builder: (y: Argv) =>
    y
      .positional('code', { type: 'string', describe: 'a finding code as health, watch and the alerts print it (SD201)' })
      .example('$0 explain', 'every code, its severity and title')
      .example('$0 explain SD201', 'a stranded sender: what it means and what releases it'),
  async run(args, ctx) {
    const width = Math.min(100, ctx.io.columns ?? 100);
    if (args.code === undefined) {
      const rows = findingCodes();
      if (ctx.global.json) ctx.io.stdout(`${JSON.stringify(stamped(documentStamp(null, ctx), { codes: rows }))}\n`);
      else
        ctx.io.stdout(
          table(
            ['code', 'severity', 'count', 'finding'],
            rows.map((r) => [r.code, r.severity, r.count ?? '-', r.title]),
          ),
        );
      return 0;
    }
    const hit = explainCode(String(args.code));
    if (!hit)
      throw usageError(
        `no finding has the code ${JSON.stringify(String(args.code))}: 'hfi1-sdma explain' lists them (${codeRange()})`,
      );
    const e = hit.e;
    if (ctx.global.json) {
      ctx.io.stdout(
        `${JSON.stringify(stamped(documentStamp(null, ctx), { code: FINDING_KINDS[hit.kind].code, kind: hit.kind, severity: hit.severity, count: hit.count, title: hit.title, ...e }))}\n`,
      );
      return 0;
    }
    const sections: [string, string][] = [
      ['What it means', e.meaning],
      ['In the kernel', e.kernel],
      ['To confirm', e.confirm],
      ['What to do', e.action],
      ['What to capture', e.capture],
    ];
    let text = `${FINDING_KINDS[hit.kind].code} ${hit.title} (${hit.severity} by default${hit.count ? `; health count ${hit.count}` : ''})\n`;
    for (const [head, body] of sections) text += `\n${head}:\n${wrap(body, width, '  ')}`;
    ctx.io.stdout(text);
    return 0;
  },
};

export { EXPLANATIONS };

/** The codes' range as `explain` says it: `SD101 … SD405`, from the lowest code to the highest. */
function codeRange(): string {
  const codes = Object.values(FINDING_KINDS)
    .map((k) => k.code as string)
    .sort();
  return `${codes[0]} … ${codes.at(-1)}`;
}
