// `waiters`: the table and the JSON, the verdicts over --strand-ms, the engine filter, and what
// is said when a kind (or every kind) of waiter cannot be seen.
import { describe, expect, it } from 'vitest';
import type { Backend, Waiter } from '../../src/backend.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type FakeOptions, type Script } from '../support/fake-backend.js';

/** Engines 0 and 1 busy and moving; 2 and 3 idle. */
const script: Script = (e, t) => (e < 2 ? { dh: t + e, dt: t + e + 40 } : { dh: 500 });

const stranded: Waiter = {
  kind: 'qp',
  qpn: 0x1a,
  qpState: 'RTS',
  waitsFor: 'dma-desc',
  descriptorsNeeded: 3,
  engine: 3,
  onList: true,
  ownPending: 0,
  sinceMs: 0,
  source: 'model',
};
const busy: Waiter = { ...stranded, qpn: 0x2b, engine: 1 };
const writer: Waiter = {
  kind: 'psm',
  pid: 4242,
  command: 'mpi_rank',
  waitsFor: 'dma-desc',
  descriptorsNeeded: null,
  engine: null,
  onList: null,
  ownPending: null,
  sinceMs: 0,
  source: 'proc',
};

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
    expect(lines[1]).toMatch(/^engine\s+kind\s+who\s+need\s+waiting for\s+verdict$/);
    expect(r.stdout).toMatch(/hfi1_0\/3\s+qp\s+QP 0x1a RTS\s+3\s+dma-desc \(300ms\)\s+STRANDED \(LOST-WAKEUP\)/);
    expect(r.stdout).toMatch(/hfi1_0\/1\s+qp\s+QP 0x2b RTS\s+3\s+dma-desc \(300ms\)\s+waiting \(engine-busy\)/);
    expect(r.stdout).toContain('note: hfi1_0: psm waiters not visible: reading /proc/<pid>/stack needs root (run as root)');
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
    expect(u).toMatchObject({ unit: 0, name: 'hfi1_0', listed: true, timeMs: 300, psmStalls: 0 });
    expect(u.counts).toMatchObject({ stranded: 1, waiting: 1, orphaned: 0 });
    expect(u.visibility.map((v: { kind: string; visible: boolean }) => [v.kind, v.visible])).toEqual([
      ['qp', true],
      ['psm', false],
      ['ipoib', false],
    ]);
    expect(u.waiters[0]).toMatchObject({
      kind: 'qp',
      qpn: 0x1a,
      engine: 3,
      sinceMs: 0,
      ageMs: 300,
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
