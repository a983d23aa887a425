// `hfi1-sdma emu race` through the CLI: the documented JSON shape with the reduction's fields after
// it, the text reproduction, usage errors.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('emu race', () => {
  it("--json has the documented fields, then the reduction's, and a lost wake-up still exits 0", async () => {
    const r = await runCli(['emu', 'race', '--variant', 'psm-pre-2019', '--submitters', '1', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(Object.keys(j)).toEqual([
      'variant',
      'submitters',
      'bound',
      'seed',
      'schedules',
      'states',
      'lostWakeups',
      'wastedWakeups',
      'trace',
      'reduce',
      'statesExplored',
      'steps',
      'graphSteps',
    ]);
    expect(j).toMatchObject({ variant: 'psm-pre-2019', submitters: 1, bound: 80, seed: 1, states: 2865, lostWakeups: 9 });
    expect(j).toMatchObject({ reduce: 'all', schedules: 866, statesExplored: 2865, steps: 3611, graphSteps: 4724 });
    expect(j.trace.length).toBeGreaterThan(0);
    expect(Object.keys(j.trace[0])).toEqual(['step', 'actor', 'action', 'seq', 'head', 'tail', 'free']);
    const last = j.trace.at(-1);
    expect(last.head).toBe(last.tail);
    expect(j.trace.map((t: { step: number }) => t.step)).toEqual(j.trace.map((_: unknown, i: number) => i + 1));
  });

  it('prints the trace as a table ending with why the sender is stuck', async () => {
    const r = await runCli(['emu', 'race', '--variant', 'no-progress-check', '--submitters', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/lost wake-ups\s+9 /);
    expect(r.stdout).toMatch(/step\s+actor\s+action\s+seq\s+head\s+tail\s+free/);
    expect(r.stdout).toContain('sdma_desc_avail(63): dmawait empty');
    expect(r.stdout).toMatch(/S1 sleeps on dmawait for 9 descriptors while 63 are free/);
  });

  it('an order without lost wake-ups says so and prints no trace', async () => {
    const r = await runCli(['emu', 'race', '--variant', 'kernel-sample-first', '--submitters', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/lost wake-ups\s+0 /);
    expect(r.stdout).toContain('No lost wake-up');
    expect(r.stdout).not.toContain('step  actor');
  });

  it('--reduce none explores every interleaving: more schedules, the same counts', async () => {
    const args = ['emu', 'race', '--variant', 'psm-pre-2019', '--submitters', '2', '--json'];
    const plain = JSON.parse((await runCli([...args, '--reduce', 'none'])).stdout);
    const all = JSON.parse((await runCli(args)).stdout);
    expect(plain).toMatchObject({ reduce: 'none', schedules: 74226, states: 95217, statesExplored: 95217 });
    expect(all).toMatchObject({ reduce: 'all', states: 95217, statesExplored: 47679 });
    expect([all.lostWakeups, all.wastedWakeups, all.trace.length]).toEqual([
      plain.lostWakeups,
      plain.wastedWakeups,
      plain.trace.length,
    ]);
    expect(all.schedules).toBeLessThan(plain.schedules / 4);
  });

  it('says what the reduction saved', async () => {
    const r = await runCli(['emu', 'race', '--variant', 'kernel', '--submitters', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /reduction\s+all: 41,939 states stored for 83,752 distinct \(50% saved\), 61,676 steps taken, the state graph has 146,331 \(58% saved\)/,
    );
    expect(r.stdout).toMatch(/schedules\s+16414 explored/);
    expect(r.stdout).toMatch(/lost wake-ups\s+136 \(distinct states\)/);
  });

  it('random sampling: the same --seed prints the same result', async () => {
    const args = ['emu', 'race', '--variant', 'psm-pre-2019', '--schedules', '200', '--seed', '5', '--json'];
    const a = await runCli(args);
    const b = await runCli(args);
    expect(a.code).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    expect(JSON.parse(a.stdout)).toMatchObject({ seed: 5, schedules: 200 });
  });

  it.each([
    [['--variant', 'kernel-2018'], /--variant must be one of kernel, psm-pre-2019/],
    [['--submitters', '5'], /--submitters must be from 1 to 4/],
    [['--submitters', '0'], /--submitters must be from 1 to 4/],
    [['--reduce', 'some'], /--reduce must be one of none, symmetry, por, all/],
    [['--reduce', 'all', '--schedules', '10'], /--reduce applies to the exhaustive search/],
    [['--bound', 'x'], /--bound expects an integer/],
  ])('usage error for %j', async (extra, message) => {
    const r = await runCli(['emu', 'race', ...extra]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(message);
  });
});
