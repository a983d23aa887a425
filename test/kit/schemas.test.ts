// JSON is a contract: every --json output and NDJSON stream validates against its schema in
// docs/schema (Ajv, JSON Schema 2020-12), and every command either has a schema or no JSON output.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Waiter } from '../../src/backend.js';
import { FINDING_KINDS } from '../../src/monitor/codes.js';
import { REASONS, REASONS_BY_VERDICT } from '../../src/progress/classify.js';
import { WAITER_REASONS, WAITER_REASONS_BY_VERDICT } from '../../src/progress/strand.js';
import { ROOT } from '../support/child.js';
import { type CliRun, runCli } from '../support/cli.js';
import { FakeBackend } from '../support/fake-backend.js';
import { cliSurface } from './cli-surface.js';

const SCHEMA_DIR = join(ROOT, 'docs', 'schema');
const schemaFiles = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json'));
// Without the pass that drops unused names from the generated code: the same checks, compiled with less work.
const ajv = new Ajv2020({ strict: true, allErrors: true, code: { optimize: false } });
for (const f of schemaFiles) ajv.addSchema(JSON.parse(readFileSync(join(SCHEMA_DIR, f), 'utf8')));
const validators = new Map<string, ValidateFunction>();
const used = new Set<string>(['defs.schema.json']);
/** The first valid document of each schema, for the mutations at the end. */
const valid = new Map<string, unknown>();

/** The compiled validator of docs/schema/`file`. */
function schema(file: string): ValidateFunction {
  used.add(file);
  let v = validators.get(file);
  if (!v) {
    v = ajv.getSchema(`https://hfi1-sdma.invalid/schema/${file}`);
    if (!v) throw new Error(`docs/schema/${file} is missing`);
    validators.set(file, v);
  }
  return v;
}

/** Run the command in-process; its stdout must be JSON (or NDJSON) valid against `file`. */
async function validates(
  file: string,
  argv: string[],
  opts: { ndjson?: boolean; codes?: number[]; backend?: FakeBackend } = {},
): Promise<unknown[]> {
  return outputValidates(file, argv, await runCli(argv, {}, false, '', opts.backend), opts);
}

/** `r`, the run of `argv`: its stdout must be JSON (or NDJSON) valid against `file`. */
function outputValidates(file: string, argv: string[], r: CliRun, opts: { ndjson?: boolean; codes?: number[] } = {}): unknown[] {
  expect(opts.codes ?? [0], `hfi1-sdma ${argv.join(' ')}: ${r.stderr}`).toContain(r.code);
  const docs = opts.ndjson
    ? r.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as unknown)
    : [JSON.parse(r.stdout) as unknown];
  expect(docs.length).toBeGreaterThan(0);
  const v = schema(file);
  for (const doc of docs) expect(v(doc) ? [] : v.errors, `hfi1-sdma ${argv.join(' ')}`).toEqual([]);
  if (!valid.has(file)) valid.set(file, docs[0]);
  return docs;
}

/** The emulator's workload where the JSON's shape, not the traffic, is checked: a tenth of the default link rate. */
const LIGHT = 'mixed:gbps=10';
/** The emulator where the shape is checked: 4 engines (of 16) at that workload, every field of an engine still there. */
const SMALL = ['--engines', '4', '--workload', LIGHT];

/** Commands whose output is not JSON, and why; every other command must have a schema below. */
const NO_JSON: Record<string, string> = {
  completion: 'a shell script',
  export: 'Prometheus text over HTTP',
  'emu serve': 'runs until stopped; prints progress on stderr',
};
const SCHEMA_OF: Record<string, string> = {
  engines: 'engines.schema.json',
  show: 'show.schema.json',
  ring: 'ring.schema.json',
  watch: 'watch-line.schema.json',
  waiters: 'waiters.schema.json',
  health: 'health.schema.json',
  explain: 'explain.schema.json',
  progress: 'progress.schema.json',
  fit: 'fit.schema.json',
  decode: 'decode.schema.json',
  log: 'log.schema.json',
  doctor: 'doctor.schema.json',
  snapshot: 'snapshot.schema.json',
  report: 'report.schema.json',
  fleet: 'fleet.schema.json',
  'emu run': 'emu-run.schema.json',
  'emu write': 'emu-write.schema.json',
  'emu race': 'emu-race.schema.json',
  'emu twin': 'emu-twin.schema.json',
};

let work: string;
let sysroot: string;

/**
 * A command run once, with --json and --trace FILE: its stdout is checked by one test and its timeline by the test of
 * the --trace files.
 */
function tracedRun(name: string, argv: string[]): () => Promise<{ argv: string[]; r: CliRun; trace: string }> {
  let run: Promise<{ argv: string[]; r: CliRun; trace: string }> | null = null;
  return () => {
    run ??= (async () => {
      const trace = join(work, `${name}.json`);
      const full = [...argv, '--trace', trace];
      return { argv: full, r: await runCli(full), trace };
    })();
    return run;
  };
}
/** emu race: the shortest lost wake-up of PSM's old send path. */
const raceRun = tracedRun('race', ['--json', 'emu', 'race', '--variant', 'psm-pre-2019', '--submitters', '1']);
/** watch: 6 samples of 4 engines, engine 2 stalling. */
const watchRun = tracedRun('watch', [
  '--backend',
  'emu',
  '--engines',
  '4',
  '--workload',
  LIGHT,
  '--fault',
  'stop-fetch@30:2',
  '--json',
  'watch',
  '--count',
  '6',
  '--interval-ms',
  '200',
  '--stall-ms',
  '200',
]);
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'hfi1-sdma-schemas-'));
  sysroot = join(work, 'host');
  await validates('emu-write.schema.json', ['--json', 'emu', 'write', '--sysroot', sysroot, ...SMALL]);
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

// In this order, even under --sequence.shuffle: the last test checks that the ones before it used every schema.
describe('JSON schemas', { timeout: 120_000, shuffle: false }, () => {
  it('every schema compiles in strict mode', () => {
    for (const f of schemaFiles) expect(() => schema(f), f).not.toThrow();
  });

  it('every command and emu action has a schema or is listed as printing no JSON', async () => {
    const surface = await cliSurface();
    const keys = [...surface.commands.keys()];
    // A command that only groups subcommands (none today) prints nothing of its own.
    const leaves = keys.filter((c) => !keys.some((k) => k.startsWith(`${c} `)));
    const commands = leaves.flatMap((c) => {
      const actions = surface.actions.get(c);
      return actions ? actions.map((a) => `${c} ${a}`) : [c];
    });
    expect(commands.filter((c) => !(c in SCHEMA_OF) && !(c in NO_JSON))).toEqual([]);
    for (const f of Object.values(SCHEMA_OF)) expect(schemaFiles).toContain(f);
  });

  it('docs/json.md describes every schema and names the commands without JSON', () => {
    const page = readFileSync(join(ROOT, 'docs', 'json.md'), 'utf8');
    for (const f of schemaFiles) expect(page, f).toContain(`schema/${f}`);
    for (const c of Object.keys(NO_JSON)) expect(page, c).toContain(`\`${c}\``);
  });

  it('engines: the emulator, a rendered host read by the live backend, and a device that is gone', async () => {
    await validates('engines.schema.json', ['--backend', 'emu', ...SMALL, '--json', 'engines']);
    await validates('engines.schema.json', ['--sysroot', sysroot, '--json', 'engines']);
    await validates('engines.schema.json', ['--backend', 'emu', ...SMALL, '--fault', 'device-gone@10', '--json', 'engines'], {
      codes: [69],
    });
  });

  it('show and ring', async () => {
    await validates('show.schema.json', ['--backend', 'emu', ...SMALL, '--json', 'show', '2']);
    await validates('show.schema.json', ['--sysroot', sysroot, '--json', 'show', '2']);
    await validates('ring.schema.json', ['--backend', 'emu', ...SMALL, '--json', 'ring', '2']);
    await validates('ring.schema.json', ['--sysroot', sysroot, '--json', 'ring', '2']);
  });

  it('watch: one NDJSON line per engine per sample, a stall included', async () => {
    const { argv, r } = await watchRun();
    const lines = outputValidates('watch-line.schema.json', argv, r, { ndjson: true });
    expect(lines.length).toBe(6 * 4);
    expect(lines.some((l) => (l as { verdict: string }).verdict === 'stalled')).toBe(true);
  });

  it('waiters: the emulator (69 while it lists none), a rendered host, and a scripted backend with every kind', async () => {
    await validates('waiters.schema.json', ['--backend', 'emu', ...SMALL, '--json', 'waiters', '--count', '3'], {
      codes: [0, 69],
    });
    await validates('waiters.schema.json', ['--sysroot', sysroot, '--json', 'waiters', '--count', '3'], { codes: [0, 69] });
    const base = { descriptorsNeeded: null, engine: 1, onList: true, ownPending: 0, sinceMs: 0, waitsFor: 'dma-desc' } as const;
    const all: Waiter[] = [
      { ...base, kind: 'qp', qpn: 26, qpState: 'RTS', descriptorsNeeded: 3, source: 'qp_stats' },
      { ...base, kind: 'psm', pid: 77, command: null, engine: null, onList: null, ownPending: null, source: 'proc' },
      { ...base, kind: 'ipoib', netdev: 'ib0', txq: 2, source: 'model' },
    ];
    const backend = new FakeBackend(() => ({ dh: 4 }), 2, 2048, { waiters: { at: () => all } });
    const r = await runCli(['--json', 'waiters'], {}, false, '', backend);
    expect(r.code).toBe(0);
    const v = schema('waiters.schema.json');
    const doc = JSON.parse(r.stdout) as { units: { waiters: unknown[] }[] };
    expect(doc.units[0]?.waiters.length).toBe(3);
    expect(v(doc) ? [] : v.errors).toEqual([]);
    valid.set('waiters.schema.json', doc); // every kind of waiter, for the mutations
    expect(v({ ...doc, stranded: -1 })).toBe(false);
  });

  it('fit, both forms; decode; progress', async () => {
    await validates(
      'fit.schema.json',
      ['--json', 'fit', '--descq-cnt', '2048', '--head', '10000', '--tail', '12040', '--num-desc', '9'],
      {
        codes: [0, 1],
      },
    );
    await validates('fit.schema.json', ['--backend', 'emu', ...SMALL, '--json', 'fit', '2', '--num-desc', '9'], {
      codes: [0, 1],
    });
    await validates('decode.schema.json', ['--json', 'decode', '0xc040000000100000', '0x5']);
    await validates('decode.schema.json', ['--json', 'decode', '--chip', 'jkr', '0x100000', '0xc0400005']);
    await validates(
      'fit.schema.json',
      ['--json', 'fit', '--driver', 'hfi2', '--descq-cnt', '2048', '--head', '0', '--tail', '255', '--num-desc', '9'],
      { codes: [0, 1] },
    );
    await validates('progress.schema.json', ['--backend', 'emu', ...SMALL, '--json', 'progress', '2', '--num-desc', '9'], {
      codes: [0, 1],
    });
  });

  it('log, on a kernel log with every kind of event, on the Cornelis hfi1 and hfi2 dumps and on trace text', async () => {
    await validates('log.schema.json', ['--json', 'log', join(ROOT, 'test', 'fixtures', 'kmsg', 'engine-error.dmesg')]);
    for (const f of ['cornelis-jkr.dmesg', 'hfi2-window.dmesg', 'trace-states.txt']) {
      await validates('log.schema.json', ['--json', '--chip', 'jkr', 'log', join(ROOT, 'test', 'fixtures', 'kmsg', f)]);
    }
  });

  it('engines, show and watch of an hfi2 unit whose engines are the window 8..15', async () => {
    const hfi2 = () =>
      new FakeBackend(() => ({ dh: 4, dt: 9 }), 8, 2048, {
        engineIds: [8, 9, 10, 11, 12, 13, 14, 15],
        flavour: { module: 'hfi2', chip: 'jkr', driver: 'hfi2', ports: 2 },
      });
    await validates('engines.schema.json', ['--json', 'engines'], { backend: hfi2() });
    await validates('show.schema.json', ['--json', 'show', '9'], { backend: hfi2() });
    await validates('watch-line.schema.json', ['--json', 'watch', '--count', '1'], { backend: hfi2(), ndjson: true });
  });

  it('health --json: a finding per line with its code, the counts, the provenance', async () => {
    const [doc] = (await validates(
      'health.schema.json',
      ['--backend', 'emu', '--engines', '4', '--fault', 'stop-fetch@30:2', '--json', 'health'],
      {
        codes: [2],
      },
    )) as { findings: { code: string }[] }[];
    expect(doc?.findings[0]?.code).toBe('SD101');
    await validates('health.schema.json', ['--json', 'health', '--stall-ms', 'x'], { codes: [3] });
  });

  it('fleet: the rollup of fan-out text', async () => {
    const input = join(work, 'fanout.txt');
    writeFileSync(
      input,
      'n1: OK\nn2: CRITICAL SD201 hfi1_0 sdma5 stranded\nn3: UNKNOWN no answer within --timeout 10 s\nn4: bash: not found\n',
    );
    const [doc] = await validates('fleet.schema.json', ['--json', 'fleet', '--hosts', 'n[1-5]', input], { codes: [3] });
    expect(doc).toMatchObject({ status: 'UNKNOWN', findings: [{ code: 'SD201', nodes: 'n2' }], noAnswer: { nodes: 'n5' } });
    // The baseline's documents: what -b kept, and a comparison.
    const v = schema('fleet.schema.json');
    const stamp = { host: 'head', time: '2026-01-01T00:00:00.000Z', toolVersion: '0.1.0' };
    const baseline = { dir: '/var/lib/hfi1-sdma/fleet', time: '2026-01-01T00:00:00.000Z', toolVersion: '0.1.0' };
    expect(v({ ...stamp, status: 'baselined', baseline, hosts: { nodes: 'n[1-4]', count: 4 } })).toBe(true);
    const set = { nodes: 'n1', count: 1 };
    expect(
      v({
        ...stamp,
        status: 'changed',
        baseline,
        changes: [{ change: 'hfi1_0 num_sdma 16 → 8', ...set }],
        changed: set,
        same: set,
        newBaselineRecommended: { nodes: '', count: 0 },
      }),
    ).toBe(true);
  });

  it('explain: the list and one code', async () => {
    await validates('explain.schema.json', ['--json', 'explain']);
    await validates('explain.schema.json', ['--json', 'explain', 'SD201']);
  });

  it('doctor, on a host with a unit and on one without', async () => {
    await validates('doctor.schema.json', ['--sysroot', sysroot, '--json', 'doctor']);
    // No unit is a failed check: exit 1.
    await validates('doctor.schema.json', ['--sysroot', work, '--json', 'doctor'], { codes: [1] });
  });

  it('snapshot manifest', async () => {
    await validates('snapshot.schema.json', [
      '--backend',
      'emu',
      '--engines',
      '4',
      '--workload',
      LIGHT,
      '--json',
      'snapshot',
      '-o',
      join(work, 'x.tar.gz'),
    ]);
  });

  it('report of the emulator, with a stall among its findings', async () => {
    const [doc] = await validates('report.schema.json', [
      '--backend',
      'emu',
      '--engines',
      '4',
      '--workload',
      LIGHT,
      '--fault',
      'stop-fetch@100:3',
      '--json',
      'report',
      '-o',
      join(work, 'x.html'),
      '--samples',
      '5',
      '--stall-ms',
      '200',
    ]);
    expect((doc as { units: { findings: { code: string }[] }[] }).units[0]?.findings[0]?.code).toBe('SD101');
  });

  it('emu run and emu race', async () => {
    const [run] = (await validates('emu-run.schema.json', ['--json', 'emu', 'run', '--duration-ms', '20'])) as {
      txSubmitted: number;
      txCompleted: number;
      txAborted: number;
      txInFlight: number;
    }[];
    expect(run && run.txSubmitted === run.txCompleted + run.txAborted + run.txInFlight).toBe(true);
    const race = await raceRun();
    outputValidates('emu-race.schema.json', race.argv, race.r);
  });

  it("emu twin: a capture's twin, and a change tried against it", async () => {
    // The PSM writer's stall on a 1-engine unit, as the field test pins it: the cheapest twin.
    const twin = join(ROOT, 'test/field/walk-b-psm-stall-instant0.twin.json');
    const [doc] = (await validates('emu-twin.schema.json', ['--json', 'emu', 'twin', '--from', twin, '--stall-ms', '400'])) as {
      twin: { divergence: unknown };
    }[];
    expect(doc?.twin.divergence).toBeNull();
    await validates(
      'emu-twin.schema.json',
      ['--json', 'emu', 'twin', '--from', twin, '--stall-ms', '400', '--variant', 'kernel-sample-first'],
      { codes: [0, 1] },
    );
  });

  it('the timeline files of --trace (emu race, watch)', async () => {
    const v = schema('trace.schema.json');
    // The runs whose --json output the tests above checked.
    for (const run of [raceRun, watchRun]) {
      const { argv, r, trace } = await run();
      expect(r.code, `hfi1-sdma ${argv.join(' ')}: ${r.stderr}`).toBe(0);
      const doc = JSON.parse(readFileSync(trace, 'utf8'));
      if (!valid.has('trace.schema.json')) valid.set('trace.schema.json', doc);
      expect(v(doc) ? [] : v.errors, trace).toEqual([]);
    }
  });

  it('rejects what breaks the contract: a number for a register, an unknown verdict, a missing state', () => {
    const engine = {
      ...{ unit: 'hfi2_0', engine: 0, cpu: 0, state: null, running: null, seq: null, seqSource: 'counters', csr: null },
      ...{ swTail: null, swHead: null, descqTail: null, descqHead: null, txTail: null, txHead: null, lastStatus: null },
      ...{ ahgBits: null, flushListNonEmpty: null, descqFullCount: null, inFlight: null, free: null, errors: [] },
      ...{ verdict: 'unknown', reason: 'no-ring-state' },
    };
    const engines = schema('engines.schema.json');
    const flavour = { module: 'hfi2', chip: 'jkr', driver: 'hfi2', ports: 2, engineIds: [8] };
    const unit = { unit: 'hfi2_0', name: 'hfi2_0', ...flavour, descqCnt: 2048 };
    const provenance = {
      backend: 'hw',
      emulated: false,
      host: null,
      source: null,
      capturedAtMs: null,
      capturedAt: null,
      instants: null,
      toolVersion: null,
    };
    const stamp = { host: 'n17', time: '2026-01-01T00:00:00.000Z', toolVersion: '0.1.0' };
    const doc = (e: unknown, u: object = unit) => ({ ...stamp, backend: 'hw', provenance, units: [{ ...u, engines: [e] }] });
    expect(engines(doc(engine))).toBe(true);
    // Every document says whose it is, when and by which version.
    const { host: _host, ...hostless } = doc(engine);
    expect(engines(hostless)).toBe(false);
    // A unit is named, not numbered: numbers repeat across modules (hfi1_0 and hfi2_0).
    expect(engines(doc({ ...engine, unit: 0 }))).toBe(false);
    // The flavour is part of the contract: a unit without it, or of a chip nobody makes, is refused.
    const { chip: _chip, ...chipless } = unit;
    expect(engines(doc(engine, chipless))).toBe(false);
    expect(engines(doc(engine, { ...unit, chip: 'fxr' }))).toBe(false);
    expect(engines(doc(engine, { ...unit, engineIds: [16] }))).toBe(false);
    expect(engines(doc({ ...engine, lastStatus: 5 }))).toBe(false);
    const { state: _state, ...stateless } = engine;
    expect(engines(doc(stateless))).toBe(false);
    const line = {
      ...stamp,
      ...engine,
      t: 0,
      reason: 'warming-up',
      descPerSec: null,
      txPerSec: null,
      stallCount: 0,
      stallMaxMs: 0,
    };
    const watch = schema('watch-line.schema.json');
    expect(watch({ ...line, verdict: 'unknown' })).toBe(true);
    expect(watch({ ...line, verdict: 'fine' })).toBe(false);
  });

  it("verdicts, reasons and finding codes are the library's own: the pairs of REASONS_BY_VERDICT, the codes of FINDING_KINDS", () => {
    const defs = JSON.parse(readFileSync(join(SCHEMA_DIR, 'defs.schema.json'), 'utf8')) as {
      $defs: Record<
        string,
        { anyOf?: { properties: { verdict: { const: string }; reason: { enum: string[] } } }[]; enum?: string[] }
      >;
    };
    const pairs = (name: string) =>
      Object.fromEntries((defs.$defs[name]?.anyOf ?? []).map((b) => [b.properties.verdict.const, b.properties.reason.enum]));
    expect(pairs('verdictReason')).toEqual(REASONS_BY_VERDICT);
    expect(pairs('waiterVerdictReason')).toEqual(WAITER_REASONS_BY_VERDICT);
    expect(new Set(Object.values(REASONS_BY_VERDICT).flat())).toEqual(new Set(REASONS));
    expect(new Set(Object.values(WAITER_REASONS_BY_VERDICT).flat())).toEqual(new Set(WAITER_REASONS));
    expect(new Set(defs.$defs.findingCode?.enum)).toEqual(new Set(Object.values(FINDING_KINDS).map((k) => k.code)));
  });

  // A mutation per schema: the document a command printed above, changed where a script would be misled, is refused.
  it('every schema refuses a document broken where a script reads it', () => {
    const engineOf = (d: unknown) => (d as { units: { engines: Record<string, unknown>[] }[] }).units[0]?.engines[0] as object;
    const without = (o: object, k: string) => Object.fromEntries(Object.entries(o).filter(([key]) => key !== k));
    const withEngine = (d: unknown, e: object) => {
      const doc = structuredClone(d) as { units: { engines: object[] }[] };
      (doc.units[0] as { engines: object[] }).engines[0] = e;
      return doc;
    };
    const waiterDoc = (d: unknown, change: (w: object) => object) => {
      const doc = structuredClone(d) as { units: { waiters: object[] }[] };
      const u = doc.units.find((x) => x.waiters.length > 0) as { waiters: object[] };
      u.waiters[0] = change(u.waiters[0] as object);
      return doc;
    };
    const set = (d: unknown, patch: object) => ({ ...(d as object), ...patch });
    const mutations: Record<string, [string, (d: unknown) => unknown][]> = {
      'engines.schema.json': [
        ['an engine without its verdict', (d) => withEngine(d, without(engineOf(d), 'verdict'))],
        ['an engine without its reason', (d) => withEngine(d, without(engineOf(d), 'reason'))],
        ['verdict "bogus"', (d) => withEngine(d, { ...engineOf(d), verdict: 'bogus' })],
        ['reason "bogus-reason"', (d) => withEngine(d, { ...engineOf(d), reason: 'bogus-reason' })],
        ['idle with chip-not-fetching', (d) => withEngine(d, { ...engineOf(d), verdict: 'idle', reason: 'chip-not-fetching' })],
      ],
      'show.schema.json': [
        ['verdict "bogus"', (d) => set(d, { verdict: 'bogus' })],
        ['stalled with empty', (d) => set(d, { verdict: 'stalled', reason: 'empty' })],
      ],
      'watch-line.schema.json': [
        ['no reason', (d) => without(d as object, 'reason')],
        ['progressing with ring-full', (d) => set(d, { verdict: 'progressing', reason: 'ring-full' })],
      ],
      'health.schema.json': [
        ['CRITICAL with code 0', (d) => set(d, { status: 'CRITICAL', code: 0 })],
        ['OK with code 2', (d) => set(d, { status: 'OK', code: 2 })],
        [
          'a finding code SD999',
          (d) => {
            const doc = structuredClone(d) as { findings: { code: string }[] };
            (doc.findings[0] as { code: string }).code = 'SD999';
            return doc;
          },
        ],
      ],
      'waiters.schema.json': [
        ['a waiter stranded for being busy', (d) => waiterDoc(d, (w) => ({ ...w, verdict: 'stranded', reason: 'engine-busy' }))],
        ['a waiter without its verdict', (d) => waiterDoc(d, (w) => without(w, 'verdict'))],
      ],
      'report.schema.json': [
        [
          'a finding code SD999',
          (d) => {
            const doc = structuredClone(d) as { units: { findings: { code: string }[] }[] };
            (doc.units[0]?.findings[0] as { code: string }).code = 'SD999';
            return doc;
          },
        ],
      ],
      'fleet.schema.json': [
        ['UNKNOWN with code 0', (d) => set(d, { status: 'UNKNOWN', code: 0 })],
        [
          'a finding without its nodes',
          (d) => {
            const doc = structuredClone(d) as { findings: Record<string, unknown>[] };
            doc.findings[0] = without(doc.findings[0] as object, 'nodes');
            return doc;
          },
        ],
      ],
      'trace.schema.json': [
        [
          'an event of a phase no viewer knows',
          (d) => {
            const doc = structuredClone(d) as { traceEvents: { ph: string }[] };
            (doc.traceEvents.find((e) => e.ph === 'X') as { ph: string }).ph = 'Z';
            return doc;
          },
        ],
        [
          'an async span without its id',
          (d) => {
            const doc = structuredClone(d) as { traceEvents: { ph: string; id?: string }[] };
            delete (doc.traceEvents.find((e) => e.ph === 'b') as { id?: string }).id;
            return doc;
          },
        ],
      ],
      'explain.schema.json': [
        [
          'a listed code "SD999"',
          (d) => {
            const doc = structuredClone(d) as { codes: { code: string }[] };
            (doc.codes[0] as { code: string }).code = 'SD999';
            return doc;
          },
        ],
      ],
    };
    for (const file of schemaFiles.filter((f) => f !== 'defs.schema.json')) {
      const doc = valid.get(file);
      expect(doc, `no document of ${file} was checked above`).toBeDefined();
      const v = schema(file);
      expect(v(doc), file).toBe(true);
      // Every schema: each field it requires is required.
      const required = (v.schema as { required?: string[]; allOf?: { required?: string[] }[] }).required ?? [];
      for (const key of required) expect(v(without(doc as object, key)), `${file} without ${key}`).toBe(false);
      // Every document says when it was written and by which version (the stamp; doctor's host name is host.name).
      for (const key of ['time', 'toolVersion']) expect(v(without(doc as object, key)), `${file} without ${key}`).toBe(false);
      for (const [what, mutate] of mutations[file] ?? []) expect(v(mutate(doc)), `${file}: ${what}`).toBe(false);
      expect(required.length + (mutations[file]?.length ?? 0), `${file} has no mutation`).toBeGreaterThan(0);
    }
  });

  it('every schema file is used by a check above', () => {
    expect(schemaFiles.filter((f) => !used.has(f))).toEqual([]);
  });
});
