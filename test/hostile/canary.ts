// A secret outside the tree, linked from one position of an emulated host's tree (a file or a
// directory, by an absolute or a relative link), and every command run over that tree in this
// process: no byte of the secret may reach stdout, stderr, the metrics or a snapshot. Shared by the
// fixed sample in npm test and the full sweep in soak (canary-sweep.prop.test.ts).
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { TREE_MARKER, TREE_STAGING } from '../../src/emu/tree.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';

/** The secret: two lines, as /etc/shadow or a token file would be; none of its words is in any name. */
export const SECRET_LINES = ['zq9-canary-first root:$6$hunter2:20228:0', 'zq9-canary-second MY_API_TOKEN=hunter2'];
/** The secret as one word, which a reader would take for a firmware version or a port state (a metric label). */
export const SECRET_WORD = 'zq9canary_hunter2';
/** What must never appear in any output. */
export const SECRET_MARKS = ['zq9-canary', 'zq9canary', 'hunter2'];

/** One place in the tree: a file or a directory, relative to the root. */
export interface Position {
  rel: string;
  kind: 'file' | 'dir';
}

/** A copy of a rendered tree at `to` (with cp -a: links as they are, and the BAR image's holes kept). */
export function copyTree(from: string, to: string): void {
  const cp = spawnSync('cp', ['-a', from, to]);
  if (cp.status !== 0) throw new Error(`cp -a ${from} ${to}: ${cp.stderr}`);
}

/** The engines of the emulated host: a few, each with a full ring (what the tests here read needs no more). */
export const EMULATED_ENGINES = 4;

/** The emulated host rendered once in this process (files of one worker share it), removed when the process ends. */
let rendered: Promise<string> | undefined;

async function renderOnce(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hfi1-emulated-host-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'host');
  const u = new EmuUnit({ seed: 7, engines: EMULATED_ENGINES });
  u.runUntilMs(20);
  await writeSysroot(u, root);
  closeSysroot(u, root);
  return root;
}

/** Write an emulated host (EMULATED_ENGINES, the default workload, 20 ms in) under `root`: a copy of the one rendered here. */
export async function emulatedHost(root: string): Promise<void> {
  rendered ??= renderOnce();
  copyTree(`${await rendered}/.`, root);
}

/** Every file and directory of the tree (not its links, marker or staging), deepest last. */
export function positionsOf(root: string): Position[] {
  const out: Position[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (dir === root && (name === TREE_MARKER || name === TREE_STAGING)) continue;
      const p = join(dir, name);
      const st = lstatSync(p);
      if (st.isDirectory()) {
        out.push({ rel: relative(root, p), kind: 'dir' });
        walk(p);
      } else if (st.isFile()) out.push({ rel: relative(root, p), kind: 'file' });
    }
  };
  walk(root);
  return out;
}

/** A copy of directory `from`'s shape at `to` in which every file holds `text` (links copied as they are). */
function secretMirror(from: string, to: string, text: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    const p = join(from, name);
    const st = lstatSync(p);
    if (st.isDirectory()) secretMirror(p, join(to, name), text);
    else if (st.isSymbolicLink()) symlinkSync(readlinkSync(p), join(to, name));
    else writeFileSync(join(to, name), text);
  }
}

/**
 * Put a link to the secret at `pos` of the tree under `root`: absolute, to the two-line secret, or
 * relative (`../../…`), to the one-word secret; the entry it replaces is moved aside under `aside`
 * (outside the tree). Returns how to put it back.
 */
export function plantSecret(root: string, aside: string, pos: Position, how: 'absolute' | 'relative'): () => void {
  const path = join(root, pos.rel);
  const secret = join(aside, 'secret', pos.kind === 'dir' ? pos.rel : 'file');
  const text = how === 'absolute' ? `${SECRET_LINES.join('\n')}\n` : `${SECRET_WORD}\n`;
  if (pos.kind === 'dir') secretMirror(path, secret, text);
  else {
    mkdirSync(dirname(secret), { recursive: true });
    writeFileSync(secret, text);
  }
  const kept = join(aside, 'kept');
  rmSync(kept, { recursive: true, force: true });
  renameSync(path, kept);
  symlinkSync(how === 'absolute' ? secret : relative(dirname(path), secret), path);
  return () => {
    rmSync(path);
    renameSync(kept, path);
    rmSync(join(aside, 'secret'), { recursive: true, force: true });
  };
}

/** One command over the tree and the outputs it leaves besides stdout and stderr. */
export interface SweepCommand {
  name: string;
  argv: (out: string) => string[];
  /** Files the command writes (the textfile, the snapshot), read back as text. */
  outputs?: (out: string) => string[];
}

/** Text of a written output; a snapshot is unpacked (its tar stream holds every file's bytes as they are). */
function outputText(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return '';
  }
  return path.endsWith('.tar.gz') ? gunzipSync(bytes).toString('latin1') : bytes.toString('latin1');
}

/** Every read command, each output channel it has. */
export const COMMANDS: readonly SweepCommand[] = [
  { name: 'engines', argv: () => ['engines'] },
  { name: 'engines --json', argv: () => ['engines', '--json'] },
  { name: 'show 0', argv: () => ['show', '0'] },
  { name: 'ring 0', argv: () => ['ring', '0'] },
  { name: 'waiters --json', argv: () => ['waiters', '--json', '--count', '2'] },
  { name: 'watch --json', argv: () => ['watch', '--json', '--count', '2', '--interval-ms', '10'] },
  { name: 'doctor --json', argv: () => ['doctor', '--json'] },
  { name: 'health', argv: () => ['health'] },
  { name: 'fit 0', argv: () => ['fit', '0', '--num-desc', '9'] },
  {
    name: 'export --textfile',
    argv: (out) => ['export', '--textfile', join(out, 'm.prom')],
    outputs: (out) => [join(out, 'm.prom')],
  },
  {
    name: 'snapshot',
    argv: (out) => ['snapshot', '-o', join(out, 's.tar.gz')],
    outputs: (out) => [join(out, 's.tar.gz')],
  },
];

/** Run `cmd` over the tree in this process; the marks of the secret found in its outputs, by channel (empty: none). */
export async function leaks(root: string, out: string, cmd: SweepCommand): Promise<string[]> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const r = await runCli(['--sysroot', root, '--backend', 'hw', ...cmd.argv(out)]);
  const channels: [string, string][] = [
    ['stdout', r.stdout],
    ['stderr', r.stderr],
    ...(cmd.outputs?.(out) ?? []).map((p): [string, string] => [p, outputText(p)]),
  ];
  return channels.flatMap(([where, text]) => SECRET_MARKS.filter((m) => text.includes(m)).map((m) => `${where}: ${m}`));
}
