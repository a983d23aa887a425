// fleet.rollup: 10,000 hosts' `health --json` documents, as `clush` prints them (`host: {…}`), read from a file and
// folded into findings by code over node sets (what `fleet FILE` does), against reading the same file and
// JSON-parsing each line (the least any reader of them does). Goal ≤ 2. fleet.baseline: 200 snapshots (4-engine
// emulated hosts, 3 instants each: one in 250 stranding a QP, the rest healthy) each judged as `health` judges it
// and compared with a baseline of the same captures, against unpacking the same snapshots. Goal ≤ 2. Both in CPU
// time of this process; both unpack into /dev/shm where there is one (a disk-backed /tmp makes every file's creation
// cost more than the rest). FLEET_CAPTURES sets another count (a round of 1,000 is about a minute of CPU).
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliContext } from '../src/cli/context.js';
import { briefAnswer } from '../src/cli/health.js';
import type { Io } from '../src/cli/io.js';
import { main } from '../src/cli/main.js';
import { Answers, readFanout } from '../src/fleet/answer.js';
import { compareHost, loadBaseline, storeBaseline } from '../src/fleet/baseline.js';
import { type CaptureRef, findCaptures, type Judge, judgeCapture } from '../src/fleet/captures.js';
import { rollup, rollupText } from '../src/fleet/rollup.js';
import { openSnapshotBackend } from '../src/snapshot/backend.js';
import { openSnapshot } from '../src/snapshot/open.js';
import { emulatedCapture } from '../test/report/capture.js';
import { type BenchResult, type BenchSuite, measureRatio, wanted } from './harness.js';

const HOSTS = 10_000;
const CAPTURES = Number(process.env.FLEET_CAPTURES ?? 200);

/** The document `health --json` prints for these emulator options (in this process). */
async function healthDoc(args: string[]): Promise<string> {
  let out = '';
  const io: Io = {
    stdout: (t) => {
      out += t;
    },
    stderr: () => {},
    env: {},
    isTTY: false,
    sleep: async () => {},
    readStdin: async () => '',
  };
  await main(['--backend', 'emu', '--engines', '16', '--json', ...args, 'health', '--stall-ms', '200'], io);
  return out.trim();
}

async function rollupResult(): Promise<BenchResult> {
  const healthy = await healthDoc(['--workload', 'idle']);
  const stranded = await healthDoc(['--workload', 'qp:gbps=10', '--fault', 'lost-wakeup@30:5']);
  const lines: string[] = [];
  for (let i = 0; i < HOSTS; i++) lines.push(`node${String(i).padStart(5, '0')}: ${i % 997 === 5 ? stranded : healthy}`);
  const text = lines.join('\n');
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'bench-rollup-'));
  const file = join(dir, 'fanout.txt');
  writeFileSync(file, text);
  let sink = 0;
  try {
    return await measureRatio(
      'fleet.rollup',
      'ms',
      {
        work: () => {
          const a = new Answers();
          readFanout(readFileSync(file, 'utf8'), a);
          sink += rollupText(rollup(a.all())).length;
        },
        baseline: () => {
          for (const line of readFileSync(file, 'utf8').split('\n')) {
            const colon = line.indexOf(': ');
            sink += (JSON.parse(line.slice(colon + 2)) as { code: number }).code;
          }
        },
        rounds: 9,
      },
      { max: 2 },
      { hosts: HOSTS, bytes: text.length, sink: sink > 0 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A CLI context enough for judging captures (no sleeps: a recording steps through its instants). */
function benchContext(): CliContext {
  const io: Io = { stdout: () => {}, stderr: () => {}, env: {}, isTTY: false, sleep: async () => {}, readStdin: async () => '' };
  return {
    io,
    global: {
      backend: 'auto',
      sysroot: undefined,
      unit: undefined,
      json: false,
      color: false,
      seed: 1,
      engines: undefined,
      descqCnt: undefined,
      workload: undefined,
      atMs: undefined,
      fault: [],
    },
    paint: (_s, t) => t,
    openBackend: async () => {
      throw new Error('not used');
    },
  };
}

async function baselineResult(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  try {
    const plan = { fromMs: 300, samples: 3, intervalMs: 150 };
    const healthy = await emulatedCapture(dir, 'healthy', [{ seed: 1, engines: 4, workload: 'idle' }], plan);
    const sick = await emulatedCapture(
      dir,
      'sick',
      [{ seed: 1, engines: 4, workload: 'qp:gbps=10', faults: ['lost-wakeup@50:1'] }],
      plan,
    );
    const caps = join(dir, 'caps');
    mkdirSync(caps);
    // The names clush --rcopy gives: one file per host (links: the same bytes, no room taken).
    for (let i = 0; i < CAPTURES; i++) {
      linkSync(i % 250 === 7 ? sick : healthy, join(caps, `snap.tar.gz.node${String(i).padStart(4, '0')}`));
    }
    const refs: CaptureRef[] = findCaptures(caps);
    const ctx = benchContext();
    const tmpDir = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const judge: Judge = {
      open: (ref) => openSnapshotBackend(ref.path, { tmpDir }),
      answer: (b) => briefAnswer(b, ctx, { stallMs: 1000 }),
    };
    const judged = [];
    for (const ref of refs) judged.push(await judgeCapture(ref, judge));
    const analysis = join(dir, 'analysis');
    storeBaseline(analysis, judged, '0.0.0-bench', new Date(0).toISOString());
    const base = loadBaseline(analysis);
    const byHost = new Map(base.hosts.map((h) => [h.host, h]));
    let changed = 0;
    return await measureRatio(
      'fleet.baseline',
      'ms',
      {
        work: async () => {
          changed = 0;
          for (const ref of refs) {
            const now = await judgeCapture(ref, judge);
            if (compareHost(byHost.get(now.host), now).kind !== 'same') changed++;
          }
        },
        baseline: async () => {
          for (const ref of refs) await (await openSnapshot(ref.path, { tmpDir })).close();
        },
        rounds: 3,
        warmup: 0,
      },
      { max: 2 },
      { captures: refs.length, stranded: judged.filter((j) => j.status === 'CRITICAL').length, changedAgainstItself: changed },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const fleetSuite: BenchSuite = {
  name: 'fleet',
  async run(): Promise<BenchResult[]> {
    const out: BenchResult[] = [];
    if (wanted('fleet.rollup')) out.push(await rollupResult());
    if (wanted('fleet.baseline')) out.push(await baselineResult());
    return out;
  },
};
