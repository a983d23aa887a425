// Every subcommand, in the order --help lists them. Only the name and the one-line description
// are here: a command's module (its options, its code, the libraries it needs) is loaded only
// when that command runs, so `--version` or `engines` never load the emulator, the exporter or
// the archive library.
import type { CommandSpec } from './context.js';
import { distance } from './usage-errors.js';

/** A command as --help lists it, and how to load the whole of it. */
export interface CommandEntry {
  /** The yargs command string (`show <engine>`). */
  command: string;
  describe: string;
  /** Its own long options (a test checks them against its builder): a typo of one names the command. */
  options?: readonly string[];
  load(): Promise<CommandSpec>;
}

export const COMMAND_TABLE: readonly CommandEntry[] = [
  {
    command: 'engines',
    options: ['stall-ms'],
    describe: 'all engines: state, cpu, vl, heads, tail, in flight, free, DQF, error bits; the link and the unit context',
    load: async () => (await import('./engines.js')).enginesCommand,
  },
  {
    command: 'show <engine>',
    options: ['stall-ms'],
    describe: 'one engine in full: every field, CTRL/STATUS/ERR bits decoded',
    load: async () => (await import('./show.js')).showCommand,
  },
  {
    command: 'ring <engine>',
    describe: 'the decoded descriptor ring between head and tail',
    load: async () => (await import('./ring.js')).ringCommand,
  },
  {
    command: 'watch',
    options: ['interval-ms', 'count', 'stall-ms', 'strand-ms', 'capture-dir', 'capture-keep', 'capture-max-mb'],
    describe:
      'live view: a verdict per engine, rates, how long a head is stuck, the link; fits the terminal (NDJSON with --json)',
    load: async () => (await import('./watch.js')).watchCommand,
  },
  {
    command: 'waiters [engine]',
    options: ['strand-ms', 'count', 'interval-ms'],
    describe: 'who waits for ring space on which engine, for how long, and whether it is stranded (a lost wake-up)',
    load: async () => (await import('./waiters.js')).waitersCommand,
  },
  {
    command: 'progress <engine>',
    options: ['num-desc', 'timeout-ms', 'interval-ms'],
    describe: 'sample seq, then wait until sdma_progress would return 1 (head moved and N fits)',
    load: async () => (await import('./progress.js')).progressCommand,
  },
  {
    command: 'fit [engine]',
    describe: 'would N descriptors fit now: free count, headroom, progress-schedule threshold (exit 0 fits, 1 not)',
    load: async () => (await import('./fit.js')).fitCommand,
  },
  {
    command: 'decode <qw0> <qw1>',
    describe: 'decode one hardware descriptor (both qwords)',
    load: async () => (await import('./decode.js')).decodeCommand,
  },
  {
    command: 'log [file]',
    describe: 'decode the hfi1/hfi2 SDMA lines of a kernel log (dmesg/journalctl text; - for stdin)',
    load: async () => (await import('./log.js')).logCommand,
  },
  {
    command: 'health',
    options: ['stall-ms', 'strand-ms', 'timeout', 'warning', 'critical', 'state', 'max-bytes', 'brief', 'off-host'],
    describe: 'Nagios plugin: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; one line per finding',
    load: async () => (await import('./health.js')).healthCommand,
  },
  {
    command: 'fleet [inputs..]',
    options: ['hosts', 'baseline', 'stall-ms'],
    describe:
      'roll up many hosts (clush/pdsh output, health --json, directories of captures): findings by code over folded node sets',
    load: async () => (await import('./fleet.js')).fleetCommand,
  },
  {
    command: 'explain [code]',
    describe: 'what a finding code (SD201, …) means, how to confirm it, what to do and capture; every code without one',
    load: async () => (await import('./explain.js')).explainCommand,
  },
  {
    command: 'doctor',
    describe: 'which sources are readable here, and for each that is not, why and what to do',
    load: async () => (await import('./doctor.js')).doctorCommand,
  },
  {
    command: 'snapshot',
    options: ['output', 'samples', 'interval-ms'],
    describe: 'capture sysfs/debugfs/procfs and the SDMA CSR block into a .tar.gz (read back with --sysroot FILE)',
    load: async () => (await import('./snapshot.js')).snapshotCommand,
  },
  {
    command: 'report [snapshot]',
    describe: 'one self-contained HTML page of a capture: findings, every engine over time, waiters, the kernel log',
    load: async () => (await import('./report.js')).reportCommand,
  },
  {
    command: 'export',
    options: [
      'listen',
      'min-interval-ms',
      'stall-ms',
      'strand-ms',
      'textfile',
      'state',
      'capture-dir',
      'capture-keep',
      'capture-max-mb',
    ],
    describe: 'Prometheus exporter: per-engine metrics on /metrics',
    load: async () => (await import('./export.js')).exportCommand,
  },
  {
    command: 'completion [shell]',
    describe: 'print a shell completion script for bash or zsh (default: your $SHELL)',
    load: async () => (await import('./completion-command.js')).completionCommand,
  },
  {
    command: 'emu <action>',
    describe: "the emulator: run headless, write its sysroot once, keep it live, explore races, or run a capture's twin",
    load: async () => (await import('./emu.js')).emuCommand,
  },
];

/** The word that names a command (`show` of `show <engine>`). */
export function commandName(command: string | readonly string[]): string {
  const first = typeof command === 'string' ? command : (command[0] ?? '');
  return first.split(' ')[0] ?? first;
}

/**
 * The specs for one run: the command named by `word` loaded in full (all of them when `word` is
 * '*', for completion), every other one a light stand-in that --help can list.
 */
export async function commandsFor(word: string | undefined): Promise<CommandSpec[]> {
  return Promise.all(
    COMMAND_TABLE.map(async (entry) =>
      word === '*' || commandName(entry.command) === word
        ? entry.load()
        : {
            command: entry.command,
            describe: entry.describe,
            run: async (args, ctx) => (await entry.load()).run(args, ctx),
          },
    ),
  );
}

/** The commands (other than `except`) that have an option close to `typed`, for a typo given to the wrong command. */
export function optionsElsewhere(except: string | undefined): (typed: string) => { option: string; commands: string[] } | null {
  return (typed) => {
    const hits = new Map<string, string[]>();
    for (const e of COMMAND_TABLE) {
      const word = commandName(e.command);
      if (word === except) continue;
      for (const o of e.options ?? []) {
        if (o === typed || (Math.abs(o.length - typed.length) <= 2 && closeEnough(o, typed)))
          hits.set(o, [...(hits.get(o) ?? []), word]);
      }
    }
    const [first] = hits;
    return first ? { option: first[0], commands: first[1] } : null;
  };
}

/** At most two letters apart (a typo), by edit distance. */
function closeEnough(a: string, b: string): boolean {
  return distance(a, b) <= 2;
}
