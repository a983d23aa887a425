// `hfi1-sdma emu race` through the CLI: the documented JSON shape with the reduction's fields after
// it, the text reproduction, usage errors.
import { describe, expect, it } from 'vitest';
import { runCli, withoutStamp } from '../support/cli.js';

describe('emu race', () => {
  it("--json has the documented fields, then the reduction's, and a lost wake-up still exits 0", async () => {
    const r = await runCli(['emu', 'race', '--variant', 'psm-pre-2019', '--submitters', '1', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(Object.keys(j)).toEqual([
      'host',
      'time',
      'toolVersion',
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
      'senders',
      'lostWakeupsByKind',
      'lostForGood',
    ]);
    expect(j).toMatchObject({ variant: 'psm-pre-2019', submitters: 1, bound: 80, seed: 1, states: 2865, lostWakeups: 9 });
    expect(j).toMatchObject({ reduce: 'all', schedules: 866, statesExplored: 2865, steps: 3611, graphSteps: 4724 });
    expect(j).toMatchObject({ senders: ['psm'], lostWakeupsByKind: { qp: 0, psm: 9, ipoib: 0 }, lostForGood: 9 });
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
    // One submitter: sleep sets alone cut the schedules (symmetry needs two; race-reduce.test.ts compares those).
    const args = ['emu', 'race', '--variant', 'psm-pre-2019', '--submitters', '1', '--json'];
    const plain = JSON.parse((await runCli([...args, '--reduce', 'none'])).stdout);
    const all = JSON.parse((await runCli(args)).stdout);
    expect(plain).toMatchObject({ reduce: 'none', schedules: 1909, states: 2865, statesExplored: 2865 });
    expect(all).toMatchObject({ reduce: 'all', schedules: 866, states: 2865, statesExplored: 2865 });
    expect([all.lostWakeups, all.wastedWakeups, all.trace.length]).toEqual([
      plain.lostWakeups,
      plain.wastedWakeups,
      plain.trace.length,
    ]);
    expect(all.schedules).toBeLessThan(plain.schedules / 2);
  });

  it('says what the reduction saved; --submitters 2 is two PSM senders', async () => {
    const r = await runCli(['emu', 'race', '--variant', 'kernel', '--submitters', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /reduction\s+all: 41,939 states stored for 83,752 distinct \(50% saved\), 61,676 steps taken, the state graph has 146,331 \(58% saved\)/,
    );
    expect(r.stdout).toMatch(/schedules\s+16414 explored/);
    expect(r.stdout).toMatch(/states\s+83752 distinct\n/);
    expect(r.stdout).toMatch(/senders\s+S1 psm, S2 psm \(/);
    expect(r.stdout).toMatch(
      /lost wake-ups\s+136 \(distinct states\): 0 with a QP left asleep, 136 with a PSM sender, 0 with an IPoIB queue/,
    );
  });

  it('--senders qp,psm: a QP beside a PSM sender, lost wake-ups counted per kind, the trace names the kind', async () => {
    const j = JSON.parse((await runCli(['emu', 'race', '--variant', 'psm-pre-2019', '--senders', 'qp,psm', '--json'])).stdout);
    expect(j).toMatchObject({
      submitters: 2,
      senders: ['qp', 'psm'],
      states: 89714,
      lostWakeups: 208,
      lostWakeupsByKind: { qp: 68, psm: 140, ipoib: 0 },
    });
    const r = await runCli(['emu', 'race', '--variant', 'kernel', '--senders', '1qp,1psm']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/senders\s+S1 qp, S2 psm \(harvest need: qp 9, psm 0, ipoib 0\)/);
    expect(r.stdout).toMatch(
      /lost wake-ups\s+136 \(distinct states\): 68 with a QP left asleep, 68 with a PSM sender, 0 with an IPoIB queue/,
    );
    expect(r.stdout).toMatch(/for good\s+76 of them with no step left anywhere/);
    expect(r.stdout).toMatch(
      /is a (QP: its txreq parked on its work list makes its harvest need 9|PSM queue: its harvest need is 0)\.\n$/,
    );
  });

  it('--senders 2qp counts like qp,qp', async () => {
    // The two spellings, the whole document alike, on a search cut at 18 steps (the full search of two QPs is
    // counted in race-reduce.test.ts).
    const cut = async (senders: string) =>
      withoutStamp(JSON.parse((await runCli(['emu', 'race', '--senders', senders, '--bound', '18', '--json'])).stdout));
    const [b, c] = [await cut('qp,qp'), await cut('2qp')];
    expect(b).toMatchObject({ senders: ['qp', 'qp'], bound: 18 });
    expect(b).toEqual(c);
  });

  it('random sampling: the same --seed prints the same result', async () => {
    const args = ['emu', 'race', '--variant', 'psm-pre-2019', '--schedules', '200', '--seed', '5', '--json'];
    const a = await runCli(args);
    const b = await runCli(args);
    expect(a.code).toBe(0);
    expect(withoutStamp(JSON.parse(b.stdout))).toEqual(withoutStamp(JSON.parse(a.stdout)));
    expect(JSON.parse(a.stdout)).toMatchObject({ seed: 5, schedules: 200 });
  });

  it.each([
    [['--variant', 'kernel-2018'], /--variant must be one of kernel, psm-pre-2019/],
    [['--submitters', '5'], /--submitters must be from 1 to 4/],
    [['--submitters', '0'], /--submitters must be from 1 to 4/],
    [['--reduce', 'some'], /--reduce must be one of none, symmetry, por, all/],
    [['--reduce', 'all', '--schedules', '10'], /--reduce applies to the exhaustive search/],
    [['--bound', 'x'], /--bound expects an integer/],
    [['--senders', 'qp,vnic'], /--senders takes comma-separated kinds \(qp, psm, ipoib\)/],
    [['--senders', '0qp'], /--senders takes comma-separated kinds/],
    [['--senders', '3qp,2psm'], /--senders must name from 1 to 4 senders, got 5/],
    [['--senders', 'qp', '--submitters', '2'], /--senders already gives the number of senders/],
  ])('usage error for %j', async (extra, message) => {
    const r = await runCli(['emu', 'race', ...extra]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(message);
  });
});
