import { describe, expect, it } from 'vitest';
import { runCli, withoutStamp } from '../support/cli.js';

describe('fit on explicit numbers', () => {
  it('reports free 7 and fits false for the shortage example of a 2048-entry ring (the fit --json shape)', async () => {
    const r = await runCli(['fit', '--descq-cnt', '2048', '--head', '10000', '--tail', '12040', '--num-desc', '9', '--json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({
      descqCnt: 2048,
      head: 10000,
      tail: 12040,
      inFlight: 2040,
      free: 7,
      numDesc: 9,
      fits: false,
      scheduleThreshold: 256,
    });
  });

  it('accepts counters across the u32 wrap and hex input', async () => {
    const r = await runCli(['fit', '--descq-cnt', '64', '--head', '0xfffffff0', '--tail', '0x10', '--num-desc', '31', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ inFlight: 32, free: 31, fits: true });
  });

  it('exits 0 when the descriptors fit and 1 when they do not, text or JSON', async () => {
    const fits = ['fit', '--descq-cnt', '2048', '--head', '10000', '--tail', '12040'];
    expect((await runCli([...fits, '--num-desc', '7'])).code).toBe(0);
    expect((await runCli([...fits, '--num-desc', '8'])).code).toBe(1);
    expect((await runCli([...fits, '--num-desc', '7', '--json'])).code).toBe(0);
    expect((await runCli([...fits, '--num-desc', '8', '--json'])).code).toBe(1);
  });

  it('explains a request that can never fit', async () => {
    const r = await runCli(['fit', '--descq-cnt', '64', '--head', '0', '--tail', '0', '--num-desc', '64']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/never, on the sdma_send_txreq path: more than the ring's largest free count 63/);
  });

  it.each([
    [['--descq-cnt', '100', '--head', '0', '--tail', '0', '--num-desc', '1'], /power of two from 64 to 32768/],
    [['--descq-cnt', '32', '--head', '0', '--tail', '0', '--num-desc', '1'], /power of two/],
    [['--descq-cnt', '2048', '--head', '0', '--tail', '2048', '--num-desc', '1'], /exceeds descq_cnt − 1/],
    [['--descq-cnt', '2048', '--head', '-1', '--tail', '0', '--num-desc', '1'], /--head expects an integer/],
    [['--descq-cnt', '2048', '--head', '0', '--tail', '0', '--num-desc', '65'], /--num-desc must be from 1 to 64/],
    [['--descq-cnt', '2048', '--head', '0', '--num-desc', '1'], /--descq-cnt, --head and --tail/],
    [['--descq-cnt', '2048', '--head', '0', '--tail', '0'], /num-desc/],
  ])('refuses %j with exit 64', async (args, msg) => {
    const r = await runCli(['fit', ...args]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(msg);
    expect(r.stdout).toBe('');
  });
});

describe('decode', () => {
  it('decodes both qwords (the decode --json shape)', async () => {
    const r = await runCli(['decode', '0xc040000000100000', '0x0000000500002a35', '--json']);
    expect(r.code).toBe(0);
    expect(withoutStamp(JSON.parse(r.stdout))).toEqual({
      chip: 'wfr',
      qw0: '0xc040000000100000',
      qw1: '0x0000000500002a35',
      first: true,
      last: true,
      len: 64,
      addr: '0x0000000000100000',
      gen: 1,
      intReq: false,
      headToHost: true,
      ahgMode: 1,
      ahgIdx: 0x0a,
      ahgDws: 3,
      ahgUpdate: '0x00000005',
      flags: '-HFL',
    });
  });

  it('prints named fields as text', async () => {
    const r = await runCli(['decode', '0x8010000000001000', '0x4']);
    expect(r.stdout).toMatch(/BYTE_COUNT\s+16 bytes/);
    expect(r.stdout).toMatch(/flags\s+--F-/);
  });

  it.each([
    ['zz', '0'],
    ['0x1', '0x10000000000000000'],
    ['-5', '0'],
  ])('refuses %s %s with exit 64', async (a, b) => {
    const r = await runCli(['decode', a, b]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/QW[01]/);
  });
});

describe('the command line itself', () => {
  it('prints --version and --help', async () => {
    const v = await runCli(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const h = await runCli(['--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/fit \[engine\]/);
    expect(h.stdout).toMatch(/decode <qw0> <qw1>/);
    const hf = await runCli(['fit', '--help']);
    expect(hf.stdout).toMatch(/--num-desc/);
  });

  it('gives exit 64 for an unknown command or flag', async () => {
    expect((await runCli(['frobnicate'])).code).toBe(64);
    const r = await runCli(['decode', '0', '0', '--bogus']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/bogus/);
    expect((await runCli([])).code).toBe(64);
  });
});

describe('repeatable options', () => {
  it('takes --fault more than once without swallowing the command after it', async () => {
    const r = await runCli([
      '--backend',
      'emu',
      '--engines',
      '2',
      '--at-ms',
      '5',
      '--fault',
      'stop-fetch@1:0',
      '--fault',
      'lost-interrupt@2:1',
      'engines',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).units[0].engines).toHaveLength(2);
  });
});
