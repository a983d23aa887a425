// The quick start of `engines` and `health`: the same arguments as yargs gives, and the same output, or the full
// parser.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandsFor } from '../../src/cli/commands.js';
import { fastArgs } from '../../src/cli/fast-path.js';
import type { Io } from '../../src/cli/io.js';
import { writeTree } from '../hw/sysroot.js';
import { runCliVirtual } from '../support/cli.js';

function io(env: Record<string, string | undefined> = {}): Io & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    env,
    isTTY: false,
    columns: 100,
    sleep: async () => {},
    readStdin: async () => '',
    out: () => out,
    err: () => err,
  };
}

describe('fastArgs', () => {
  it('reads engines with the everyday options, in both spellings, with yargs defaults', () => {
    expect(fastArgs(['engines'], io())).toEqual({ command: 'engines', args: { backend: 'auto', json: false } });
    expect(fastArgs(['--sysroot', '/x', 'engines', '--json', '--no-color', '--unit=1', '--backend=hw'], io())).toEqual({
      command: 'engines',
      args: { backend: 'hw', json: true, color: false, sysroot: '/x', unit: '1' },
    });
    expect(fastArgs(['engines', '--color'], io())?.args.color).toBe(true);
    expect(fastArgs(['engines'], io({ HFI1_SDMA_SYSROOT: '/env' }))?.args.sysroot).toBe('/env');
    expect(fastArgs(['--sysroot=/flag', 'engines'], io({ HFI1_SDMA_SYSROOT: '/env' }))?.args.sysroot).toBe('/flag');
  });

  it('reads health as a fleet runs it, its own options after its word, with the defaults its builder gives', () => {
    const defaults = { backend: 'auto', json: false, stallMs: '1000', timeout: '10', maxBytes: '1024' };
    expect(fastArgs(['health'], io())).toEqual({ command: 'health', args: defaults });
    expect(fastArgs(['health', '--brief'], io())).toEqual({ command: 'health', args: { ...defaults, brief: true } });
    expect(
      fastArgs(['--sysroot=/x', 'health', '--brief', '--off-host', 'warning', '--stall-ms=50', '--state', 'none'], io()),
    ).toEqual({
      command: 'health',
      args: { ...defaults, sysroot: '/x', brief: true, offHost: 'warning', stallMs: '50', state: 'none' },
    });
    expect(fastArgs(['--no-color', 'health', '--json', '--unit', '1'], io())?.args).toEqual({
      ...defaults,
      color: false,
      json: true,
      unit: '1',
    });
  });

  it.each([
    [[]],
    [['show', '3']],
    [['health', '-w', 'full=4']],
    [['health', '--critical', 'errors=1']],
    [['health', '--timeout', '5']],
    [['health', '--strand-ms', '100']],
    [['health', '--max-bytes', '0']],
    [['health', '--brief=false']],
    [['health', '--brief', '--brief']],
    [['health', '--state']],
    [['health', '--stall-ms', '5', '--stall-ms', '6']],
    [['--brief', 'health']],
    [['--state', 'none', 'health']],
    [['health', '--help']],
    [['health', 'extra']],
    [['engines', '--brief']],
    [['engines', 'extra']],
    [['engines', '--help']],
    [['engines', '-h']],
    [['engines', '--version']],
    [['engines', '--seed', '2']],
    [['engines', '--sysroot']],
    [['engines', '--sysroot', '']],
    [['engines', '--sysroot', '-x']],
    [['engines', '--sysroot', 'a', '--sysroot', 'b']],
    [['engines', '--color', '--no-color']],
    [['engines', '--json=false']],
    [['engines', '--backend', 'bogus']],
    [['engines', '--', 'x']],
    [['--jsn', 'engines']],
  ])('leaves %j to the full parser', (argv) => {
    expect(fastArgs(argv as string[], io())).toBeNull();
  });
});

describe('engines and health through the quick start print what the full parser path prints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fast-path-'));
  writeTree(dir, {});
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // In virtual time (a sleep moves the clock at once, the tree's samples are stamped with it): what engines and
  // health judge over their observation does not hang on how fast this machine runs. Handing main the command specs
  // takes the yargs path.
  const untimed = (s: string) => s.replace(/"time":"[^"]*"/g, '"time":""').replace(/"(\w*[tT]imeMs)":\d+/g, '"$1":0');
  /** `argv` through the quick start and through yargs (handed the specs of `word`): the same status and output. */
  const bothWays = async (argv: string[], word: string) => {
    const fast = await runCliVirtual(argv);
    const full = await runCliVirtual(argv, {}, await commandsFor(word));
    expect(fast.code).toBe(full.code);
    expect(untimed(fast.stdout)).toBe(untimed(full.stdout));
    expect(fast.stderr).toBe(full.stderr);
  };
  it.each([
    [['--sysroot', dir, 'engines']],
    [['engines', `--sysroot=${dir}`, '--no-color', '--unit', '0']],
    [['--sysroot', dir, 'engines', '--unit', '7']],
    [['--sysroot', dir, '--backend', 'hw', 'engines', '--unit', 'x']],
    [['--sysroot', dir, 'engines', '--json']],
  ])('engines %j', (argv) => bothWays(argv, 'engines'));

  it.each([
    [['--sysroot', dir, 'health', '--state', 'none']],
    [['--sysroot', dir, 'health', '--brief', '--state=none', '--stall-ms', '40']],
    [['health', `--sysroot=${dir}`, '--brief', '--off-host', 'warning', '--state', 'none', '--no-color']],
    [['--sysroot', dir, 'health', '--brief', '--json', '--state', 'none']],
    [['--sysroot', dir, 'health', '--json', '--state', 'none', '--stall-ms', '400']],
    [['--sysroot', dir, 'health', '--stall-ms', '0', '--state', 'none']],
    [['--sysroot', dir, 'health', '--off-host', 'sometimes', '--state', 'none']],
    [['--sysroot', dir, 'health', '--state', 'none', '--unit', '7']],
  ])('health %j', (argv) => bothWays(argv, 'health'));
});
