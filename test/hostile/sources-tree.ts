// Building hostile sysroots for the sources-* tests: a good tree (test/hw/sysroot.ts), then one
// file replaced by something the kernel never puts there; and running the CLI on it: in this process
// (what the readers make of the file), or as a child where the process itself is the subject.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import { engineReg } from '../../src/hw/regs.js';
import { SEND_DMA_CTRL, SEND_DMA_ENGINES, SEND_DMA_LEN_GEN } from '../../src/progress/constants.js';
import { writeBarImage } from '../hw/bar-image.js';
import { fixture } from '../hw/fixtures.js';
import { BDF, type TreeOptions, writeTree } from '../hw/sysroot.js';
import { BIN, ROOT } from '../support/child.js';
import { runCliVirtual } from '../support/cli.js';
import { nobodyUnavailable, othersCanReach, spawnAsNobody, spawnNodeAsNobody } from '../support/nobody.js';
import { spawnSync } from '../support/spawn.js';
import { removeTrees } from '../support/temp.js';

/** A fresh directory per call under one temp base, removed after the file's tests. */
export function tempRoots(): () => string {
  const base = mkdtempSync(join(tmpdir(), 'hfi1-hostile-'));
  chmodSync(base, 0o755); // so an unprivileged child can reach the trees inside
  afterAll(() => {
    spawnSync('chmod', ['-R', 'u+rwx', base]);
    removeTrees([base]);
  });
  let n = 0;
  return () => join(base, String(n++));
}

/** A readable BAR image: 16 engines, engines 0 and 1 running with 2048-entry rings. */
export function goodBar(path: string): void {
  writeBarImage(
    path,
    new Map([
      [SEND_DMA_ENGINES, 16n],
      [engineReg(SEND_DMA_CTRL, 0), 0x9n],
      [engineReg(SEND_DMA_CTRL, 1), 0x9n],
      [engineReg(SEND_DMA_LEN_GEN, 0), 0x40800n],
      [engineReg(SEND_DMA_LEN_GEN, 1), 0x40800n],
    ]),
  );
}

/** Write a good two-engine tree under `root` (options as writeTree) and return its paths. */
export function goodTree(root: string, o: TreeOptions = {}) {
  writeTree(root, o);
  const cls = join(root, 'sys/class/infiniband/hfi1_0');
  const dbg = join(root, 'sys/kernel/debug/hfi1/hfi1_0');
  return {
    root,
    cls,
    sdes: join(dbg, 'sdes'),
    counters: join(dbg, 'counters'),
    counterNames: join(dbg, 'counter_names'),
    interrupts: join(root, 'proc/interrupts'),
    param: join(root, 'sys/module/hfi1/parameters/sdma_descq_cnt'),
    vl: join(cls, 'sdma0/vl'),
    cpuList: join(cls, 'sdma0/cpu_list'),
    resource0: join(root, 'sys/bus/pci/devices', BDF, 'resource0'),
  };
}

/** What a source file can be replaced by. */
export type Oddity = 'fifo' | 'dir' | 'dev-zero' | 'dev-urandom' | 'loop' | 'dangling' | 'empty';

/** Replace the file at `path` by an oddity. */
export function replaceWith(path: string, kind: Oddity): void {
  rmSync(path, { recursive: true, force: true });
  mkdirSync(dirname(path), { recursive: true });
  if (kind === 'fifo') {
    const r = spawnSync('mkfifo', [path]);
    if (r.status !== 0) throw new Error(`mkfifo ${path}: ${r.stderr}`);
  } else if (kind === 'dir') mkdirSync(path);
  else if (kind === 'dev-zero') symlinkSync('/dev/zero', path);
  else if (kind === 'dev-urandom') symlinkSync('/dev/urandom', path);
  // Relative, as a tree's own links are: under a sysroot an absolute link is refused whatever it names.
  else if (kind === 'loop') symlinkSync(basename(path), path);
  else if (kind === 'dangling') symlinkSync(`${basename(path)}.nowhere`, path);
  else writeFileSync(path, '');
}

/** The upstream fixture's engine-1 header (an empty ring) as engine `e`. */
export function emptyRecord(e: number): string {
  const line = fixture('sdes/upstream.txt').split('\n')[6] as string;
  return `${line.replace(/^SDE 1 /, `SDE ${e} `)}\n`;
}

/** What a finished CLI run did, and how long it took. */
export interface Run {
  code: number | null;
  /** The signal that ended a child (null in this process). */
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The most a child may run: well under the test timeout, so a hang fails as a hang, not a timeout. */
export const CHILD_LIMIT_MS = 20_000;

/**
 * A hostile tree never changes: `engines` and `show` on one observe a busy engine for health's whole window
 * (2 × --stall-ms) before they judge it stalled. These tests are about reading the sources, not the window: a short
 * one, unless the test names its own.
 */
function observation(args: string[]): string[] {
  return (args[0] === 'engines' || args[0] === 'show') && !args.includes('--stall-ms') ? ['--stall-ms', '50'] : [];
}

/** The environment a run sees: no colour, no sysroot from the caller's environment. */
const ENV = { NO_COLOR: '1', HFI1_SDMA_SYSROOT: '' };

/** Run the CLI on a sysroot in this process, through the same main() a child runs, in virtual time (runCliVirtual). */
export async function cli(root: string, args: string[]): Promise<Run> {
  const t0 = performance.now();
  const r = await runCliVirtual(['--sysroot', root, ...args, ...observation(args)], { ...process.env, ...ENV });
  return { ...r, signal: null, ms: performance.now() - t0 };
}

/**
 * Run the built CLI on a sysroot as a child process, optionally as `nobody` (see NOBODY_UNAVAILABLE): for what only
 * a process shows (a read that could block for ever ends at the child's limit, not in the test worker; its own
 * exit path; another user's rights).
 */
export function cliChild(root: string, args: string[], opts: { asNobody?: boolean } = {}): Run {
  const argv = ['--sysroot', root, ...args, ...observation(args)];
  const spawnOpts = { encoding: 'utf8', env: { ...process.env, ...ENV }, timeout: CHILD_LIMIT_MS } as const;
  const t0 = performance.now();
  const r = opts.asNobody ? spawnAsNobody(argv, spawnOpts) : spawnSync(process.execPath, [BIN, ...argv], spawnOpts);
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - t0 };
}

/** One run of a guarded batch: a sysroot, and the command line after `--sysroot TREE`. */
export interface Case {
  root: string;
  args: string[];
}

/** The compiled main() a guarded batch runs (the sources the bundle is made from). */
const BATCH_MAIN = `${ROOT}dist/src/cli/main.js`;

/** The script of a guarded batch: each command line of argv[1] through main(), one after the other; the runs as JSON. */
const BATCH = `
  const { main } = await import(${JSON.stringify(BATCH_MAIN)});
  const runs = [];
  for (const [i, argv] of JSON.parse(process.argv[1]).entries()) {
    process.stderr.write('case ' + i + '\\n');
    const run = { code: null, stdout: '', stderr: '', ms: 0 };
    const io = {
      stdout: (t) => { run.stdout += t; },
      stderr: (t) => { run.stderr += t; },
      env: process.env,
      isTTY: false,
      columns: 100,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      readStdin: async () => '',
    };
    const t0 = performance.now();
    run.code = await main(argv, io);
    run.ms = performance.now() - t0;
    runs.push(run);
  }
  process.stdout.write(JSON.stringify(runs));`;

/**
 * Run the CLI on each case (as `cli` does, through main()) one after the other in ONE child process, optionally as
 * `nobody`: for trees where a read could block for ever (a FIFO, a device node), which would hang this worker (the
 * child is ended at CHILD_LIMIT_MS instead, and the error names the case it was in), and for another user's rights.
 * Each run's `signal` is the child's. Where nobody cannot read the checkout, each case is a child of its own.
 */
export function cliGuarded(cases: readonly Case[], opts: { asNobody?: boolean } = {}): Run[] {
  if (opts.asNobody && !othersCanReach(BATCH_MAIN, 0o4)) return cases.map((c) => cliChild(c.root, c.args, opts));
  const argvs = cases.map((c) => ['--sysroot', c.root, ...c.args, ...observation(c.args)]);
  const nodeArgs = ['--input-type=module', '-e', BATCH, JSON.stringify(argvs)];
  const spawnOpts = { encoding: 'utf8', env: { ...process.env, ...ENV }, timeout: CHILD_LIMIT_MS, maxBuffer: 64 << 20 } as const;
  const r = opts.asNobody ? spawnNodeAsNobody(nodeArgs, spawnOpts) : spawnSync(process.execPath, nodeArgs, spawnOpts);
  if (r.status !== 0) {
    const at = Number([...r.stderr.matchAll(/^case (\d+)$/gm)].at(-1)?.[1]);
    const c = cases[at];
    throw new Error(
      `the guarded child ended with ${r.signal ?? `status ${r.status}`}${c ? ` in ${c.args.join(' ')} on ${c.root}` : ''}: ${r.stderr}`,
    );
  }
  return (JSON.parse(r.stdout) as Omit<Run, 'signal'>[]).map((run) => ({ ...run, signal: r.signal }));
}

/** True when this process is root: a mode does not keep it out. */
export const IS_ROOT = process.geteuid?.() === 0;
/** Why a child cannot run as nobody here (null: it can). */
export const NOBODY_UNAVAILABLE = nobodyUnavailable();
