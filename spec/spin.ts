// Running the Promela model (sdma-wakeup.pml) through SPIN: generate pan.c once (`spin -a`), compile it with the
// machine's C compiler, then run pan for each variant and set of senders (chosen in the environment, no new
// compile), and read back its verdict, its counts and, for a lost wake-up, the trail as the explorer's actors
// step by step (the model prints one `@@` line per step when pan replays a trail).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Variant } from '../src/emu/race/variants.js';
import type { SenderKind } from '../src/emu/race/world.js';

/** The model. */
export const MODEL = fileURLToPath(new URL('./sdma-wakeup.pml', import.meta.url));
const MODEL_NAME = 'sdma-wakeup.pml';

/** The model's variant numbers (SDMA_SPEC_VARIANT). */
const VARIANT_CODE: Readonly<Record<Variant, number>> = {
  kernel: 0,
  'psm-pre-2019': 1,
  'kernel-sample-first': 2,
  'no-progress-check': 3,
};
/** The model's sender kinds (a digit each in SDMA_SPEC_KINDS). */
const KIND_CODE: Readonly<Record<SenderKind, number>> = { qp: 0, psm: 1, ipoib: 2 };

/**
 * What is checked: `end`, a sender left asleep for good (SPIN's invalid end state: every process blocked, a sender
 * not at its end); `window`, a sender left asleep while the chip is idle and no interrupt is pending or running
 * (the explorer's lost wake-up, which other senders' later traffic may still end), as an assertion of a watcher.
 */
export type SpinProperty = 'end' | 'window';

/** One step of a replayed trail: the explorer's actor (senders 0…n−1, the chip n, the interrupt n+1) and what it did. */
export interface SpinStep {
  actor: number;
  /** The model's step code (S_*, C_*, I_* in the model). */
  code: number;
  seq: number;
  head: number;
  tail: number;
  free: number;
}

/** What one pan run found. */
export interface SpinResult {
  variant: Variant;
  senders: SenderKind[];
  property: SpinProperty;
  /** `lost`: a counterexample was found; `none`: the search covered every state and found none. */
  verdict: 'lost' | 'none';
  /** States stored, transitions taken, depth reached, and the memory pan used (MB), as pan reports them. */
  states: number;
  transitions: number;
  depth: number;
  memoryMb: number;
  /** The counterexample's steps (null when none, or when the trail was not asked for). */
  trail: SpinStep[] | null;
}

/** Why SPIN cannot run here, or null when `spin` and a C compiler are both on the PATH. */
export async function spinMissing(cc = process.env.CC ?? 'cc'): Promise<string | null> {
  for (const [cmd, args] of [
    ['spin', ['-V']],
    [cc, ['--version']],
  ] as const) {
    try {
      await run(cmd, [...args], process.cwd());
    } catch (e) {
      return `${cmd} cannot be run (${(e as NodeJS.ErrnoException).code ?? String(e)}): install Debian's spin and a C compiler (apt-get install spin gcc)`;
    }
  }
  return null;
}

/** How pan is compiled: -O0 builds in a fraction of the time of -O2 and suffices for small checks. */
export interface CompileOptions {
  optimize?: boolean;
  cc?: string;
}

/** A compiled verifier in a directory of its own; `close` removes the directory. */
export class Pan {
  private runs = 0;

  private constructor(readonly dir: string) {}

  /** Generate and compile the verifier of the model (safety: assertions and invalid end states; states collapsed). */
  static async build(opts: CompileOptions = {}): Promise<Pan> {
    const dir = mkdtempSync(join(tmpdir(), 'hfi1-sdma-spin-'));
    try {
      copyFileSync(MODEL, join(dir, MODEL_NAME));
      await run('spin', ['-a', MODEL_NAME], dir);
      const cc = opts.cc ?? process.env.CC ?? 'cc';
      // REACH: a state reached again by a shorter path is explored again, so that -i finds the shortest trail.
      await run(cc, [opts.optimize ? '-O2' : '-O0', '-DSAFETY', '-DCOLLAPSE', '-DREACH', '-o', 'pan', 'pan.c'], dir);
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    return new Pan(dir);
  }

  /** Check one variant with these senders (1-4, in actor order); `trail` replays a counterexample into steps. */
  async check(
    variant: Variant,
    senders: readonly SenderKind[],
    property: SpinProperty,
    opts: { trail?: boolean; shortest?: boolean; hashBits?: number } = {},
  ): Promise<SpinResult> {
    if (senders.length < 1 || senders.length > 4) throw new Error(`the model takes 1 to 4 senders, got ${senders.length}`);
    const env = {
      ...process.env,
      SDMA_SPEC_VARIANT: String(VARIANT_CODE[variant]),
      SDMA_SPEC_KINDS: senders.map((k) => KIND_CODE[k]).join(''),
      SDMA_SPEC_CHECK: property,
    };
    const suffix = `t${++this.runs}`;
    const hashBits = opts.hashBits ?? [16, 16, 18, 22, 24][senders.length] ?? 24;
    const args = ['-n', `-w${hashBits}`, '-m10000', `-t${suffix}`, ...(opts.shortest ? ['-i'] : [])];
    const out = await run('./pan', args, this.dir, env);
    const found = parsePan(out);
    let trail: SpinStep[] | null = null;
    if (found.errors > 0 && opts.trail) {
      const replay = await run('./pan', ['-S', `-w${hashBits}`, '-r', `${MODEL_NAME}.${suffix}`], this.dir, env);
      trail = parseTrail(replay);
    }
    return {
      variant,
      senders: [...senders],
      property,
      verdict: found.errors > 0 ? 'lost' : 'none',
      states: found.states,
      transitions: found.transitions,
      depth: found.depth,
      memoryMb: found.memoryMb,
      trail,
    };
  }

  /** Remove the directory. */
  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The counts of a pan run; an incomplete search (out of memory, depth limit) is an error, never "none". */
export function parsePan(out: string): { errors: number; states: number; transitions: number; depth: number; memoryMb: number } {
  // pan prints large counts in e-notation (1.2345e+08 transitions).
  const num = (re: RegExp): number => {
    const m = re.exec(out);
    if (!m) throw new Error(`pan's output has no ${re.source}:\n${out.slice(0, 2000)}`);
    return Number(m[1]);
  };
  const errors = num(/errors: (\d+)/);
  if (errors === 0 && /out of memory|Search not completed|max search depth too small/.test(out)) {
    throw new Error(
      `pan did not cover every state (${/out of memory|max search depth too small/.exec(out)?.[0] ?? 'search not completed'})`,
    );
  }
  return {
    errors,
    states: Math.round(num(/([0-9.]+(?:e[+-]?[0-9]+)?) states, stored/)),
    transitions: Math.round(num(/([0-9.]+(?:e[+-]?[0-9]+)?) transitions \(= stored\+matched\)/)),
    depth: num(/depth reached (\d+)/),
    memoryMb: num(/([\d.]+)\s+total actual memory usage/),
  };
}

/** The `@@ actor code seq head tail free` lines of a replayed trail. */
export function parseTrail(out: string): SpinStep[] {
  const steps: SpinStep[] = [];
  for (const line of out.split('\n')) {
    const m = /^@@ (\d+) (\d+) (\d+) (\d+) (\d+) (-?\d+)$/.exec(line.trim());
    if (!m) continue;
    const [actor, code, seq, head, tail, free] = m.slice(1).map(Number) as [number, number, number, number, number, number];
    steps.push({ actor, code, seq, head, tail, free });
  }
  return steps;
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      // pan exits 0 with errors found; a failure to run or compile is an error with what it printed.
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') reject(err);
      else if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${stderr || stdout || err.message}`));
      else resolve(stdout);
    });
  });
}
