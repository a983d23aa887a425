// The twin of a capture: an emulated host with a fault is captured as `snapshot` captures it, and the emulator
// started from that capture reaches the capture's findings (from its last instant, and replayed from its first with
// no divergence), a change of order keeps the lost wake-up from forming, a twin altered to lose its stranded QP
// says where it diverges, the minimised twin and the test written from it pin the verdict, and the library starts
// from the capture as the command does. A 4-engine host in npm test; under soak, the operator walk's scenarios at
// full size (16 engines, the faults a few seconds in, five instants half a second apart).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEmuBackend } from '../../src/api/emulator.js';
import { createMonitor } from '../../src/api/index.js';
import { type EmuCliOptions, emuUnitFromOptions } from '../../src/emu/index.js';
import { warmUp } from '../../src/emu/warm-up.js';
import { captureEmulatedUnit } from '../../src/snapshot/capture-emu.js';
import { emitTest, testLoopVerdict } from '../../src/twin/emit.js';
import { checkFixture, type TwinFixture } from '../../src/twin/fixture.js';
import { loadTwin } from '../../src/twin/load.js';
import { minimise } from '../../src/twin/minimise.js';
import { findingPlace, type JudgeWindows, replayTwin, runTwin, tryChange } from '../../src/twin/run.js';
import { emuOptions } from '../support/rendered-host.js';
import { SOAK } from '../support/runs.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('twin-');
const W: JudgeWindows = { stallMs: 1000, strandMs: 200 };
/** The tolerance `emu twin` gives by default (health's observation for these windows). */
const TOLERANCE_MS = 2000;

/** Capture the emulated host `o` (run to `atMs`) as `snapshot` does: `samples` instants `intervalMs` apart. */
async function capture(name: string, o: Partial<EmuCliOptions>, atMs: number, samples: number, intervalMs: number) {
  const u = emuUnitFromOptions(emuOptions(o));
  await warmUp(u, atMs);
  const file = join(tmp(), `${name}.tar.gz`);
  await captureEmulatedUnit(u, file, { host: 'node17', toolVersion: '0.1.0', now: new Date(0) }, { samples, intervalMs });
  return file;
}

const places = (v: readonly { code: string; unit: string | null; engine: number | null; port: number | null }[]) =>
  v.map((f) => findingPlace({ ...f, severity: '', text: '' })).sort();

describe('the twin of a 4-engine host whose QP on sdma1 lost its wake-up', () => {
  let file = '';
  let last: TwinFixture;
  let first: TwinFixture;
  beforeAll(async () => {
    file = await capture('stranded', { engines: 4, workload: 'qp:gbps=10', fault: ['lost-wakeup:qp@50:1'] }, 100, 4, 200);
    [last, first] = await Promise.all([loadTwin(file), loadTwin(file, { instant: 0 })]);
  });

  it("starts from the capture's last instant and reaches its verdict, SD201 on sdma1", async () => {
    expect(places(last.verdict)).toEqual(['SD201 hfi1_0 sdma1']);
    expect(last.seed.waiters.map((w) => [w.kind, w.engine, w.identity.qpn !== undefined])).toContainEqual(['qp', 1, true]);
    const run = await replayTwin(last, { seed: 1 }, W, TOLERANCE_MS);
    expect(run.divergence).toBeNull();
    expect(places(run.verdict)).toEqual(['SD201 hfi1_0 sdma1']);
  });

  it('replays from the first instant through the later ones without diverging', async () => {
    expect(first.observations.map((x) => x.instant)).toEqual([1, 2, 3]);
    const run = await replayTwin(first, { seed: 1 }, W, TOLERANCE_MS);
    expect(run.divergence).toBeNull();
    expect(places(run.verdict)).toEqual(['SD201 hfi1_0 sdma1']);
  });

  it('says where it diverges when the twin lacks what the capture shows (the stranded QP left out)', async () => {
    const without: TwinFixture = { ...first, seed: { ...first.seed, waiters: first.seed.waiters.filter((w) => w.engine !== 1) } };
    const run = await replayTwin(without, { seed: 1 }, W, TOLERANCE_MS);
    expect(run.divergence?.instant).toBe(1);
    expect(run.divergence?.what).toMatch(/^QP 0x[0-9a-f]+ on sdma1 is asleep in the capture, not in the twin$/);
    expect(run.divergence?.hint).toMatch(/^--fault lost-wakeup:qp@0:1$/);
  });

  it('under kernel-sample-first the strand never forms: the cause replayed, no round shows a stranded QP', async () => {
    const change = await tryChange(last, { seed: 1 }, { variant: 'kernel-sample-first' }, W);
    expect(change.causes).toEqual(['lost-wakeup:qp@1:1']);
    const [outcome] = change.outcomes;
    expect(outcome?.asCapturedMs).not.toBeNull(); // the kernel's order strands it again, as captured
    expect(outcome?.changedMs).toBeNull();
    const changed = await runTwin(
      last,
      { seed: 1, form: 'cause', variant: 'kernel-sample-first' },
      W,
      [0, 500, 1000, 1500, 2000],
      'stop',
    );
    for (const r of changed.rounds) {
      const judged = r.round.units[0]?.waiters.judgements ?? [];
      expect(judged.filter((j) => j.verdict === 'stranded')).toEqual([]);
    }
    expect(changed.unit.nowMs).toBeGreaterThanOrEqual(2000);
  });

  it('runs the same in the fast model as in the stepped one', async () => {
    const at = [0, 300, 900];
    const fast = await runTwin(last, { seed: 3, model: 'fast', workload: 'qp:gbps=5' }, W, at, 'stop');
    const stepped = await runTwin(last, { seed: 3, model: 'stepped', workload: 'qp:gbps=5' }, W, at, 'stop');
    const view = (r: typeof fast) =>
      r.rounds.map((x) =>
        x.round.units[0]?.engines.map((e) => [e.sample.engine, e.sample.state, e.sample.sw, e.sample.counters]),
      );
    expect(view(fast)).toEqual(view(stepped));
    expect(fast.unit.logHash()).toBe(stepped.unit.logHash());
    expect(fast.unit.skipped().periods).toBeGreaterThan(0); // the fast model did skip: the comparison is not of two stepped runs
  });

  it('is minimised and written as a test whose loop gives the verdict, its provenance pinned', async () => {
    const m = await minimise(last, { seed: 1 }, W);
    expect(m.dropped).toContain('the traffic (3 sender(s))');
    expect(m.fixture.seed.waiters).toHaveLength(1);
    const run = { seed: 1, workload: 'captured', faults: [], variant: 'kernel' as const, params: [], ...W };
    const dir = tmp();
    const paths = await emitTest(m.fixture, run, dir);
    const written = checkFixture(JSON.parse(readFileSync(paths.fixture, 'utf8')), paths.fixture);
    expect(written.source).toMatchObject({ file: 'stranded.tar.gz', format: 'hfi1-sdma-snapshot/2', toolVersion: '0.1.0' });
    expect(written.run).toEqual(run);
    expect(places(await testLoopVerdict(written, run))).toEqual(['SD201 hfi1_0 sdma1']);
    const test = readFileSync(paths.test, 'utf8');
    expect(test).toContain('createEmuBackend({ from: fixture })');
    expect(test).toContain("toEqual(['SD201 hfi1_0 sdma1'])");
  });

  it('refuses a twin of a newer format, naming the version to run it with, and a capture that is not there', async () => {
    await expect(loadTwin(join(tmp(), 'gone.tar.gz'))).rejects.toMatchObject({
      code: 'E_NO_INPUT',
      message: expect.stringMatching(/^--from .*gone\.tar\.gz: no such file: name a capture \(\.tar\.gz\) or a twin \(\.json\)$/),
    });
    expect(() => checkFixture({ ...last, format: 'hfi1-sdma-twin/2', toolVersion: '9.0.0' }, 'x.twin.json')).toThrow(
      /x\.twin\.json: a twin of format hfi1-sdma-twin\/2, written by hfi1-sdma 9\.0\.0: .*run it with hfi1-sdma 9\.0\.0 or later/,
    );
  });

  it('is started by the library from the capture (createEmuBackend({ from })), as the command starts it', async () => {
    const emu = await createEmuBackend({ from: file });
    const monitor = createMonitor(emu, W);
    try {
      let codes: string[] = [];
      for await (const round of monitor.rounds({ intervalMs: 100, count: 21 })) {
        codes = round.findings.filter((f) => f.severity !== 'note').map((f) => `${f.code} sdma${f.engine}`);
      }
      expect(codes).toEqual(['SD201 sdma1']);
      expect(emu.twin?.source.instant).toBe(3);
    } finally {
      await monitor.close();
      await emu.close();
    }
    await expect(createEmuBackend({ from: file, engines: 4 })).rejects.toThrow(
      /createEmuBackend: engines is the capture's beside from; drop it/,
    );
  });
});

/** The operator walk's sick scenarios, as `emu serve` ran them there (the faults brought earlier). */
const WALK: {
  name: string;
  o: Partial<EmuCliOptions>;
  verdict: string[];
  w?: JudgeWindows;
  fromInstant?: number;
  intervalMs?: number;
}[] = [
  { name: 'lost wake-up', o: { fault: ['lost-wakeup@2000:5'] }, verdict: ['SD201 hfi1_0 sdma5'] },
  {
    name: 'PSM writer stall',
    o: { engines: 1, workload: 'psm:gbps=10', fault: ['lost-wakeup:psm@2000:0'] },
    verdict: ['SD203 hfi1_0'],
    w: { stallMs: 400, strandMs: 200 },
    fromInstant: 0,
    intervalMs: 200,
  },
  {
    name: 'stall and halt',
    o: { fault: ['stop-fetch@3000:3', 'halt-stuck@3000:7'] },
    verdict: ['SD101 hfi1_0 sdma3', 'SD102 hfi1_0 sdma7'],
  },
  { name: 'device gone', o: { fault: ['device-gone@2000'] }, verdict: ['SD301 hfi1_0'] },
  {
    name: 'hfi2 window',
    o: {
      chip: 'jkr',
      driver: 'hfi2',
      engines: 8,
      firstEngine: 8,
      ports: 2,
      activePorts: [2],
      fault: ['lost-wakeup@2000:11', 'stop-fetch@2000:13'],
    },
    verdict: ['SD101 hfi2_0 sdma13', 'SD201 hfi2_0 sdma11'],
  },
  {
    name: 'IPoIB queue stuck',
    o: { workload: 'mixed:gbps=10,ipoib=1', fault: ['ipoib-timeout@2000:0'] },
    verdict: ['SD207 hfi1_0 sdma0'],
  },
  { name: 'fabric stall', o: { fault: ['fabric-stall@2000:1'] }, verdict: ['SD109 hfi1_0 port 1'] },
];

describe.runIf(SOAK)("the operator walk's sick scenarios, each captured and replayed to its code (SOAK=1 only: a minute)", () => {
  for (const s of WALK) {
    it(`${s.name}: ${s.verdict.join(', ')}`, async () => {
      const w = s.w ?? W;
      const at = Number(/@(\d+)/.exec(s.o.fault?.[0] ?? '')?.[1] ?? 0) + 100;
      const file = await capture(s.name.replace(/\W+/g, '-'), s.o, at, 5, s.intervalMs ?? 500);
      const f = await loadTwin(file, { instant: s.fromInstant, ...w });
      expect(places(f.verdict)).toEqual(s.verdict);
      const run = await replayTwin(f, { seed: 1 }, w, 2000);
      expect(run.divergence).toBeNull();
      expect(places(run.verdict)).toEqual(s.verdict);
      // From the first instant: the same, but where the cause came after it (the IPoIB queue's watchdog timed it out
      // later), which the replay names with the fault that brings it about.
      const early = await replayTwin(await loadTwin(file, { instant: 0, ...w }), { seed: 1 }, w, 2000);
      if (s.name === 'IPoIB queue stuck') expect(early.divergence?.hint).toMatch(/^--fault ipoib-timeout@\d+:0$/);
      else expect(early.divergence).toBeNull();
      const m = await minimise(f, { seed: 1 }, w);
      const pinned = { seed: 1, workload: 'captured', faults: [], variant: 'kernel' as const, params: [], ...w };
      expect(places(await testLoopVerdict(m.fixture, pinned))).toEqual(s.verdict);
    });
  }
});
