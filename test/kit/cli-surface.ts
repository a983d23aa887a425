// The CLI's commands and options as its own --help lists them, so that documentation checks follow
// the code: a new option shows up here without anyone listing it.
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../support/cli.js';

/** Every command path (`engines`, `emu run`) with the options only it takes, and the global options. */
export interface CliSurface {
  global: string[];
  /** Command path → its own options (global ones left out), e.g. `['--count', '--interval-ms']`. */
  commands: Map<string, string[]>;
  /** Command path → its actions (a positional with choices, e.g. `emu` → run, write, serve, race). */
  actions: Map<string, string[]>;
}

interface HelpText {
  options: string[];
  commands: string[];
  choices: string[];
}

/** Parse one yargs --help text: option names (long and short), subcommands, positional choices. */
export function parseHelp(text: string): HelpText {
  const options: string[] = [];
  const commands: string[] = [];
  const choices: string[] = [];
  let group = '';
  let positionals = '';
  for (const line of text.split('\n')) {
    const heading = /^([A-Z][\w ]*):$/.exec(line);
    if (heading?.[1]) {
      group = heading[1];
      continue;
    }
    if (group === 'Commands') {
      const m = /^ {2}hfi1-sdma ((?:[a-z][\w-]*)(?: [a-z][\w-]*)*)/.exec(line);
      if (m?.[1]) commands.push(m[1]);
    } else if (group === 'Positionals') {
      positionals += `${line}\n`;
    } else if (group !== 'Examples') {
      const m = /^\s{2,}(?:(-[A-Za-z0-9]), )?(--[a-z][\w-]*)/.exec(line);
      if (m?.[2]) options.push(...(m[1] ? [m[1], m[2]] : [m[2]]));
    }
  }
  for (const m of positionals.replace(/\s+/g, ' ').matchAll(/\[choices: ([^\]]+)\]/g)) {
    for (const c of (m[1] ?? '').matchAll(/"([^"]+)"/g)) if (c[1]) choices.push(c[1]);
  }
  return { options, commands, choices };
}

/**
 * What each `--help` printed, by command path: the text depends on nothing but the code (runCli's width is fixed),
 * and several test files walk every command's help; a worker renders each one once, and keeps it in the test run's
 * temporary directory for the other workers (removed with it when the run ends), under the time of the newest
 * source, so that a source changed during a run (vitest watching) is rendered afresh.
 */
const helpTexts = new Map<string, Promise<string>>();
const RUN_DIR = process.env.HFI1_SDMA_TEST_TMPDIR;
const HELP_DIR = RUN_DIR ? join(RUN_DIR, `cli-help-${newestSource()}`) : null;

/** The modification time of the newest file under src/ (ms). */
function newestSource(): number {
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  return Math.max(
    ...readdirSync(src, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => statSync(join(e.parentPath, e.name)).mtimeMs),
  );
}

/** The text `hfi1-sdma PATH… --help` prints. */
export function helpText(path: string[]): Promise<string> {
  const key = path.join(' ');
  let text = helpTexts.get(key);
  if (!text) {
    text = rendered(key, async () => {
      const r = await runCli([...path, '--help']);
      if (r.code !== 0) throw new Error(`hfi1-sdma ${key} --help exited ${r.code}: ${r.stderr}`);
      return r.stdout;
    });
    helpTexts.set(key, text);
  }
  return text;
}

/** The help text of `key` as another worker of this run kept it, or `render`'s, kept for the others. */
async function rendered(key: string, render: () => Promise<string>): Promise<string> {
  if (!HELP_DIR) return render();
  const file = join(HELP_DIR, `${key.replaceAll(' ', '.') || '.'}.txt`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // not rendered yet in this run
  }
  const text = await render();
  mkdirSync(HELP_DIR, { recursive: true });
  // Whole or not at all: a worker reading it meanwhile sees no file, not part of one.
  const part = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(part, text);
  renameSync(part, file);
  return text;
}

async function help(path: string[]): Promise<HelpText> {
  return parseHelp(await helpText(path));
}

/** Walk `--help` from the top: every command and subcommand, their options and actions. */
export async function cliSurface(): Promise<CliSurface> {
  const top = await help([]);
  const global = top.options;
  const commands = new Map<string, string[]>();
  const actions = new Map<string, string[]>();
  const queue = top.commands.map((c) => c.split(' '));
  while (queue.length > 0) {
    const path = queue.shift() as string[];
    const h = await help(path);
    const key = path.join(' ');
    commands.set(
      key,
      h.options.filter((o) => !global.includes(o)),
    );
    if (h.choices.length > 0) actions.set(key, h.choices);
    for (const sub of h.commands) {
      const words = sub.split(' ');
      if (words.length > path.length && words.slice(0, path.length).join(' ') === key) queue.push(words);
    }
  }
  return { global, commands, actions };
}
