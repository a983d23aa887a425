// Usage errors as the user typed the command: yargs reports an unknown `--stal-ms` as both
// spellings ("stal-ms, stalMs") and a missing `--output` by its short key ("o"); these messages
// name the option once, as typed, with the nearest known option or what the option is for.

/** The parser's view of its options (yargs getOptions()). */
export interface KnownOptions {
  key: Readonly<Record<string, unknown>>;
  alias: Readonly<Record<string, readonly string[]>>;
}

/** What a required option is for, said after "is required:". */
const REQUIRED_HINTS: Readonly<Record<string, string>> = {
  output: 'the archive to write, e.g. -o node17.tar.gz',
  'num-desc': 'the descriptors in the request, e.g. --num-desc 9',
};

/** The edit distance between two option names (Levenshtein). */
export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j] ?? 0;
      row[j] = Math.min(up + 1, (row[j - 1] ?? 0) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length] ?? 0;
}

/** Every option name a user can type (long names in kebab case, and one-letter aliases). */
function names(opts: KnownOptions): string[] {
  const all = new Set<string>();
  for (const k of Object.keys(opts.key)) all.add(k);
  for (const [k, as] of Object.entries(opts.alias)) for (const a of [k, ...as]) all.add(a);
  return [...all].filter((n) => !/[A-Z]/.test(n));
}

/** The known long option closest to `typed`, if one is close enough to be a typo. */
export function nearestOption(typed: string, opts: KnownOptions): string | null {
  let best: string | null = null;
  let bestD = Number.POSITIVE_INFINITY;
  for (const n of names(opts)) {
    if (n.length < 2) continue;
    const d = distance(typed, n);
    if (d < bestD) {
      best = n;
      bestD = d;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(typed.length / 3)) ? best : null;
}

/** The options and words of `argv` as typed: `--stal-ms=3` gives `--stal-ms`; nothing after `--`. */
function typedWords(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    if (a === '--') break;
    out.push(a.startsWith('-') ? (a.split('=')[0] ?? a) : a);
  }
  return out;
}

function unknownMessage(list: string, argv: readonly string[], opts: KnownOptions, elsewhere?: OptionsElsewhere): string {
  const reported = new Set(list.split(/,\s*/));
  const parts: string[] = [];
  const seen = new Set<string>();
  for (const w of typedWords(argv)) {
    const bare = w.replace(/^-+/, '');
    if (!reported.has(bare) || seen.has(w)) continue;
    seen.add(w);
    if (w.startsWith('-')) {
      const near = nearestOption(bare, opts);
      const other = near ? null : (elsewhere?.(bare) ?? null);
      const hint = near
        ? ` (did you mean ${near.length === 1 ? '-' : '--'}${near}?)`
        : other
          ? ` (--${other.option} is an option of ${other.commands.join(', ')}, not of this command)`
          : '';
      parts.push(`unknown option ${w}${hint}`);
    } else {
      parts.push(`unexpected argument ${JSON.stringify(w)}`);
    }
  }
  return parts.length ? parts.join('; ') : `unknown arguments: ${list}`;
}

/** `--output (-o)` for the key yargs reports (`o` or `output`). */
function optionName(key: string, opts: KnownOptions): { long: string; text: string } {
  const group = new Set<string>([key, ...(opts.alias[key] ?? [])]);
  for (const [k, as] of Object.entries(opts.alias))
    if (group.has(k) || as.some((a) => group.has(a))) for (const a of [k, ...as]) group.add(a);
  const all = [...group].filter((n) => !/[A-Z]/.test(n));
  const long = all.find((n) => n.length > 1) ?? key;
  const short = all.find((n) => n.length === 1);
  return { long, text: `${long.length === 1 ? '-' : '--'}${long}${short && short !== long ? ` (-${short})` : ''}` };
}

function missingMessage(list: string, opts: KnownOptions): string {
  return list
    .split(/,\s*/)
    .map((k) => {
      const { long, text } = optionName(k, opts);
      const hint = REQUIRED_HINTS[long];
      return `${text} is required${hint ? `: ${hint}` : ''}`;
    })
    .join('; ');
}

/** How to give each positional argument, by its name in the command string. */
const POSITIONAL_EXAMPLES: Readonly<Record<string, string>> = {
  engine: 'which engine? e.g. %s 3',
  qw0: 'which descriptor? give both qwords, e.g. %s 0xc040000000100000 0x5',
  qw1: 'give both qwords, e.g. %s 0xc040000000100000 0x5',
  action: 'which action? run, write, serve or race, e.g. %s run',
};

/** `show: which engine? e.g. show 3` for a command string (`show <engine>`) missing its positional argument. */
export function missingPositional(command: string): string {
  const [word] = command.split(' ');
  const name = /<([^>]+)>/.exec(command)?.[1] ?? 'argument';
  const how = POSITIONAL_EXAMPLES[name] ?? `the ${name} is required, e.g. %s <${name}>`;
  return `${word}: ${how.replace('%s', `hfi1-sdma ${word}`)}`;
}

/** Other commands' options, by command word (for a typo that matches an option of another command). */
export type OptionsElsewhere = (typed: string) => { option: string; commands: string[] } | null;

/** The usage message for a yargs failure `msg`, given what was typed and the options known. */
export function usageMessage(
  msg: string,
  argv: readonly string[],
  opts: KnownOptions | null,
  command?: string,
  elsewhere?: OptionsElsewhere,
): string {
  if (/^Not enough non-option arguments/.test(msg) && command) return missingPositional(command);
  const unknown = /^Unknown arguments?: (.*)$/.exec(msg);
  if (unknown && opts) return unknownMessage(unknown[1] ?? '', argv, opts, elsewhere);
  const missing = /^Missing required arguments?: (.*)$/.exec(msg);
  if (missing && opts) return missingMessage(missing[1] ?? '', opts);
  if (msg === NO_COMMAND && opts) {
    // `--frobnicate engines`: the unknown option took the command word as its value; name the option.
    const known = new Set(names(opts));
    const typo = typedWords(argv).find((w) => w.startsWith('-') && !known.has(w.replace(/^-+/, '').replace(/^no-/, '')));
    if (typo) return unknownMessage(typo.replace(/^-+/, ''), argv, opts, elsewhere);
  }
  return msg;
}

/** What yargs says when no command word was found. */
export const NO_COMMAND = 'name a command; see --help';
