// The quick start of the commonest monitoring calls: `engines`, and `health` as a fleet runs it on every node (NHC,
// clush, a Nagios agent: `health --brief`, with --off-host, --stall-ms or --state), with only the everyday global
// options (--sysroot, --backend, --unit, --json, --color/--no-color), are read here without loading yargs (a
// quarter to a third of the start of a command that reads a tree). Anything else, even a spelling yargs would
// accept, returns null and takes the full parser, which reports errors and prints help.
import { COMMAND_TABLE, commandName } from './commands.js';
import type { CommandSpec } from './context.js';
import type { Io } from './io.js';

/** A command taken here: its own options (valued, and flags) by spelling, and the defaults yargs gives it. */
interface FastCommand {
  readonly valued: ReadonlyMap<string, string>;
  readonly flags: ReadonlyMap<string, readonly [string, boolean]>;
  readonly defaults: Readonly<Record<string, unknown>>;
}

/** The commands taken here, and their options (as health's builder declares them: every value a string). */
const FAST_COMMANDS: ReadonlyMap<string, FastCommand> = new Map([
  ['engines', { valued: new Map(), flags: new Map(), defaults: {} }],
  [
    'health',
    {
      valued: new Map([
        ['--stall-ms', 'stallMs'],
        ['--state', 'state'],
        ['--off-host', 'offHost'],
      ]),
      flags: new Map([['--brief', ['brief', true]]]),
      defaults: { stallMs: '1000', timeout: '10', maxBytes: '1024' },
    },
  ],
]);
const BACKENDS = new Set(['auto', 'hw', 'emu']);
/** Global options with a value (as `--name value` or `--name=value`), by the key yargs gives them. */
const VALUED: ReadonlyMap<string, string> = new Map([
  ['--sysroot', 'sysroot'],
  ['--backend', 'backend'],
  ['--unit', 'unit'],
]);
const FLAGS: ReadonlyMap<string, readonly [string, boolean]> = new Map([
  ['--json', ['json', true]],
  ['--color', ['color', true]],
  ['--no-color', ['color', false]],
]);

/** The command word and the arguments yargs would give for `argv`, or null when the full parser must read it. */
export function fastArgs(argv: readonly string[], io: Io): { command: string; args: Record<string, unknown> } | null {
  // The command first (the first word that is not a global option's value): which options it has decides how the
  // words after it read.
  let command: string | undefined;
  for (let i = 0; i < argv.length && command === undefined; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('-')) command = a;
    else if (VALUED.has(a)) i++;
  }
  const spec = command === undefined ? undefined : FAST_COMMANDS.get(command);
  if (spec === undefined) return null;
  const args: Record<string, unknown> = { backend: 'auto', json: false, ...spec.defaults };
  const given = new Set<string>();
  let seen = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('-')) {
      if (seen || a !== command) return null;
      seen = true;
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq === -1 ? a : a.slice(0, eq);
    // A command's own option only after its word, as yargs reads it.
    const own = seen ? spec : undefined;
    const key = VALUED.get(name) ?? FLAGS.get(name)?.[0] ?? own?.valued.get(name) ?? own?.flags.get(name)?.[0];
    // Unknown, repeated (yargs makes an array of it, an error), or a flag with a value: the full parser decides.
    if (key === undefined || given.has(key)) return null;
    given.add(key);
    const flag = FLAGS.get(name) ?? own?.flags.get(name);
    if (flag) {
      if (eq !== -1) return null;
      args[key] = flag[1];
      continue;
    }
    const value = eq === -1 ? argv[++i] : a.slice(eq + 1);
    if (value === undefined || value === '' || value.startsWith('-')) return null;
    if (key === 'backend' && !BACKENDS.has(value)) return null;
    args[key] = value;
  }
  if (!given.has('sysroot') && io.env.HFI1_SDMA_SYSROOT) args.sysroot = io.env.HFI1_SDMA_SYSROOT;
  return { command: command as string, args };
}

/** The full spec of a command taken by fastArgs. */
export async function fastCommand(word: string): Promise<CommandSpec> {
  const entry = COMMAND_TABLE.find((e) => commandName(e.command) === word);
  if (!entry) throw new Error(`no command ${word}`);
  return entry.load();
}
