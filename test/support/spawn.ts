// spawnSync for the tests, by posix_spawn(3) instead of Node's fork(2).
//
// Node (libuv) starts a child with fork(): the kernel copies the page tables of the whole parent and marks its
// pages copy-on-write, and every page the parent writes after that faults once more. A test worker holds a few
// hundred MB (the modules and heaps of all the files it ran), so each child it starts cost it 40-60 ms of CPU,
// most of it after the child had exited (measured on the 2-core machine: a worker of 150 MB running the emulator
// between spawns of /usr/bin/true, 1,300 more page faults and about 40 ms more CPU per spawn). glibc's
// posix_spawn shares the parent's memory until the child calls exec (clone with CLONE_VM and CLONE_VFORK), so a
// spawn costs the same whatever the parent's size. The suite's workers start about three hundred children.
//
// The same call and result as Node's spawnSync for what the tests use: argv, env, cwd, input, timeout with
// killSignal, stdio 'pipe' / 'ignore' / 'inherit' (or an array of them), encoding. The child's output goes to
// files, read when it has exited (no pipe to drain, so no size limit: maxBuffer is not applied). Anything else,
// uid, gid, argv0 or another C library, takes Node's spawnSync.
import {
  spawnSync as nodeSpawnSync,
  type SpawnSyncOptions,
  type SpawnSyncOptionsWithBufferEncoding,
  type SpawnSyncOptionsWithStringEncoding,
  type SpawnSyncReturns,
  type StdioOptions,
} from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants as osConstants, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

type Koffi = typeof import('koffi');
type Fn = (...args: unknown[]) => unknown;

interface Posix {
  koffi: Koffi;
  faInit: Fn;
  faDestroy: Fn;
  faOpen: Fn;
  faChdir: Fn;
  attrInit: Fn;
  attrDestroy: Fn;
  attrFlags: Fn;
  attrSigdef: Fn;
  attrSigmask: Fn;
  sigfill: Fn;
  sigempty: Fn;
  spawn: Fn;
  waitpid: Fn;
  kill: Fn;
}

/** glibc's sizes on 64-bit Linux (posix_spawn_file_actions_t 80 bytes, posix_spawnattr_t 336, sigset_t 128), with room. */
const FILE_ACTIONS_BYTES = 256;
const ATTR_BYTES = 512;
const SIGSET_BYTES = 256;
const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const O_RDONLY = 0;
const O_WRONLY = 1;
const O_WRONLY_CREAT_TRUNC = 0o1 | 0o100 | 0o1000;
const WNOHANG = 1;

let posix: Posix | null | undefined;

/** The C library's posix_spawn calls, loaded once; null where they cannot be (another C library, no koffi). */
function load(): Posix | null {
  if (posix !== undefined) return posix;
  posix = null;
  if (process.platform !== 'linux' || (process.arch !== 'x64' && process.arch !== 'arm64')) return posix;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as Koffi;
    const lib = koffi.load('libc.so.6');
    posix = {
      koffi,
      faInit: lib.func('int posix_spawn_file_actions_init(void *fa)'),
      faDestroy: lib.func('int posix_spawn_file_actions_destroy(void *fa)'),
      faOpen: lib.func('int posix_spawn_file_actions_addopen(void *fa, int fd, const char *path, int flags, uint32_t mode)'),
      faChdir: lib.func('int posix_spawn_file_actions_addchdir_np(void *fa, const char *path)'),
      attrInit: lib.func('int posix_spawnattr_init(void *attr)'),
      attrDestroy: lib.func('int posix_spawnattr_destroy(void *attr)'),
      attrFlags: lib.func('int posix_spawnattr_setflags(void *attr, short flags)'),
      attrSigdef: lib.func('int posix_spawnattr_setsigdefault(void *attr, void *set)'),
      attrSigmask: lib.func('int posix_spawnattr_setsigmask(void *attr, void *set)'),
      sigfill: lib.func('int sigfillset(void *set)'),
      sigempty: lib.func('int sigemptyset(void *set)'),
      spawn: lib.func(
        'int posix_spawn(_Out_ int *pid, const char *path, void *fa, void *attr, const char **argv, const char **envp)',
      ),
      waitpid: lib.func('int waitpid(int pid, _Out_ int *status, int options)'),
      kill: lib.func('int kill(int pid, int sig)'),
    };
  } catch {
    posix = null;
  }
  return posix;
}

let scratch: string | null = null;
let serial = 0;

/** A fresh path for a child's stdin, stdout or stderr, in a directory of this process's. */
function scratchFile(what: string): string {
  if (scratch === null) {
    const dir = mkdtempSync(join(tmpdir(), 'hfi1-sdma-spawn-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    scratch = dir;
  }
  serial += 1;
  return join(scratch, `${process.pid}-${serial}.${what}`);
}

/** The program `cmd` names, found on `path` as execvp would find it; null when there is none. */
function resolve(cmd: string, path: string | undefined): string | null {
  if (cmd.includes('/')) return cmd;
  for (const dir of (path ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    const p = join(dir || '.', cmd);
    try {
      accessSync(p, constants.X_OK);
      if (statSync(p).isFile()) return p;
    } catch {
      // next
    }
  }
  return null;
}

type Stdio = 'pipe' | 'ignore' | 'inherit';

/** The three standard streams' settings, or null when one is something this module does not handle. */
function streams(stdio: StdioOptions | undefined): [Stdio, Stdio, Stdio] | null {
  if (stdio === undefined) return ['pipe', 'pipe', 'pipe'];
  const all = typeof stdio === 'string' ? [stdio, stdio, stdio] : [...stdio];
  if (all.length > 3) return null;
  const out: Stdio[] = [];
  for (let i = 0; i < 3; i++) {
    const s = all[i] ?? 'pipe';
    if (s === null || s === undefined) out.push('pipe');
    else if (s === 'pipe' || s === 'ignore' || s === 'inherit') out.push(s);
    else if (s === 'overlapped') out.push('pipe');
    else return null;
  }
  return out as [Stdio, Stdio, Stdio];
}

/** A signal's name (SIGTERM) from its number, as Node reports it. */
function signalName(n: number): NodeJS.Signals | null {
  for (const [name, v] of Object.entries(osConstants.signals)) if (v === n) return name as NodeJS.Signals;
  return null;
}

function signalNumber(s: NodeJS.Signals | number | undefined): number {
  if (typeof s === 'number') return s;
  return osConstants.signals[s ?? 'SIGTERM'];
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Wait for `pid` to end; past `deadline` (ms of performance.now()) it is sent `signal` first. */
function reap(p: Posix, pid: number, deadline: number, signal: number): { status: number; timedOut: boolean } {
  const st = [0];
  if (!Number.isFinite(deadline)) {
    for (;;) {
      const rc = p.waitpid(pid, st, 0) as number;
      if (rc === pid) return { status: st[0] as number, timedOut: false };
      if (p.koffi.errno() !== osConstants.errno.EINTR) throw new Error(`waitpid ${pid}: errno ${p.koffi.errno()}`);
    }
  }
  let pause = 0.05;
  for (;;) {
    const rc = p.waitpid(pid, st, WNOHANG) as number;
    if (rc === pid) return { status: st[0] as number, timedOut: false };
    if (rc < 0 && p.koffi.errno() !== osConstants.errno.EINTR) throw new Error(`waitpid ${pid}: errno ${p.koffi.errno()}`);
    if (performance.now() >= deadline) {
      p.kill(pid, signal);
      while ((p.waitpid(pid, st, 0) as number) !== pid) {
        if (p.koffi.errno() !== osConstants.errno.EINTR) break;
      }
      return { status: st[0] as number, timedOut: true };
    }
    Atomics.wait(sleeper, 0, 0, pause);
    pause = Math.min(pause * 2, 5);
  }
}

function spawnError(code: keyof typeof osConstants.errno, cmd: string, args: readonly string[]): Error {
  const errno = -osConstants.errno[code];
  return Object.assign(new Error(`spawnSync ${cmd} ${code}`), {
    errno,
    code,
    syscall: `spawnSync ${cmd}`,
    path: cmd,
    spawnargs: [...args],
  });
}

/** The result of a child that never started, as Node gives it: no output, no status, the error. */
function notStarted(error: Error): SpawnSyncReturns<string | Buffer> {
  return {
    pid: 0,
    output: [null, null, null] as never,
    stdout: null as never,
    stderr: null as never,
    status: null,
    signal: null,
    error,
  };
}

export function spawnSync(
  cmd: string,
  args: readonly string[],
  opts: SpawnSyncOptionsWithStringEncoding,
): SpawnSyncReturns<string>;
export function spawnSync(
  cmd: string,
  args?: readonly string[],
  opts?: SpawnSyncOptionsWithBufferEncoding,
): SpawnSyncReturns<Buffer>;
export function spawnSync(cmd: string, args?: readonly string[], opts?: SpawnSyncOptions): SpawnSyncReturns<string | Buffer>;
export function spawnSync(
  cmd: string,
  args: readonly string[] = [],
  opts: SpawnSyncOptions = {},
): SpawnSyncReturns<string | Buffer> {
  const p = load();
  const stdio = streams(opts.stdio);
  const unhandled = opts.shell || opts.uid !== undefined || opts.gid !== undefined || opts.argv0 !== undefined;
  if (p === null || stdio === null || unhandled) return nodeSpawnSync(cmd, args, opts);
  const env = opts.env ?? process.env;
  const encoding = opts.encoding === 'buffer' ? undefined : opts.encoding;
  const program = resolve(cmd, env.PATH);
  if (program === null) return notStarted(spawnError('ENOENT', cmd, args));

  const files: (string | null)[] = [null, null, null];
  const fa = Buffer.alloc(FILE_ACTIONS_BYTES);
  const attr = Buffer.alloc(ATTR_BYTES);
  const sigdef = Buffer.alloc(SIGSET_BYTES);
  const sigmask = Buffer.alloc(SIGSET_BYTES);
  p.faInit(fa);
  p.attrInit(attr);
  try {
    // Each call answers 0 or an error number; any failure and Node's spawnSync starts the child instead.
    let failed = 0;
    if (opts.input !== undefined && stdio[0] === 'pipe') {
      files[0] = scratchFile('in');
      writeFileSync(files[0], opts.input as string | NodeJS.ArrayBufferView);
      failed |= p.faOpen(fa, 0, files[0], O_RDONLY, 0) as number;
    } else if (stdio[0] !== 'inherit') failed |= p.faOpen(fa, 0, '/dev/null', O_RDONLY, 0) as number;
    for (const fd of [1, 2]) {
      if (stdio[fd] === 'pipe') {
        files[fd] = scratchFile(fd === 1 ? 'out' : 'err');
        failed |= p.faOpen(fa, fd, files[fd], O_WRONLY_CREAT_TRUNC, 0o600) as number;
      } else if (stdio[fd] === 'ignore') failed |= p.faOpen(fa, fd, '/dev/null', O_WRONLY, 0) as number;
    }
    if (opts.cwd !== undefined) failed |= p.faChdir(fa, String(opts.cwd)) as number;
    // The child starts with every signal at its default and none blocked, as libuv's child resets them (Node
    // ignores SIGPIPE, which an exec would otherwise pass on).
    failed |= (p.sigfill(sigdef) as number) | (p.sigempty(sigmask) as number);
    failed |= (p.attrSigdef(attr, sigdef) as number) | (p.attrSigmask(attr, sigmask) as number);
    failed |= p.attrFlags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK) as number;
    if (failed !== 0) return nodeSpawnSync(cmd, args, opts);

    const argv = [cmd, ...args, null];
    const envp = [...Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`])), null];
    const pidOut = [0];
    const rc = p.spawn(pidOut, program, fa, attr, argv, envp) as number;
    // Not an executable format: execvp (Node's child) runs it with /bin/sh, posix_spawn does not.
    if (rc === osConstants.errno.ENOEXEC) return nodeSpawnSync(cmd, args, opts);
    if (rc !== 0) {
      const code = (Object.entries(osConstants.errno).find(([, n]) => n === rc)?.[0] ??
        'ENOENT') as keyof typeof osConstants.errno;
      return notStarted(spawnError(code, cmd, args));
    }
    const pid = pidOut[0] as number;
    const deadline = opts.timeout && opts.timeout > 0 ? performance.now() + opts.timeout : Number.POSITIVE_INFINITY;
    const { status: raw, timedOut } = reap(p, pid, deadline, signalNumber(opts.killSignal));
    // A stream the child had as a pipe is its file's bytes; one it did not have, null (as Node gives them).
    const read = (i: 1 | 2) => {
      const f = files[i];
      if (f === null || f === undefined) return null;
      const b = readFileSync(f);
      return encoding ? b.toString(encoding) : b;
    };
    const stdout = read(1);
    const stderr = read(2);
    const termsig = raw & 0x7f;
    const status = termsig === 0 ? (raw >> 8) & 0xff : null;
    const signal = termsig === 0 ? null : signalName(termsig);
    const out: SpawnSyncReturns<string | Buffer> = {
      pid,
      output: [null, stdout, stderr] as never,
      stdout: stdout as never,
      stderr: stderr as never,
      status,
      signal,
    };
    if (timedOut) out.error = spawnError('ETIMEDOUT', cmd, args);
    return out;
  } finally {
    p.faDestroy(fa);
    p.attrDestroy(attr);
    for (const f of files) if (f !== null) rmSync(f, { force: true });
  }
}
