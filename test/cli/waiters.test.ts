// `waiters`: the table and the JSON, the verdicts over --strand-ms, the engine filter, and what
// is said when a kind (or every kind) of waiter cannot be seen.
import { describe, expect, it } from 'vitest';
import type { Backend, QpOwner, Unit, Waiter } from '../../src/backend.js';
import { Hfi1SdmaError } from '../../src/errors.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type FakeOptions, type Script } from '../support/fake-backend.js';
import { psmWaiter, qpWaiter } from '../support/waiters.js';
import { screenOf } from './vt.js';

/** Engines 0 and 1 busy and moving; 2 and 3 idle. */
const script: Script = (e, t) => (e < 2 ? { dh: t + e, dt: t + e + 40 } : { dh: 500 });

const stranded = qpWaiter({ qpn: 0x1a, engine: 3 });
const busy = qpWaiter({ qpn: 0x2b, engine: 1 });
const writer = psmWaiter();

const withWaiters = (at: () => Waiter[], extra: FakeOptions = {}) =>
  new FakeBackend(script, 4, 2048, {
    waiters: {
      at,
      visibility: [
        { kind: 'qp', visible: true, source: 'model' },
        { kind: 'psm', visible: false, reason: 'reading /proc/<pid>/stack needs root', fix: 'run as root' },
      ],
    },
    ...extra,
  });
const run = (argv: string[], backend: Backend) => runCli(argv, {}, false, '', backend);

describe('waiters', () => {
  it('tables every waiter with its engine, who, need, age and verdict, and says which kinds cannot be seen', async () => {
    const r = await run(
      ['waiters'],
      withWaiters(() => [stranded, busy]),
    );
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[1]).toMatch(/^engine\s+kind\s+who\s+need\s+waiting for\s+verdict\s+owner$/);
    // Seen from the first sample on: the wait began before it, so its age is a lower bound.
    expect(r.stdout).toMatch(/hfi1_0\/3\s+qp\s+QP 0x1a RTS\s+3\s+dma-desc \(≥200ms\)\s+STRANDED \(LOST-WAKEUP\)/);
    expect(r.stdout).toMatch(/hfi1_0\/1\s+qp\s+QP 0x2b RTS\s+3\s+dma-desc \(≥200ms\)\s+waiting \(engine-busy\)/);
    // By engine, whatever order the source listed them in.
    expect(r.stdout.indexOf('hfi1_0/1 ')).toBeLessThan(r.stdout.indexOf('hfi1_0/3 '));
    expect(r.stdout).toContain('note: hfi1_0: psm waiters not visible: reading /proc/<pid>/stack needs root; run as root');
    expect(r.stdout).toContain('note: hfi1_0: ipoib waiters not visible');
  });

  it('gives the JSON shape with counts, visibility, and the stranded total; the engine filter narrows it', async () => {
    const r = await run(
      ['--json', 'waiters'],
      withWaiters(() => [stranded, busy]),
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ backend: 'emu', strandMs: 200, engine: null, stranded: 1 });
    const u = doc.units[0];
    // Three samples 100 ms apart confirm the strand; then nothing is left to confirm and the command answers.
    expect(u).toMatchObject({ unit: 'hfi1_0', name: 'hfi1_0', index: 0, listed: true, timeMs: 200, psmStalls: 0 });
    expect(u.counts).toMatchObject({ stranded: 1, waiting: 1, orphaned: 0 });
    expect(u.visibility.map((v: { kind: string; visible: boolean }) => [v.kind, v.visible])).toEqual([
      ['qp', true],
      ['psm', false],
      ['ipoib', false],
    ]);
    expect(u.waiters[0]).toMatchObject({ kind: 'qp', qpn: 0x2b, engine: 1, verdict: 'waiting' });
    expect(u.waiters[1]).toMatchObject({
      kind: 'qp',
      qpn: 0x1a,
      engine: 3,
      sinceMs: 0,
      firstSeenMs: 0,
      ageMs: 200,
      ageAtLeast: true,
      verdict: 'stranded',
      reason: 'lost-wakeup',
      probable: false,
      holdingSinceMs: 0,
      episodes: 1,
    });
    const one = JSON.parse(
      (
        await run(
          ['--json', 'waiters', '1'],
          withWaiters(() => [stranded, busy]),
        )
      ).stdout,
    );
    expect(one.engine).toBe(1);
    expect(one.stranded).toBe(0);
    expect(one.units[0].waiters.map((w: { qpn: number }) => w.qpn)).toEqual([0x2b]);
  });

  it('is not stranded before --strand-ms has passed, with --count and --interval-ms', async () => {
    const early = JSON.parse(
      (
        await run(
          ['--json', 'waiters', '--count', '3', '--interval-ms', '50'],
          withWaiters(() => [stranded]),
        )
      ).stdout,
    );
    expect(early.units[0].waiters[0]).toMatchObject({ verdict: 'waiting', reason: 'confirming' });
    const later = JSON.parse(
      (
        await run(
          ['--json', 'waiters', '--strand-ms', '100', '--count', '3', '--interval-ms', '50'],
          withWaiters(() => [stranded]),
        )
      ).stdout,
    );
    expect(later.units[0].waiters[0].verdict).toBe('stranded');
  });

  it('a PSM writer on an idle unit is a psm-stall, not stranded', async () => {
    const idle: Script = () => ({ dh: 7 });
    const b = new FakeBackend(idle, 4, 2048, {
      waiters: { at: () => [writer], visibility: [{ kind: 'psm', visible: true, source: 'proc' }] },
    });
    const doc = JSON.parse((await run(['--json', 'waiters'], b)).stdout);
    expect(doc.stranded).toBe(0);
    expect(doc.units[0].counts['psm-stall']).toBe(1);
    expect(doc.units[0].psmStalls).toBe(1);
  });

  it('says "no waiters" when none are visible, and exits 69 when the backend cannot list waiters at all', async () => {
    const none = await run(
      ['waiters'],
      withWaiters(() => []),
    );
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('no waiters (of the kinds visible)');
    const blind = await run(['waiters'], new FakeBackend(script));
    expect(blind.code).toBe(69);
    expect(blind.stdout).toContain('note: hfi1_0: waiters not visible: this backend does not list waiters');
    expect(blind.stderr).toContain('no selected unit can list its waiters');
  });

  it('rejects a bad engine (66) and a bad --strand-ms (64)', async () => {
    expect(
      (
        await run(
          ['waiters', '9'],
          withWaiters(() => []),
        )
      ).code,
    ).toBe(66);
    expect(
      (
        await run(
          ['waiters', '--strand-ms', 'soon'],
          withWaiters(() => []),
        )
      ).code,
    ).toBe(64);
  });
});

describe('engines and watch show the waiters per engine', () => {
  it('engines: a wait column and waiters/strandedWaiters in JSON (null when waiters cannot be listed)', async () => {
    const r = await run(
      ['--no-color', 'engines'],
      withWaiters(() => [stranded, busy]),
    );
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[1]).toMatch(/\berrs\s+wait\s+errors$/);
    // engines takes the samples a stranded verdict needs, and marks the engine.
    expect(r.stdout).toMatch(/hfi1_0\/3 .* 1!\s+-$/m);
    expect(r.stdout).toMatch(/^CRITICAL SD201 hfi1_0 sdma3 QP 0x1a RTS stranded \(lost-wakeup\)/m);
    expect(r.stdout).toMatch(/hfi1_0\/0 .* 0\s+-$/m);
    const doc = JSON.parse(
      (
        await run(
          ['--json', 'engines'],
          withWaiters(() => [stranded, busy]),
        )
      ).stdout,
    );
    expect(doc.units[0].engines.map((e: { waiters: number }) => e.waiters)).toEqual([0, 1, 0, 1]);
    expect(doc.units[0].engines[3].strandedWaiters).toBe(1);
    expect(doc.units[0].engines[1].strandedWaiters).toBe(0);
    const blind = JSON.parse((await run(['--json', 'engines'], new FakeBackend(script))).stdout);
    expect(blind.units[0].engines[0]).toMatchObject({ waiters: null, strandedWaiters: null });
  });

  it('engines on a recording of 4 instants replays them and marks the stranded engine with !', async () => {
    const b = withWaiters(() => [stranded, busy], { recordingTimesMs: [0, 100, 200, 300] });
    const r = await run(['--no-color', 'engines'], b);
    expect(r.stdout).toMatch(/hfi1_0\/3 .* 1!\s+-$/m);
    expect(r.stdout).toMatch(/hfi1_0\/1 .* 1\s+-$/m);
    const doc = JSON.parse(
      (
        await run(
          ['--json', 'engines'],
          withWaiters(() => [stranded], { recordingTimesMs: [0, 100, 200, 300] }),
        )
      ).stdout,
    );
    expect(doc.units[0].engines[3]).toMatchObject({ waiters: 1, strandedWaiters: 1 });
  });

  it('watch --json: waiters and strandedWaiters per line, stranded once confirmed', async () => {
    const r = await run(
      ['--json', 'watch', '--count', '4', '--interval-ms', '100'],
      withWaiters(() => [stranded]),
    );
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const e3 = lines.filter((l) => l.engine === 3).map((l) => [l.waiters, l.strandedWaiters]);
    expect(e3).toEqual([
      [1, null],
      [1, null],
      [1, 1],
      [1, 1],
    ]);
    expect(lines.filter((l) => l.engine === 0).map((l) => l.strandedWaiters)).toEqual([null, null, 0, 0]);
  });

  it('watch on a terminal marks the stranded engine with ! in an 80-column layout', async () => {
    let out = '';
    const io = {
      stdout: (t: string) => {
        out += t;
      },
      stderr: () => {},
      env: {},
      isTTY: true,
      columns: 80,
      sleep: async () => {},
      readStdin: async () => '',
    };
    const { main } = await import('../../src/cli/main.js');
    const b = withWaiters(() => [stranded]);
    expect(await main(['--no-color', 'watch', '--count', '4', '--interval-ms', '100'], io, { openBackend: async () => b })).toBe(
      0,
    );
    const last = screenOf(out).find((l) => l.startsWith('hfi1_0/3')) ?? '';
    // The verdict column names the strand: an idle engine with a stranded waiter is not "idle".
    expect(last).toMatch(/\s1!\s+STRANDED \(1 WAITER\)$/);
    expect(last.length).toBeLessThanOrEqual(80);
  });
});

describe('health and the waiters', () => {
  const idle: Script = () => ({ dh: 9 });
  const health = (argv: string[], b: Backend) => run(['health', ...argv], b);

  it('CRITICAL for a stranded QP, naming it; -c stranded=1 lowers it to OK', async () => {
    const b = () => withWaiters(() => [stranded]);
    const r = await health([], b());
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^HFI1-SDMA CRITICAL - emulator: SD201 hfi1_0 sdma3 QP 0x1a RTS stranded \(lost-wakeup\) for ≥ /);
    expect(r.stdout).toMatch(/ stranded=1;;0 /);
    expect(r.stdout).toContain('SD401 hfi1_0: psm waiters not visible');
    const ok = await health(['-c', 'stranded=1'], b());
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^HFI1-SDMA OK - emulator: 4 engines on 1 unit healthy$/m);
    expect(ok.stdout).toMatch(/^SD201 hfi1_0 sdma3 QP 0x1a RTS stranded/m);
  });

  it('WARNING for PSM stalls (psmstall), and for waiters orphaned on a stopped engine', async () => {
    const psmB = new FakeBackend(idle, 4, 2048, {
      waiters: { at: () => [writer], visibility: [{ kind: 'psm', visible: true, source: 'proc' }] },
    });
    const r = await health([], psmB);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/PSM writer stall\(s\).*repeated stall, not a hang.*pid 4242 mpi_rank/);
    expect(r.stdout).toMatch(/ psmstall=1;0; /);
    const off = await health(
      ['-w', 'psmstall=off'],
      new FakeBackend(idle, 4, 2048, {
        waiters: { at: () => [writer], visibility: [{ kind: 'psm', visible: true, source: 'proc' }] },
      }),
    );
    expect(off.code).toBe(0);
    const down: Script = (e) => (e === 3 ? { dh: 9, state: 's99_Running' } : { dh: 9 });
    const stopped = new FakeBackend((e, t) => ({ ...down(e, t), ...(e === 2 ? { state: 's50_HwCleanUp' } : {}) }), 4, 2048, {
      waiters: { at: () => [{ ...stranded, engine: 2 }] },
    });
    const orphan = await health(['-w', 'notrunning=off', '-c', 'halted=off'], stopped);
    expect(orphan.stdout).toMatch(/WARNING: SD204 hfi1_0 sdma2 1 waiter\(s\) orphaned on an engine that is not running/);
    expect(orphan.code).toBe(1);
  });

  it('a probable strand (qp_stats named an idle engine while a sibling of its VL is busy and short of room) is a note until it persists', async () => {
    // Every engine of the fake serves VL 0, and engines 0 and 1 are busy.
    const r = await health(
      [],
      withWaiters(() => [{ ...stranded, source: 'qp_stats' }]),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^SD205 hfi1_0 sdma3 QP 0x1a RTS probably stranded \(lost-wakeup\)/m);
    expect(r.stdout).toMatch(/ stranded=0;;0 stalled=0;;0 halted=0;;0 unreadable=0;; probable=0;0; /);
    const table = await run(
      ['--no-color', 'waiters'],
      withWaiters(() => [{ ...stranded, source: 'qp_stats' }]),
    );
    expect(table.stdout).toContain('STRANDED? (LOST-WAKEUP)');
  });

  it('a backend without waiters: OK when the engines are fine, saying the waiters are not seen', async () => {
    const r = await health([], new FakeBackend(idle));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^HFI1-SDMA OK - emulator: 4 engines on 1 unit healthy$/m);
    // A note, not an OK line: the status line is the only one that says OK.
    expect(r.stdout).toMatch(/^SD401 hfi1_0: waiters not visible: this backend does not list waiters/m);
    expect(r.stdout).not.toMatch(/^OK:/m);
  });

  it('a --strand-ms longer than the observation is UNKNOWN', async () => {
    const r = await health(['--strand-ms', '5000'], new FakeBackend(idle));
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('--strand-ms 5000 is longer than');
  });
});

describe('a waiters source that fails', () => {
  const broken = () =>
    withWaiters(() => {
      throw new Hfi1SdmaError('E_PARSE', '/sys/kernel/debug/hfi1/hfi1_0/qp_stats:3:7: expected f=<hex>');
    });

  it('waiters exits with its code (65) and names the file', async () => {
    const r = await run(['waiters'], broken());
    expect(r.code).toBe(65);
    expect(r.stderr).toContain('qp_stats:3:7');
  });

  it('engines and health still judge the engines and say the waiters could not be read', async () => {
    const e = await run(['engines'], broken());
    expect(e.code).toBe(0);
    const h = await run(['health', '-w', 'full=off'], broken());
    expect(h.stdout).toContain(
      'SD401 hfi1_0: waiters not visible: the waiters could not be read: /sys/kernel/debug/hfi1/hfi1_0/qp_stats:3:7',
    );
  });
});

describe('whose a stranded QP is', () => {
  /** The fake host, whose units answer qpOwners as `owners` says (and count the questions). */
  class OwnedBackend extends FakeBackend {
    asked: number[][] = [];
    constructor(private readonly owners: (qpn: number) => QpOwner) {
      super(script, 4, 2048, { waiters: { at: () => [stranded, busy] } });
    }
    override async unit(id: number | string): Promise<Unit> {
      const u = await super.unit(id);
      return {
        ...u,
        qpOwners: async (qps) => {
          this.asked.push(qps.map((q) => q.qpn));
          return qps.map((q) => this.owners(q.qpn));
        },
      };
    }
  }

  it('the owner column names it (and only the QPs a finding names), with a note where it is unsure; JSON has it', async () => {
    const b = new OwnedBackend((qpn) => ({
      qpn,
      pid: 4242,
      command: 'xhpl',
      user: 'alice',
      source: 'qp_stats',
      note: "qp_stats' PID 4242 (the creating thread) as /proc shows it now: the pid may have been reused since",
    }));
    const r = await run(['waiters'], b);
    expect(r.stdout).toMatch(/hfi1_0\/3\s+qp\s+QP 0x1a RTS .*STRANDED \(LOST-WAKEUP\)\s+pid 4242 xhpl, user alice$/m);
    expect(r.stdout).toMatch(/hfi1_0\/1\s+qp\s+QP 0x2b RTS .*waiting \(engine-busy\)\s+-$/m);
    expect(r.stdout).toContain("note: owner of QP 0x1a RTS (qp_stats): qp_stats' PID 4242 (the creating thread)");
    expect(b.asked).toEqual([[0x1a]]);
    const doc = JSON.parse(
      (
        await run(
          ['--json', 'waiters'],
          new OwnedBackend((qpn) => ({ qpn, pid: null, command: 'ib_core', user: null, source: 'rdma', note: 'a kernel QP' })),
        )
      ).stdout,
    );
    const byQpn = new Map(doc.units[0].waiters.map((w: { qpn: number }) => [w.qpn, w]));
    expect(byQpn.get(0x1a)).toMatchObject({
      owner: { qpn: 0x1a, pid: null, command: 'ib_core', source: 'rdma', note: 'a kernel QP' },
    });
    expect(byQpn.get(0x2b)).toMatchObject({ owner: null });
  });

  it('health names the owner in the finding and the job in the action', async () => {
    const b = new OwnedBackend((qpn) => ({ qpn, pid: 4240, command: 'xhpl', user: 'alice', source: 'rdma', note: null }));
    const r = await runCli(['health', '-w', 'notrunning=off'], {}, false, '', b);
    expect(r.stdout).toMatch(/SD201 hfi1_0 sdma3 QP 0x1a RTS \(pid 4240 xhpl, user alice\) stranded/);
    expect(r.stdout).toMatch(/or end the job of user alice, pid 4240 \(xhpl\) \(destroying the QP frees it\)/);
  });
});
