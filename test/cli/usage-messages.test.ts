// Usage messages name the option as the user typed it, once, with the nearest known option, and
// say what a missing required option is for.
import { describe, expect, it } from 'vitest';
import { nearestOption, usageMessage } from '../../src/cli/usage-errors.js';
import { runCli } from '../support/cli.js';

describe('usage messages', () => {
  it('an unknown option is named once as typed, with the option it is closest to', async () => {
    const r = await runCli(['--backend', 'emu', 'watch', '--stal-ms', '5']);
    expect(r.code).toBe(64);
    expect(r.stderr.split('\n')[0]).toBe('hfi1-sdma: unknown option --stal-ms (did you mean --stall-ms?)');
    expect(r.stderr).not.toMatch(/stalMs/);
  });

  it('an option typed with = and a global option misspelled', async () => {
    const r = await runCli(['--backend', 'emu', 'engines', '--jsn=true']);
    expect(r.stderr.split('\n')[0]).toBe('hfi1-sdma: unknown option --jsn (did you mean --json?)');
  });

  it('an option nothing resembles gets no suggestion; an extra word is an unexpected argument', async () => {
    expect((await runCli(['--backend', 'emu', 'engines', '--frobnicate-the-ring'])).stderr.split('\n')[0]).toBe(
      'hfi1-sdma: unknown option --frobnicate-the-ring',
    );
    expect((await runCli(['--backend', 'emu', 'engines', 'extra'])).stderr.split('\n')[0]).toBe(
      'hfi1-sdma: unexpected argument "extra"',
    );
  });

  it('snapshot without --output says what it is for, by its long and short name', async () => {
    const r = await runCli(['--backend', 'emu', 'snapshot']);
    expect(r.code).toBe(64);
    expect(r.stderr.split('\n')[0]).toBe('hfi1-sdma: --output (-o) is required: the archive to write, e.g. -o node17.tar.gz');
  });

  it('fit without --num-desc names it', async () => {
    const r = await runCli(['fit', '--descq-cnt', '64', '--head', '0', '--tail', '0']);
    expect(r.code).toBe(64);
    expect(r.stderr.split('\n')[0]).toBe('hfi1-sdma: --num-desc is required: the descriptors in the request, e.g. --num-desc 9');
  });

  it('health keeps its UNKNOWN line, with the same message', async () => {
    const r = await runCli(['--backend', 'emu', 'health', '--stal-ms', '5']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('HFI1-SDMA UNKNOWN - unknown option --stal-ms (did you mean --stall-ms?)\n');
  });

  it('other messages pass through; the pieces on their own', () => {
    const opts = { key: { 'stall-ms': true, json: true, o: true, output: true }, alias: { o: ['output'] } };
    expect(usageMessage('name a command; see --help', [], opts)).toBe('name a command; see --help');
    expect(usageMessage('Missing required argument: o', [], opts)).toBe(
      '--output (-o) is required: the archive to write, e.g. -o node17.tar.gz',
    );
    expect(nearestOption('stalms', opts)).toBe('stall-ms');
    expect(nearestOption('zzz', opts)).toBeNull();
  });
});
