// The built CLI: a gone device, link-down, health's Nagios conventions, closed pipes, shell completion,
// repeated options and stopping on SIGTERM. A child process where the process is the point (its status,
// a closed pipe, a signal, a completion script that runs the program by its path); the other answers
// in-process (main() with captured streams).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runChild, startChild } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';

const EMU = ['--backend', 'emu', '--engines', '4'];
/** The children's host: a light load (what a pipe or a signal does to the process does not depend on it). */
const LIGHT = [...EMU, '--workload', 'qp:gbps=1'];
const HAS_ZSH = (() => {
  try {
    execFileSync('zsh', ['-c', 'true']);
    return true;
  } catch {
    return false;
  }
})();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Run `node bin … | head -1` in bash; returns the CLI's own status (PIPESTATUS[0]) and its stderr. */
function piped(args: string[]): { status: number; firstLine: string; stderr: string } {
  const cli = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  const errDir = mkdtempSync(join(tmpdir(), 'pipe-'));
  dirs.push(errDir);
  const r = spawnSync('bash', ['-c', `${cli} 2>"$ERR" | head -1; echo "status=\${PIPESTATUS[0]}"; cat "$ERR"`], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '', HFI1_SDMA_SYSROOT: '', ERR: join(errDir, 'err') },
    timeout: 60_000,
  });
  const [firstLine = '', statusLine = '', ...rest] = r.stdout.split('\n');
  return { status: Number(statusLine.replace('status=', '')), firstLine, stderr: rest.join('\n').trim() };
}

describe('a gone device (--fault device-gone@10)', () => {
  it.each([
    [['engines']],
    [['engines', '--json']],
    [['show', '1']],
    [['ring', '1']],
    [['watch', '--count', '2', '--interval-ms', '50']],
    [['fit', '1', '--num-desc', '4']],
    [['progress', '1', '--num-desc', '4', '--timeout-ms', '100']],
  ])('%j exits 69, saying so once on stderr', async (argv) => {
    const r = await runCli([...EMU, '--fault', 'device-gone@10', ...argv]);
    expect(r.code).toBe(69);
    expect(r.stdout).not.toBe('');
    expect(r.stderr).toMatch(/^hfi1-sdma: hfi1_0: device gone: .*\n$/);
  });

  it('engines --json: no state, not running', async () => {
    const r = await runCli([...EMU, '--fault', 'device-gone@10', 'engines', '--json']);
    for (const e of JSON.parse(r.stdout).units[0].engines) expect(e).toMatchObject({ gone: true, state: null, running: false });
  });

  it('health is CRITICAL in one line for the unit, naming the emulator', async () => {
    const r = await runCli([...EMU, '--fault', 'device-gone@10', 'health', '--stall-ms', '100']);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^HFI1-SDMA CRITICAL - emulator: SD301 hfi1_0 \(0000:05:00\.0\) gone/);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('CRITICAL:'))).toHaveLength(1);
  });
});

describe('health as a Nagios plugin', () => {
  it('link-down is a WARNING naming s20_Idle, not "healthy"', async () => {
    const r = await runCli([...EMU, '--fault', 'link-down@10', 'health', '--stall-ms', '100']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^HFI1-SDMA WARNING - emulator: SD305 hfi1_0 has no ACTIVE port \(port 1 DOWN \(Polling\)\).*all 4 engine\(s\) idle in s20_Idle/,
    );
  });

  it('an engine error that recovers between samples is still a WARNING (SDMAErrCt rose)', async () => {
    const r = await runCli([
      ...EMU,
      '--workload',
      'qp:gbps=10',
      '--at-ms',
      '50',
      '--fault',
      'engine-error:1@200:3',
      'health',
      '--stall-ms',
      '200',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^WARNING: SD103 hfi1_0 sdma3 engine errors rose by 1 while watched/m);
    const e = await runCli([...EMU, '--fault', 'engine-error:1@30:3', 'engines', '--json']);
    const engine3 = JSON.parse(e.stdout).units[0].engines[3];
    expect(engine3.errors).toEqual([]);
    expect(engine3.errCount).toBeGreaterThan(0);
  });

  it('a bad flag is UNKNOWN (3), not 64 (the status of the process)', () => {
    const r = runChild(['health', '--bogus']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^HFI1-SDMA UNKNOWN - /);
  });

  it('no hfi1 or hfi2 unit is UNKNOWN (3), never the emulator', async () => {
    const d = mkdtempSync(join(tmpdir(), 'e2e-'));
    dirs.push(d);
    const r = await runCli(['--sysroot', d, 'health']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^HFI1-SDMA UNKNOWN - no hfi1 or hfi2 unit found/);
  });
});

describe('shell hygiene', () => {
  // A one-shot command (its output written at once) and the loop that writes on into the closed pipe.
  it.each([[['ring', '3']], [['watch', '--json', '--interval-ms', '10']]])('%j | head -1 ends quietly with status 0', (argv) => {
    const r = piped([...LIGHT, '--at-ms', '20', ...argv]);
    expect(r.firstLine).not.toBe('');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.each(['--backend', '--sysroot', '--unit', '--seed', '--workload', '--at-ms', '--engines'])(
    'a repeated %s is a usage error (64)',
    async (flag) => {
      const value = { '--backend': 'emu', '--sysroot': '/tmp', '--workload': 'qp' }[flag] ?? '1';
      const r = await runCli([flag, value, flag, value, 'engines']);
      expect(r.code).toBe(64);
      expect(r.stderr).toMatch(new RegExp(`${flag} was given 2 times`));
    },
  );

  it('watch stops on SIGTERM: the loop ends and the command exits 0', async () => {
    const x = startChild([...LIGHT, 'watch', '--json', '--interval-ms', '600000']);
    for (let i = 0; i < 600 && !x.out(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(x.out()).not.toBe('');
    x.child.kill('SIGTERM');
    expect(await x.exited).toBe(0);
    expect(x.err()).toBe('');
  });
});

describe('completion', () => {
  // The scripts call the program by name (hfi1-sdma on PATH, else npx's): as installed, it is on PATH.
  const onPath = (() => {
    const d = mkdtempSync(join(tmpdir(), 'on-path-'));
    dirs.push(d);
    symlinkSync(BIN, join(d, 'hfi1-sdma'));
    return { ...process.env, PATH: `${d}:${process.env.PATH ?? ''}` };
  })();

  it.each(['bash', 'zsh'])('completion %s prints a script that calls this program by name', async (shell) => {
    const r = await runCli(['completion', shell]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/command -v hfi1-sdma .*\) --get-yargs-completions/);
    expect(r.stdout).toContain('echo hfi1-sdma || echo npx --no-install hfi1-sdma) --get-yargs-completions');
    expect(r.stdout).not.toContain(BIN);
    expect(r.stdout).toMatch(shell === 'bash' ? /complete .* hfi1-sdma/ : /compdef _hfi1_sdma_completions hfi1-sdma/);
  });

  it('an unknown shell is a usage error (64)', async () => {
    expect((await runCli(['completion', 'tcsh'])).code).toBe(64);
  });

  it('bash completes --workload values and commands through the script, which runs this program', async () => {
    const script = (await runCli(['completion', 'bash'])).stdout;
    // Each completion runs the program (a child of bash): one for a value list, one for a prefix the script filters.
    const complete = (words: string[]) =>
      spawnSync(
        'bash',
        [
          '-c',
          `eval "$SCRIPT"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _hfi1_sdma_completions; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: 'utf8', env: { ...onPath, SCRIPT: script }, timeout: 60_000 },
      ).stdout.trim();
    expect(complete(['hfi1-sdma', '--workload', '']).split('\n')).toEqual(
      expect.arrayContaining(['mixed', 'line-rate', 'qp', 'psm', 'small', 'idle', 'ipoib']),
    );
    expect(complete(['hfi1-sdma', 'heal'])).toBe('health');
  });

  it("the program completes --fault values, commands and a command's options (what the script hands it)", async () => {
    // The script passes the words to `hfi1-sdma --get-yargs-completions` and keeps the answers that start with the
    // word being completed (compgen -W): the same here, in-process.
    const complete = async (words: string[]) => {
      const r = await runCli(['--get-yargs-completions', ...words]);
      expect(r.code).toBe(0);
      return r.stdout
        .split('\n')
        .filter((w) => w !== '' && w.startsWith(words.at(-1) ?? ''))
        .join('\n');
    };
    expect(await complete(['hfi1-sdma', '--fault', 'dev'])).toBe('device-gone@');
    expect(await complete(['hfi1-sdma', 'heal'])).toBe('health');
    expect(await complete(['hfi1-sdma', 'rep'])).toBe('report');
    expect(await complete(['hfi1-sdma', 'report', '--interval'])).toBe('--interval-ms');
  });

  it.skipIf(!HAS_ZSH)(
    'zsh completes commands and --workload values through the script (skipped: zsh not installed)',
    async () => {
      const script = (await runCli(['completion', 'zsh'])).stdout;
      // _describe and _default stand in for the completion system's widgets: they print what they are given.
      const complete = (words: string[]) =>
        spawnSync(
          'zsh',
          [
            '-c',
            `autoload -U compinit; compinit -u -D; eval "$SCRIPT"; _describe() { print -rl -- \${(P)2} }; _default() { print DEFAULT }; words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; _hfi1_sdma_completions`,
          ],
          { encoding: 'utf8', env: { ...onPath, SCRIPT: script, HOME: tmpdir() }, timeout: 60_000 },
        ).stdout.trim();
      expect(complete(['hfi1-sdma', '--workload', '']).split('\n')).toEqual([
        'mixed',
        'line-rate',
        'qp',
        'psm',
        'small',
        'ipoib',
        'idle',
      ]);
      expect(complete(['hfi1-sdma', 'hea']).split('\n')).toContain(
        'health:Nagios plugin: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; one line per finding',
      );
    },
  );
});
