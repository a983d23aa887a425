// The tests' spawnSync (test/support/spawn.ts, by posix_spawn) answers as Node's does for what the tests ask of it:
// exit codes, signals, output, input, working directory, environment, a timeout, a program that is not there.
// biome-ignore lint/style/noRestrictedImports: Node's own, to compare with
import { spawnSync as nodeSpawnSync, type SpawnSyncOptions } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onPath } from '../support/on-path.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

/** What a test reads of a result. */
function seen(r: { status: number | null; signal: NodeJS.Signals | null; stdout: unknown; stderr: unknown; error?: Error }) {
  return {
    status: r.status,
    signal: r.signal,
    stdout: r.stdout === null ? null : String(r.stdout),
    stderr: r.stderr === null ? null : String(r.stderr),
    error: (r.error as NodeJS.ErrnoException | undefined)?.code,
  };
}

const dir = tempDirs('hfi1-sdma-spawn-test-')();
const NOT_EXECUTABLE = join(dir, 'data');
writeFileSync(NOT_EXECUTABLE, 'echo never\n', { mode: 0o644 });
const SHELL_TEXT = join(dir, 'script');
writeFileSync(SHELL_TEXT, 'echo "from a script without #!"\n', { mode: 0o755 });

const CASES: [string, string, string[], SpawnSyncOptions][] = [
  ['output and status', 'sh', ['-c', 'echo out; echo err >&2; exit 3'], { encoding: 'utf8' }],
  ['input', 'sh', ['-c', 'cat; echo done'], { encoding: 'utf8', input: 'a line\n' }],
  ['no input: end of file at once', 'sh', ['-c', 'cat; echo done'], { encoding: 'utf8' }],
  ['a signal', 'sh', ['-c', 'kill -USR1 $$'], {}],
  ['SIGPIPE at its default (Node ignores it)', 'sh', ['-c', 'yes | head -n 2'], { encoding: 'utf8' }],
  ['the working directory', 'pwd', [], { cwd: '/', encoding: 'utf8' }],
  [
    'the environment, and PATH from it',
    'sh',
    ['-c', 'echo "$ONLY"'],
    { env: { ONLY: 'this', PATH: '/usr/bin:/bin' }, encoding: 'utf8' },
  ],
  ['output as bytes', 'printf', ['\\001\\377'], {}],
  ['streams ignored', 'sh', ['-c', 'echo out; echo err >&2'], { stdio: 'ignore' }],
  ['a program that is not there', 'hfi1-sdma-no-such-program', [], { encoding: 'utf8' }],
  ['a file that may not be run', NOT_EXECUTABLE, [], { encoding: 'utf8' }],
  ['a file that is not a program: /bin/sh runs it', SHELL_TEXT, [], { encoding: 'utf8' }],
  ['a working directory that is not there', 'pwd', [], { cwd: '/hfi1-sdma-no-such-directory', encoding: 'utf8' }],
];

describe.runIf(onPath('sh'))('spawnSync by posix_spawn (skipped: no sh)', () => {
  for (const [what, cmd, args, opts] of CASES) {
    it(`${what}: as Node's`, () => {
      const ours = spawnSync(cmd, args, opts);
      expect(seen(ours)).toEqual(seen(nodeSpawnSync(cmd, args, opts)));
      if (opts.encoding === undefined && opts.stdio === undefined) expect(Buffer.isBuffer(ours.stdout)).toBe(true);
    });
  }

  it('a child past its timeout is sent killSignal and the result says ETIMEDOUT', () => {
    const r = spawnSync('sleep', ['60'], { timeout: 100, killSignal: 'SIGKILL', encoding: 'utf8' });
    expect(r.signal).toBe('SIGKILL');
    expect(r.status).toBeNull();
    expect((r.error as NodeJS.ErrnoException | undefined)?.code).toBe('ETIMEDOUT');
  });

  it("a shell command line takes Node's spawnSync", () => {
    const r = spawnSync('echo $((6 * 7))', [], { shell: true, encoding: 'utf8' });
    expect(r.stdout).toBe('42\n');
  });
});
