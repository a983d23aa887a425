// The hfi1-sdma command line: parse with yargs, pick a backend, run a command, map errors to exit
// codes (0 ok, 64 usage, 65 parse, 66 no unit/engine, 69 unavailable, 77 permission).
import type { Argv } from 'yargs';
import type { Backend } from '../backend.js';
import { StoppedError } from '../cleanup.js';
import { Hfi1SdmaError, isHfi1SdmaError, usageError } from '../errors.js';
import { holdContainment } from '../hw/contain.js';
import { parseIntArg, parseUnitArg } from './args.js';
import { type OpenOptions, openBackend } from './backend-select.js';
import { COMMAND_TABLE, commandName, commandsFor, optionsElsewhere } from './commands.js';
import { COMPLETION_KEY, chooseShell, completionScript, valueCompletions } from './completion.js';
import type { CliContext, CommandSpec, GlobalOptions } from './context.js';
import { exitStatusHelp } from './exit-status.js';
import { fastArgs, fastCommand } from './fast-path.js';
import { flavourGlobals, flavourOptions } from './flavour-options.js';
import { colorEnabled, type Io, painter, processIo } from './io.js';
import { loadYargs } from './load-yargs.js';
import { type KnownOptions, NO_COMMAND, usageMessage } from './usage-errors.js';
import { version } from './version.js';

/** Global options that take one value: given twice, which one was meant is unknown (exit 64). */
const SINGLE_VALUED = [
  'backend',
  'sysroot',
  'unit',
  'seed',
  'engines',
  'chip',
  'driver',
  'ports',
  'active-ports',
  'descq-cnt',
  'workload',
  'at-ms',
  'from',
  'from-instant',
] as const;

/** Options that take a value, so the word after them is not the command. */
const TAKES_VALUE = new Set(SINGLE_VALUED.map((o) => `--${o}`).concat(['--fault', '--param']));

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

function globalOptions(args: Record<string, unknown>): GlobalOptions {
  for (const name of SINGLE_VALUED) {
    const v = args[camel(name)];
    if (Array.isArray(v)) {
      throw usageError(`--${name} was given ${v.length} times (${v.join(', ')}); give it once`);
    }
  }
  const faults = args.fault;
  const params = args.param;
  if (args.sysroot === '') {
    // An unset variable in a script (`--sysroot "$TREE"`) must not read the live host, or the emulator, instead.
    throw usageError(
      '--sysroot is empty: name a directory holding sys/ and proc/, or a snapshot .tar.gz (leave it out for this host)',
    );
  }
  return {
    backend: (args.backend as GlobalOptions['backend']) ?? 'auto',
    sysroot: (args.sysroot as string | undefined) ?? undefined,
    unit: args.unit === undefined ? undefined : parseUnitArg(args.unit),
    json: args.json === true,
    color: args.color === undefined ? undefined : args.color !== false,
    seed: args.seed === undefined ? 1 : parseIntArg('--seed', args.seed, 0, 0xffff_ffff),
    ...flavourGlobals(args),
    descqCnt: args.descqCnt === undefined ? undefined : Number(args.descqCnt),
    workload: (args.workload as string | undefined) ?? undefined,
    atMs: args.atMs === undefined ? undefined : parseIntArg('--at-ms', args.atMs, 0, 86_400_000),
    fault: Array.isArray(faults) ? faults.map(String) : faults === undefined ? [] : [String(faults)],
    param: Array.isArray(params) ? params.map(String) : params === undefined ? [] : [String(params)],
    wall: args.wall === true,
    stepped: args.stepped === true,
    traceEvents: args.traceEvents === true,
    from: args.from === undefined ? undefined : String(args.from),
    fromInstant: args.fromInstant === undefined ? undefined : parseIntArg('--from-instant', args.fromInstant, 0, 10_000),
  };
}

/**
 * `--from CAPTURE`: the twin every command then reads, built before the command runs (the emulator's options are
 * read synchronously). It implies the emulator; another backend or a sysroot beside it is a usage error.
 */
async function resolveTwin(global: GlobalOptions, args: Record<string, unknown>): Promise<void> {
  if (global.from === undefined) {
    if (global.fromInstant !== undefined) throw usageError('--from-instant needs --from CAPTURE (the capture to start from)');
    return;
  }
  if (global.backend === 'hw') throw usageError(`--from ${global.from} runs the emulator from a capture: drop --backend hw`);
  // emu write and emu serve write the twin's host into --sysroot: the one place the two go together.
  const writes = args.action === 'write' || args.action === 'serve';
  if (global.sysroot !== undefined && global.sysroot !== '' && !writes) {
    throw usageError(
      `--from ${global.from} and --sysroot ${global.sysroot}: --from runs a capture's twin in the emulator, --sysroot reads a capture as it was; give one`,
    );
  }
  const { loadTwin } = await import('../twin/load.js');
  // The capture's verdict is judged with the windows the command judges with (health's, emu twin's).
  const windows = {
    ...(args.stallMs === undefined ? {} : { stallMs: parseIntArg('--stall-ms', args.stallMs, 1, 3_600_000) }),
    ...(args.strandMs === undefined ? {} : { strandMs: parseIntArg('--strand-ms', args.strandMs, 1, 3_600_000) }),
  };
  global.twin = await loadTwin(global.from, { instant: global.fromInstant, unit: global.unit, ...windows });
  global.backend = 'emu';
}

function parser(
  yargs: typeof import('yargs').default,
  io: Io,
  commands: readonly CommandSpec[],
  onRun: (spec: CommandSpec, args: Record<string, unknown>, aliases: KnownOptions['alias']) => void,
  argv: readonly string[],
): Argv {
  const known = (): KnownOptions | null => {
    try {
      return (y as unknown as { getOptions(): KnownOptions }).getOptions();
    } catch {
      return null;
    }
  };
  let y: Argv = yargs()
    .scriptName('hfi1-sdma')
    .usage('$0 [options] <command>\n\nInspect and emulate the send-DMA engines of Omni-Path hfi1 adapters.')
    .option('backend', {
      choices: ['auto', 'hw', 'emu'] as const,
      default: 'auto',
      describe: 'auto: the live host when an hfi1 unit is found, else the emulator',
      global: true,
    })
    .option('sysroot', {
      type: 'string',
      describe: 'read sysfs/debugfs/procfs under DIR (env HFI1_SDMA_SYSROOT)',
      global: true,
      // An empty variable is an unset one (as NO_COLOR); an empty --sysroot is a usage error.
      default: io.env.HFI1_SDMA_SYSROOT || undefined,
      defaultDescription: '/',
    })
    .option('unit', { type: 'string', describe: 'only unit N (hfi1_N or hfi2_N), or the unit named (hfi2_0)', global: true })
    .option('json', { type: 'boolean', default: false, describe: 'machine-readable output', global: true })
    .option('color', {
      type: 'boolean',
      describe:
        'colour: on a terminal unless NO_COLOR is set (default); --color forces it (into a pipe too), --no-color turns it off',
      global: true,
    })
    .option('seed', { type: 'string', describe: 'emulator: seed for every random choice', global: true, group: 'Emulator:' })
    .option('engines', {
      type: 'string',
      describe: 'emulator: engines 0 to N-1 (N from 1 to 16), or the window A-B (inclusive, within 0-15)',
      global: true,
      group: 'Emulator:',
    })
    .option('descq-cnt', {
      type: 'string',
      describe:
        'ring size: a power of two from 64 to 32768 (fit refuses any other; the emulator takes any other as 2048, as the driver does)',
      global: true,
      group: 'Emulator:',
    })
    .option('workload', {
      type: 'string',
      describe: "emulator: named workload, NAME[:key=value,…] ('hfi1-sdma emu --help' lists them)",
      global: true,
      group: 'Emulator:',
    })
    .option('at-ms', {
      type: 'string',
      describe: 'emulator: virtual ms to run before sampling',
      global: true,
      group: 'Emulator:',
    })
    .option('fault', {
      type: 'string',
      describe:
        "emulator: NAME@MS[:ENGINE], repeatable (e.g. stop-fetch@2000:3, fabric-stall@500:1; 'hfi1-sdma emu --help' lists them)",
      global: true,
      group: 'Emulator:',
    })
    .option('wall', {
      type: 'boolean',
      describe:
        'emulator: wait as much wall time between samples as the emulator advances (default: its virtual time runs as fast as it computes; an open-ended watch and emu serve follow the wall clock)',
      global: true,
      group: 'Emulator:',
    })
    .option('stepped', {
      type: 'boolean',
      describe: "emulator: step every event (the fast model's oracle: the same results, slower)",
      global: true,
      group: 'Emulator:',
    })
    .option('from', {
      type: 'string',
      describe:
        "emulator: start from a capture's instant instead of driver load (FILE.tar.gz from 'snapshot', or a twin's .json); its unit, engines, waiters and ports as captured",
      global: true,
      group: 'Emulator:',
    })
    .option('from-instant', {
      type: 'string',
      describe: 'emulator: the instant of --from to start from (0 for the first; default the last)',
      global: true,
      group: 'Emulator:',
    })
    .option('param', {
      type: 'string',
      describe:
        'emulator: a module parameter NAME=VALUE, repeatable (use_bulksvc=Y, bulksvc_num_sdma=N, num_vls=N, cap_mask=0x…)',
      global: true,
      group: 'Emulator:',
    })
    .option('trace-events', {
      type: 'boolean',
      describe:
        'emulator: trace the senders going to sleep and being woken (hfi1_qpsleep, hfi1_qpwakeup, hfi1_iowait_set/clear, hfi1_usdma_defer/activate) in its tracefs, as if enabled',
      global: true,
      group: 'Emulator:',
    })
    .strict()
    .demandCommand(1, NO_COMMAND)
    .recommendCommands()
    .version(version())
    .help()
    .alias('h', 'help')
    .wrap(Math.min(110, io.columns ?? 100))
    .exitProcess(false)
    .fail((msg, err) => {
      // Name the option as it was typed, once (yargs reports both spellings, or the short key).
      const word = commandWord(argv);
      const entry = COMMAND_TABLE.find((e) => commandName(e.command) === word);
      const text = usageMessage(msg, argv, known(), entry?.command, optionsElsewhere(word));
      throw err ?? usageError(`${text}\nRun 'hfi1-sdma ${entry ? `${commandName(entry.command)} ` : ''}--help' for usage.`);
    })
    .completion('__complete', false)
    .epilogue(exitStatusHelp());
  y = flavourOptions(y);
  for (const spec of commands) {
    y = y.command(
      spec.command as string,
      spec.describe,
      (b: Argv) => (spec.builder ? spec.builder(b) : b),
      (args: Record<string, unknown>) => onRun(spec, args, known()?.alias ?? {}),
    );
  }
  skipHelpCache(y);
  return y;
}

/**
 * yargs lays out a command's whole help text after running its handler, only to keep it in case
 * help is shown later; nothing here shows help after a command has run, and the layout costs a
 * fifth of a cold start. Drop that step (yargs 18's usage instance; help itself is unchanged).
 */
function skipHelpCache(y: Argv): void {
  const internals = (
    y as unknown as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } }
  )
    .getInternalMethods?.()
    .getUsageInstance?.();
  if (internals && typeof internals.cacheHelpMessage === 'function') internals.cacheHelpMessage = () => {};
}

/** What main() may be handed instead of the real thing. */
export interface MainDeps {
  commands?: readonly CommandSpec[];
  /** Replaces backend selection (tests hand in a scripted backend). */
  openBackend?: (global: GlobalOptions, io: Io, opts: OpenOptions) => Promise<Backend>;
}

/** Run the CLI on `argv` (without node and script); resolves to the exit code. */
export async function main(argv: readonly string[], io: Io = processIo(), deps: MainDeps = {}): Promise<number> {
  const open = deps.openBackend ?? openBackend;
  let chosen: { spec: CommandSpec; args: Record<string, unknown>; aliases: KnownOptions['alias'] } | undefined;
  try {
    // The plain version needs no parser: answer it before loading one.
    if (argv.length === 1 && argv[0] === '--version') {
      io.stdout(`${version()}\n`);
      return 0;
    }
    const key = argv.indexOf(COMPLETION_KEY);
    if (key >= 0) {
      const values = await valueCompletions(argv.slice(key + 1));
      if (values) {
        io.stdout(values.map((v) => `${v}\n`).join(''));
        return 0;
      }
    } else if (commandWord(argv) === 'completion' && !argv.includes('--help') && !argv.includes('-h')) {
      return printCompletion(argv, io);
    }
    const fast = deps.commands ? null : fastArgs(argv, io);
    if (fast) return await runCommand(await fastCommand(fast.command), fast.args, io, open, argv);
    let output = '';
    // Load only the command that runs (every one to answer a completion request).
    const commands = deps.commands ?? (await commandsFor(key >= 0 ? '*' : commandWord(argv)));
    const y = parser(
      await loadYargs(),
      io,
      commands,
      (spec, args, aliases) => {
        chosen = { spec, args, aliases };
      },
      argv,
    );
    await y.parseAsync([...argv], {}, (_err, _args, out) => {
      output = out;
    });
    if (!chosen) {
      // --help, --version or completion: yargs produced the text.
      if (output) io.stdout(output.endsWith('\n') ? output : `${output}\n`);
      return 0;
    }
    return await runCommand(chosen.spec, chosen.args, io, open, argv, chosen.aliases);
  } catch (e) {
    if (isHfi1SdmaError(e) && e.code === 'E_USAGE' && commandWord(argv) === 'health') {
      // A Nagios plugin exits 3 (UNKNOWN) on a usage error, with its status line on stdout (as --brief words one).
      const brief = argv.includes('--brief');
      io.stdout(`${brief ? 'UNKNOWN ' : 'HFI1-SDMA UNKNOWN - '}${e.message.split('\n')[0]}\n`);
      return 3;
    }
    return reportError(e, io);
  }
}

/** Options that may be given more than once (each occurrence adds one), and fleet's variadic inputs. */
const REPEATABLE = new Set(['fault', 'param', 'inputs']);

/**
 * An option that takes one value given more than once is a usage error, whichever command it belongs to, named
 * as it was typed (`-c`, `--critical`), with the values given: which one was meant is unknown.
 */
export function refuseRepeated(
  args: Record<string, unknown>,
  argv: readonly string[],
  aliases: KnownOptions['alias'] = {},
): void {
  const typed = new Set(argv.filter((a) => a.startsWith('-')).map((a) => a.split('=')[0] as string));
  const flag = (k: string) => (k.length === 1 ? `-${k}` : `--${k}`);
  for (const [key, v] of Object.entries(args)) {
    if (!Array.isArray(v) || key === '_' || /[A-Z]/.test(key) || REPEATABLE.has(key)) continue;
    const group = [key, ...(aliases[key] ?? [])].filter((k) => !/[A-Z]/.test(k));
    if (group.some((k) => REPEATABLE.has(k))) continue;
    const names = group.map(flag).filter((f) => typed.has(f));
    throw usageError(
      `${(names.length ? names : [flag(key)]).join(' / ')} was given ${v.length} times (${v.map(String).join(', ')}); give it once`,
    );
  }
}

/** Run the command `spec` chose with its parsed arguments. */
async function runCommand(
  spec: CommandSpec,
  args: Record<string, unknown>,
  io: Io,
  open: NonNullable<MainDeps['openBackend']>,
  argv: readonly string[] = [],
  aliases: KnownOptions['alias'] = {},
): Promise<number> {
  refuseRepeated(args, argv, aliases);
  const global = globalOptions(args);
  await resolveTwin(global, args);
  const ctx: CliContext = {
    io,
    global,
    paint: painter(colorEnabled(io, global.color)),
    openBackend: () => open(global, io, { fallback: spec.fallback !== false }),
  };
  // The sysroot's directory is opened once, now, and every read of the run resolves beneath it.
  const release = global.sysroot !== undefined && global.backend !== 'emu' ? holdContainment(global.sysroot) : () => {};
  try {
    return await spec.run(args, ctx);
  } finally {
    release();
  }
}

/** The command word of `argv`: the first word that is neither an option nor an option's value. */
export function commandWord(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--') return argv[i + 1];
    if (a.startsWith('-')) {
      if (TAKES_VALUE.has(a)) i += 1;
      continue;
    }
    return a;
  }
  return undefined;
}

/** `completion [bash|zsh]`: the script, calling this program back by its name (or through npx when not on PATH). */
function printCompletion(argv: readonly string[], io: Io): number {
  const rest = argv.slice(argv.indexOf('completion') + 1).filter((a) => !a.startsWith('-'));
  if (rest.length > 1) throw usageError(`completion takes one shell name (bash or zsh), got ${rest.join(' ')}`);
  const shell = chooseShell(rest[0], io.env.SHELL);
  io.stdout(completionScript(shell));
  return 0;
}

function reportError(e: unknown, io: Io): number {
  if (e instanceof StoppedError) return e.status;
  if (isHfi1SdmaError(e)) {
    io.stderr(`hfi1-sdma: ${e.message}\n`);
    return e.exitCode;
  }
  const err = new Hfi1SdmaError('E_INTERNAL', `internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  io.stderr(`hfi1-sdma: ${err.message}\nThis is a defect in hfi1-sdma; please report it with the command you ran.\n`);
  return err.exitCode;
}
