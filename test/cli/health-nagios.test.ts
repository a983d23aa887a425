// health as a Nagios plugin: usage errors are UNKNOWN, thresholds and findings agree, link-down
// is a WARNING, errors that recover between samples are seen, the run is bounded by --timeout.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend.js';
import { commandWord } from '../../src/cli/main.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';

const healthy: Script = (e, t) => ({ dh: Math.floor(t / 10) * 10 + e, dt: Math.floor(t / 10) * 10 + e + 50 });
const run = (argv: string[], backend: Backend = new FakeBackend(healthy)) => runCli(argv, {}, false, '', backend);

describe('health usage errors are UNKNOWN (3)', () => {
  it.each([
    [['health', '--bogus']],
    [['health', '--stall-ms', 'x']],
    [['health', '--timeout', '0']],
    [['health', '-w', 'stalled=many']],
    [['health', '-c', 'nosuch=1']],
    [['--backend', 'emu', 'health', 'extra']],
    [['--unit', '1', '--unit', '2', 'health']],
  ])('%j', async (argv) => {
    const r = await run(argv);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^HFI1-SDMA UNKNOWN - /);
  });

  it('finds the command word past option values', () => {
    expect(commandWord(['--backend', 'emu', '--unit', '0', 'health', '--bogus'])).toBe('health');
    expect(commandWord(['--json', 'log', 'health'])).toBe('log');
  });
});

describe('health thresholds and findings agree', () => {
  // Engine 0 in backpressure now and then (not every interval): no finding, and no threshold on it.
  const sometimes: Script = (e, t) => ({ dh: t, dt: t + 2040, dqf: e === 0 && t >= 1000 ? 1 : 0 });

  it('OK with no perfdata count past its threshold', async () => {
    const r = await run(['health'], new FakeBackend(sometimes, 2));
    expect(r.code).toBe(0);
    const perf = r.stdout.split('|')[1]?.trim().split('\n')[0] ?? '';
    for (const item of perf.split(' ')) {
      const m = /^(\w+)=(\d+);(\d*);(\d*)$/.exec(item);
      if (!m) continue;
      const [, , v, w, c] = m;
      if (w) expect(Number(v)).toBeLessThanOrEqual(Number(w));
      if (c) expect(Number(v)).toBeLessThanOrEqual(Number(c));
    }
    expect(perf).toMatch(/backpressure=\d+( |$)/);
  });

  it('a full ring that keeps retiring is healthy by default; -w and -c move the level, and the perfdata carries them', async () => {
    const full: Script = (e, t) => ({ dh: t, dt: t + 2040, dqf: t + e });
    const quiet = await run(['health'], new FakeBackend(full, 2));
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/full=2;;/);
    expect(quiet.stdout).not.toMatch(/persistently full/);
    const warn = await run(['health', '-w', 'full=0'], new FakeBackend(full, 2));
    expect(warn.code).toBe(1);
    expect(warn.stdout).toMatch(/full=2;0;/);
    expect(warn.stdout).toMatch(/^WARNING: SD106 hfi1_0 sdma0 ring persistently full/m);
    const crit = await run(['health', '-w', 'full=0', '-c', 'full=1'], new FakeBackend(full, 2));
    expect(crit.code).toBe(2);
    expect(crit.stdout).toMatch(/full=2;0;1/);
    const under = await run(['health', '-w', 'full=5'], new FakeBackend(full, 2));
    expect(under.code).toBe(0);
    // Below a threshold the user set, the finding is a plain line, not prefixed with a level.
    expect(under.stdout).toMatch(/^SD106 hfi1_0 sdma0 ring persistently full/m);
  });
});

describe('health sees what a single sample misses', () => {
  it('link-down: every engine idle with ENABLE off is a WARNING naming the state, in one line', async () => {
    const down: Script = () => ({ dh: 0, dt: 0, state: 's20_Idle', ctrl: 0n });
    const r = await run(['health'], new FakeBackend(down, 16));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^HFI1-SDMA WARNING - emulator: SD107 hfi1_0 all 16 engines in s20_Idle, not running/);
    expect(r.stdout).not.toMatch(/healthy/);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('WARNING:'))).toHaveLength(1);
  });

  it('link-down without sdes: CTRL.ENABLE off on every engine is the same WARNING', async () => {
    const down: Script = () => ({ state: null, noSw: true, ctrl: 0n });
    const r = await run(['health'], new FakeBackend(down, 4));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/hfi1_0 all 4 engines in CTRL\.ENABLE off, not running/);
  });

  it('an engine inside its recovery window is not called "not running"', async () => {
    const recovering: Script = (_e, t) => ({ state: t >= 1500 ? 's50_HwHaltWait' : 's99_Running' });
    const r = await run(['health'], new FakeBackend(recovering, 2));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/2 not yet determined \(recovering\)/);
  });

  it('an engine error that recovered between samples is a WARNING naming the bits last seen', async () => {
    // SDMAErrCt rises at 500 ms; the halt-class bit shows in one sample only.
    const blip: Script = (e, t) => ({ errCount: e === 1 && t >= 500 ? 8 : 7, err: e === 1 && t === 500 ? 0x2n : 0n });
    const r = await run(['health'], new FakeBackend(blip, 2));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /WARNING: SD103 hfi1_0 sdma1 engine errors rose by 1 while watched \(SDMAErrCt 8, 1 halt\(s\) and 1 recovery\(ies\) seen\); error bits last seen: SDmaGenMismatchErr/,
    );
  });

  it('an error count that rose with no bits ever seen still warns', async () => {
    const unseen: Script = (_e, t) => ({ errCount: t >= 1000 ? 3 : 1 });
    const r = await run(['health'], new FakeBackend(unseen, 1));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/rose by 2 .*the bits cleared before any sample showed them/);
  });
});

describe('health --timeout', () => {
  it('refuses an observation that would not fit the timeout (UNKNOWN, nothing sampled)', async () => {
    const b = new FakeBackend(healthy);
    const r = await run(['health', '--stall-ms', '5000', '--timeout', '10'], b);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/needs 10000 ms of observation, too close to --timeout 10 s/);
    expect(b.closed).toBe(0);
  });

  it('answers UNKNOWN at the deadline when a source never answers', async () => {
    const stuck = new FakeBackend(healthy);
    stuck.unit = async () => ({ info: stuck.info, sample: () => new Promise(() => {}), ring: () => new Promise(() => {}) });
    const r = await run(['health', '--timeout', '1', '--stall-ms', '100'], stuck);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('HFI1-SDMA UNKNOWN - no answer within --timeout 1 s (a source did not answer in time)\n');
  });
});

describe('health --strand-ms', () => {
  it('unset, fits a short --stall-ms: the observation is judged, not refused over a default', async () => {
    const r = await run(['health', '--stall-ms', '50']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^HFI1-SDMA OK - /);
  });

  it('given longer than the observation, is refused (UNKNOWN, nothing sampled)', async () => {
    const b = new FakeBackend(healthy);
    const r = await run(['health', '--stall-ms', '50', '--strand-ms', '200'], b);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/--strand-ms 200 is longer than the 100 ms observation that --stall-ms 50 gives/);
    expect(b.closed).toBe(0);
  });
});
