// `snapshot -o` where writing fails or is interrupted: a directory as the target, a missing or
// read-only directory, a full disk, a file-size limit, SIGINT/SIGTERM part-way. The old target
// stays as it was, no temporary is left beside it and no staging or unpacked tree in TMPDIR.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';
import { emulatedHost } from './canary.js';

const IS_ROOT = process.getuid?.() === 0;
const OLD = 'the previous snapshot\n';

let base: string;
let host: string;
let tmp: string;
let savedTmp: string | undefined;
const mounts: string[] = [];

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'snap-out-'));
  host = join(base, 'host');
  tmp = join(base, 'tmp');
  mkdirSync(tmp);
  await emulatedHost(host); // about 17 KiB compressed per instant
  savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
});
afterAll(() => {
  for (const m of mounts) spawnSync('umount', [m]);
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(base, { recursive: true, force: true });
});

let n = 0;
function outDir(): string {
  const d = join(base, `out${++n}`);
  mkdirSync(d);
  return d;
}

function tmpfs(options: string): string {
  const d = outDir();
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', d]);
  if (r.status !== 0) throw new Error(`mount tmpfs failed: ${r.stderr}`);
  mounts.push(d);
  return d;
}

/** `snapshot -o OUT` of `samples` instants (about 17 KiB each), five by default. */
const capture = (out: string, samples = 5) =>
  runCli(['--sysroot', host, '--backend', 'hw', 'snapshot', '-o', out, '--samples', String(samples), '--interval-ms', '10']);

describe('snapshot -o where it cannot write', () => {
  it('onto an existing directory: 73, the directory untouched', async () => {
    const d = outDir();
    const target = join(d, 'node17.tar.gz');
    mkdirSync(target);
    const r = await runCli(['--backend', 'emu', '--engines', '2', 'snapshot', '-o', target]);
    expect(r.code).toBe(73);
    expect(r.stderr).toContain(`-o ${target}: is a directory, not a regular file: it is left as it is`);
    expect(readdirSync(d)).toEqual(['node17.tar.gz']);
    expect(readdirSync(target)).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('into a directory that does not exist: 73', async () => {
    const target = join(base, 'no-such-dir', 'x.tar.gz');
    const r = await capture(target);
    expect(r.code).toBe(73);
    expect(r.stderr).toContain(`${target}: ${join(base, 'no-such-dir')} is not an existing directory: create it first`);
  });

  it.runIf(IS_ROOT)('into a read-only file system: 73 (runs as root: mounts a read-only tmpfs)', async () => {
    const d = tmpfs('ro,size=64k');
    const r = await capture(join(d, 'x.tar.gz'));
    expect(r.code).toBe(73);
    expect(r.stderr).toMatch(/is on a read-only file system: choose another -o/);
  });

  it.runIf(!IS_ROOT)('into a directory this user cannot write: 77 (skipped as root, who may write anywhere)', async () => {
    const { chmodSync } = await import('node:fs');
    const d = outDir();
    chmodSync(d, 0o555);
    const r = await capture(join(d, 'x.tar.gz'));
    expect(r.code).toBe(77);
    expect(r.stderr).toMatch(/cannot write in .* \(EACCES\): choose a directory you can write/);
    expect(readdirSync(d)).toEqual([]);
  });
});

describe('a write that fails part-way keeps the old snapshot and leaves nothing', () => {
  it.runIf(IS_ROOT)('a full disk (ENOSPC): 74 (runs as root: mounts a 16 KiB tmpfs)', async () => {
    const d = tmpfs('size=16k');
    const target = join(d, 'x.tar.gz');
    writeFileSync(target, OLD);
    // Two instants: about 35 KiB, more than the tmpfs holds.
    const r = await capture(target, 2);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(74);
    expect(r.stderr).toContain(`${target}: writing failed (ENOSPC); nothing was replaced`);
    expect(readFileSync(target, 'utf8')).toBe(OLD);
    expect(readdirSync(d)).toEqual(['x.tar.gz']);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('a file-size limit (EFBIG, ulimit -f in a shell running the CLI): 74', () => {
    const d = outDir();
    const target = join(d, 'x.tar.gz');
    writeFileSync(target, OLD);
    // One instant: about 17 KiB, past the 8 KiB limit.
    const args = ['--sysroot', host, '--backend', 'hw', 'snapshot', '-o', target, '--samples', '1'];
    // A child: the limit is a process's (ulimit -f), and so is the SIGXFSZ it would raise.
    const r = spawnSync('bash', ['-c', 'ulimit -f 8 && exec "$0" "$@"', process.execPath, BIN, ...args], {
      encoding: 'utf8',
      env: { ...process.env, TMPDIR: tmp, HFI1_SDMA_SYSROOT: '' },
      timeout: 60_000,
    });
    expect(r.stderr).toContain(`${target}: writing failed (EFBIG); nothing was replaced`);
    expect(r.status).toBe(74);
    expect(readFileSync(target, 'utf8')).toBe(OLD);
    expect(readdirSync(d)).toEqual(['x.tar.gz']);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

/** Start the CLI with TMPDIR pointing at the test's directory: a child, for the signals sent to it. */
function start(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, TMPDIR: tmp, HFI1_SDMA_SYSROOT: '', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += String(c);
  });
  child.stderr.on('data', (c) => {
    stderr += String(c);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  return { child, exited, out: () => stdout, err: () => stderr };
}

/** Wait (bounded) until `cond` holds; the bound is generous and never the reason a test passes. */
async function until(cond: () => boolean, what: string, boundMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > boundMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('signals part-way leave nothing behind', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} during snapshot -o --samples: exit ${code}, the old file kept, no temporary`, async () => {
      const d = outDir();
      const target = join(d, 'x.tar.gz');
      writeFileSync(target, OLD);
      const run = start([
        '--sysroot',
        host,
        '--backend',
        'hw',
        'snapshot',
        '-o',
        target,
        '--samples',
        '100',
        '--interval-ms',
        '200',
      ]);
      await until(() => readdirSync(d).some((f) => f.startsWith('.hfi1-sdma.x.tar.gz.')), 'the temporary beside the target');
      run.child.kill(signal);
      expect(await run.exited).toBe(code);
      expect(readFileSync(target, 'utf8')).toBe(OLD);
      expect(readdirSync(d)).toEqual(['x.tar.gz']);
      expect(readdirSync(tmp)).toEqual([]);
    });
  }

  it('SIGTERM to watch on a snapshot removes the unpacked tree', async () => {
    const snap = join(outDir(), 's.tar.gz');
    expect((await capture(snap, 2)).code).toBe(0);
    const run = start(['--sysroot', snap, 'watch', '--json', '--interval-ms', '100']);
    await until(() => run.out().includes('\n'), 'the first line of watch');
    expect(readdirSync(tmp).length).toBe(1); // the unpacked snapshot, while watch runs
    run.child.kill('SIGTERM');
    await run.exited;
    expect(readdirSync(tmp)).toEqual([]);
  });
});
