// The surroundings of a hostile-snapshot test: a canary tree beside the temporary directory the
// reader unpacks into (TMPDIR points there), and a valid snapshot to mutate.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { SEND_DMA_CTRL, SEND_DMA_LEN_GEN } from '../../src/progress/constants.js';
import { writeBarImage } from '../hw/bar-image.js';
import { writeTree } from '../hw/sysroot.js';
import { runCli } from '../support/cli.js';
import { entriesOf, hashTree, type RawEntry, writeArchive, writeCanary } from './craft.js';

export interface HostileEnv {
  base: string;
  canary: string;
  tmp: string;
  /** A valid snapshot (format 2, one instant) of a two-engine unit with a BAR. */
  good: string;
  sysroot: string;
  canaryHash: string;
  restore(): void;
}

/** Make the surroundings; TMPDIR points at `tmp` until restore(). */
export async function hostileEnv(): Promise<HostileEnv> {
  const base = mkdtempSync(join(tmpdir(), 'snap-hostile-'));
  const canary = join(base, 'canary');
  const tmp = join(base, 'tmp');
  mkdirSync(tmp);
  writeCanary(canary);
  const sysroot = join(base, 'sysroot');
  writeTree(sysroot, {
    engines: 2,
    bar: (p) =>
      writeBarImage(
        p,
        new Map([
          [SEND_DMA_CTRL, 0x9n],
          [SEND_DMA_LEN_GEN, 0x40800n],
        ]),
      ),
  });
  const good = join(base, 'good.tar.gz');
  const r = await runCli(['--sysroot', sysroot, '--backend', 'hw', 'snapshot', '-o', good]);
  if (r.code !== 0) throw new Error(`capturing the base snapshot failed: ${r.stderr}`);
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  return {
    base,
    canary,
    tmp,
    good,
    sysroot,
    canaryHash: hashTree(canary),
    restore() {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Read `archive` with `engines`; expect `code`, a message naming the archive and `what`, and no trace left. */
export async function expectRefused(env: HostileEnv, archive: string, what: RegExp, code = 65): Promise<string> {
  const r = await runCli(['--sysroot', archive, 'engines', '--json']);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain(archive);
  expect(r.stderr).toMatch(what);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(r.stderr).not.toContain(env.tmp); // the temporary tree is never named
  expect(r.code).toBe(code);
  expect(hashTree(env.canary)).toBe(env.canaryHash);
  expect(readdirSync(env.tmp)).toEqual([]);
  return r.stderr;
}

/** The hostile surroundings of one test file, set up before its tests and removed after (call at its top level). */
export interface HostileSuite {
  /** The surroundings (set once the file's tests start). */
  env(): HostileEnv;
  /** The entries of the valid snapshot, to craft from. */
  base(): RawEntry[];
  /** Write `entries` as a new archive beside the canary; its path. */
  crafted(entries: readonly RawEntry[]): string;
}

/** Register the surroundings for the calling file's tests (hooks registered here run for that file). */
export function hostileSuite(): HostileSuite {
  let env: HostileEnv | null = null;
  let base: RawEntry[] = [];
  let n = 0;
  beforeAll(async () => {
    env = await hostileEnv();
    base = entriesOf(env.good);
  });
  afterAll(() => env?.restore());
  const current = (): HostileEnv => {
    if (env === null) throw new Error('hostileSuite: used outside the tests of the file that registered it');
    return env;
  };
  return {
    env: current,
    base: () => base,
    crafted: (entries) => writeArchive(join(current().base, `crafted${++n}.tar.gz`), entries),
  };
}
