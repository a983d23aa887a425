// The quick start of the commonest monitoring call: `engines` with only the everyday global options
// (--sysroot, --backend, --unit, --json, --color/--no-color) is read here without building the
// yargs parser (a quarter of a cold start). Anything else, even a spelling yargs would accept,
// returns null and takes the full parser, which reports errors and prints help.
import { COMMAND_TABLE, commandName } from './commands.js';
import type { CommandSpec } from './context.js';
import type { Io } from './io.js';

/** The commands taken here: none of them has options of its own. */
const FAST_COMMANDS = new Set(['engines']);
const BACKENDS = new Set(['auto', 'hw', 'emu']);
/** Options with a value (as `--name value` or `--name=value`), by the key yargs gives them. */
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
  const args: Record<string, unknown> = { backend: 'auto', json: false };
  const given = new Set<string>();
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('-')) {
      if (command !== undefined || !FAST_COMMANDS.has(a)) return null;
      command = a;
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq === -1 ? a : a.slice(0, eq);
    const key = VALUED.get(name) ?? FLAGS.get(name)?.[0];
    // Unknown, repeated (yargs makes an array of it, an error), or a flag with a value: the full parser decides.
    if (key === undefined || given.has(key)) return null;
    given.add(key);
    const flag = FLAGS.get(name);
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
  if (command === undefined) return null;
  if (!given.has('sysroot') && io.env.HFI1_SDMA_SYSROOT) args.sysroot = io.env.HFI1_SDMA_SYSROOT;
  return { command, args };
}

/** The full spec of a command taken by fastArgs. */
export async function fastCommand(word: string): Promise<CommandSpec> {
  const entry = COMMAND_TABLE.find((e) => commandName(e.command) === word);
  if (!entry) throw new Error(`no command ${word}`);
  return entry.load();
}
