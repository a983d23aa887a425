// One option discipline on every command: a single-value option given twice is a usage error naming it as typed
// (health's included, as UNKNOWN), a typo of another command's option says whose it is, a missing positional names
// itself, completion --help is help, an unknown shell is refused, and the completion script calls the program by
// name and completes variants and engine numbers.
import { describe, expect, it } from 'vitest';
import { COMMAND_TABLE, commandName } from '../../src/cli/commands.js';
import { completionScript, valueCompletions } from '../../src/cli/completion.js';
import { cliSurface } from '../kit/cli-surface.js';
import { runCli } from '../support/cli.js';

describe('one option discipline', () => {
  const twice: [string[], RegExp][] = [
    [
      ['--backend', 'emu', 'watch', '--interval-ms', '500', '--interval-ms', '600'],
      /^hfi1-sdma: --interval-ms was given 2 times \(500, 600\); give it once$/m,
    ],
    [['--backend', 'emu', 'waiters', '--count', '2', '--count', '3'], /--count was given 2 times \(2, 3\)/],
    [['--backend', 'emu', 'snapshot', '-o', 'a.tar.gz', '-o', 'b.tar.gz'], /-o was given 2 times \(a\.tar\.gz, b\.tar\.gz\)/],
    [['--backend', 'emu', 'export', '--listen', '127.0.0.1:1', '--listen', '127.0.0.1:2'], /--listen was given 2 times/],
  ];
  for (const [argv, message] of twice) {
    it(`${argv.slice(2, 4).join(' ')} given twice: 64, named as typed, never a JavaScript value`, async () => {
      const r = await runCli(argv);
      expect(r.code).toBe(64);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\[".*"\]/);
    });
  }

  it('health: -c and -t given twice are UNKNOWN (3) with the same message, one count named twice in -w too', async () => {
    const c = await runCli(['--backend', 'emu', 'health', '-c', 'full=4', '-c', 'full=5']);
    expect(c.code).toBe(3);
    expect(c.stdout).toBe('HFI1-SDMA UNKNOWN - -c was given 2 times (full=4, full=5); give it once\n');
    expect((await runCli(['health', '-t', '5', '-t', '6'])).stdout).toMatch(/^HFI1-SDMA UNKNOWN - -t was given 2 times/);
    expect((await runCli(['--backend', 'emu', 'health', '-w', 'full=4,full=5'])).stdout).toMatch(
      /UNKNOWN - emulator: --warning names full twice/,
    );
  });

  it('a typo of an option of another command says whose it is', async () => {
    const r = await runCli(['--backend', 'emu', 'ring', '0', '--stal-ms', '5']);
    expect(r.code).toBe(64);
    expect(r.stderr.split('\n')[0]).toBe(
      'hfi1-sdma: unknown option --stal-ms (--stall-ms is an option of engines, show, watch, health, fleet, export, not of this command)',
    );
  });

  it('a missing positional names itself, with an example', async () => {
    for (const [argv, text] of [
      [['show'], 'hfi1-sdma: show: which engine? e.g. hfi1-sdma show 3'],
      [['ring'], 'hfi1-sdma: ring: which engine? e.g. hfi1-sdma ring 3'],
      [['emu'], 'hfi1-sdma: emu: which action? run, write, serve or race, e.g. hfi1-sdma emu run'],
    ] as const) {
      const r = await runCli([...argv]);
      expect(r.code).toBe(64);
      expect(r.stderr.split('\n')[0]).toBe(text);
    }
  });

  it('every command’s list of its own options is what its --help shows', async () => {
    const surface = await cliSurface();
    for (const e of COMMAND_TABLE) {
      const own = surface.commands.get(commandName(e.command)) ?? [];
      for (const o of e.options ?? []) expect(own, `${e.command}: --${o}`).toContain(`--${o}`);
    }
  });
});

describe('completion', () => {
  it('--help is help, an unknown shell (given or $SHELL) is 64', async () => {
    const help = await runCli(['completion', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^hfi1-sdma completion \[shell\]/);
    expect(help.stdout).not.toMatch(/_hfi1_sdma_completions|yargs command completion/);
    const fish = await runCli(['completion'], { SHELL: '/usr/bin/fish' });
    expect(fish.code).toBe(64);
    expect(fish.stderr).toMatch(/your shell \(\$SHELL\) is "fish"/);
    expect((await runCli(['completion', 'tcsh'])).code).toBe(64);
    expect((await runCli(['completion'], { SHELL: '/bin/zsh' })).stdout).toMatch(/^#compdef hfi1-sdma/);
  });

  it('the script calls the program by its name (or npx --no-install), never a path of this machine', () => {
    for (const shell of ['bash', 'zsh'] as const) {
      const s = completionScript(shell);
      expect(s).toContain('command -v hfi1-sdma');
      expect(s).toContain('npx --no-install hfi1-sdma');
      expect(s).not.toMatch(/\/(root|home|tmp|work)\//);
    }
  });

  it('completes the race variants and the engine numbers of the unit found', async () => {
    expect(await valueCompletions(['hfi1-sdma', 'emu', 'race', '--variant', ''])).toEqual([
      'kernel',
      'psm-pre-2019',
      'no-progress-check',
      'kernel-sample-first',
    ]);
    expect(await valueCompletions(['hfi1-sdma', 'emu', 'race', '--variant', 'ps'])).toEqual(['psm-pre-2019']);
    // No unit under this sysroot: the chip's sixteen engines.
    expect(await valueCompletions(['hfi1-sdma', '--sysroot', '/nonexistent', 'show', '1'])).toEqual([
      '1',
      '10',
      '11',
      '12',
      '13',
      '14',
      '15',
    ]);
  });
});
