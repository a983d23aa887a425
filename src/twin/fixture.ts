// The twin of a capture as a file: a unit's flavour and the state it starts from (the seed), what was taken from the
// capture, what was assumed instead and what was not taken, the capture's verdict, and (for a replay) what the later
// instants showed. `emu twin --emit-test` writes one, minimised, beside the test that asserts its verdict; any
// emulator option takes one (`--from FILE.json`, createEmuBackend({ from })). A file comes from elsewhere: every
// field is checked here before the model sees it, and one of a newer format is refused.

import type { ChipKind, DriverBuild } from '../backend.js';
import {
  SEED_CONDITIONS,
  type SeedCondition,
  type SeedEngine,
  type SeedPort,
  type SeedTx,
  type SeedWaiter,
  type UnitSeed,
} from '../emu/seed.js';
import type { SenderIdentity } from '../emu/sender.js';
import { Hfi1SdmaError } from '../errors.js';
import { escapeControls } from '../hw/parse/text.js';

/** The twin file's format. */
export type TwinFormat = 'hfi1-sdma-twin/1';
export const TWIN_FORMAT: TwinFormat = 'hfi1-sdma-twin/1';

/** The unit a twin is: the capture's unit, by name and flavour. */
export interface TwinUnit {
  readonly name: string;
  readonly unit: number;
  readonly pci: string;
  readonly chip: ChipKind;
  readonly driver: DriverBuild;
  readonly ports: number;
  readonly activePorts: readonly number[];
  readonly firstEngine: number;
  readonly engines: number;
  /** The sdma_descq_cnt the ring size comes from (the ring size itself: a power of two is taken as given). */
  readonly descqCnt: number;
  /** sdma_idle_cnt in ns, from the engines' RELOAD_CNT. */
  readonly idleCntNs: number;
  /** Module parameters the emulator follows, `NAME=VALUE` (use_bulksvc, bulksvc_*, num_vls, cap_mask). */
  readonly params: readonly string[];
}

/** A finding as a twin compares it: its code and where (the text and age vary). */
export interface TwinFinding {
  readonly code: string;
  readonly severity: string;
  readonly unit: string | null;
  readonly engine: number | null;
  readonly port: number | null;
  /** The line as the capture (or the twin) printed it. */
  readonly text: string;
}

/** What one engine showed at one instant (the replay compares the twin with it). */
export interface EngineView {
  readonly engine: number;
  readonly state: string | null;
  readonly descqHead: number | null;
  readonly inFlight: number | null;
}

/** What one later instant of the capture showed. */
export interface TwinObservation {
  readonly instant: number;
  /** ms after the seed instant. */
  readonly afterMs: number;
  readonly gone: boolean;
  readonly engines: readonly EngineView[];
  /** The waiters asleep, as `kind who @engine` keys. */
  readonly waiters: readonly string[];
  readonly ports: readonly { port: number; state: string | null }[];
  readonly findings: readonly TwinFinding[];
}

/** Where the twin comes from. */
export interface TwinSource {
  readonly file: string;
  /** The capture's format (snapshot.json), or the fixture's. */
  readonly format: string;
  readonly host: string | null;
  readonly capturedAt: string | null;
  /** The hfi1-sdma that captured it. */
  readonly toolVersion: string | null;
  readonly emulated: boolean;
  readonly redacted: boolean;
  /** The instant the twin starts from (0 for the first) and how many the capture holds. */
  readonly instant: number;
  readonly instants: number;
  /** ms of the seed instant from the capture's first. */
  readonly timeMs: number;
  /** sha256 of the capture file, when it was read from one. */
  readonly sha256: string | null;
}

/** One sender of the traffic the capture shows on an engine (the twin's default workload, `captured`). */
export interface TwinTraffic {
  readonly engine: number;
  readonly kind: 'qp' | 'psm' | 'ipoib';
  /** The fraction of the engine's rate it offers. */
  readonly load: number;
  /** Descriptors per packet. */
  readonly numDesc: number;
  readonly identity: SenderIdentity;
}

/** What the twin took, assumed and left, one line each. */
export interface TwinNotes {
  readonly taken: readonly string[];
  readonly assumed: readonly string[];
  readonly notTaken: readonly string[];
}

/** How a test runs the twin: pinned so it runs the same way anywhere. */
export interface TwinRun {
  readonly seed: number;
  readonly workload: string;
  readonly faults: readonly string[];
  readonly variant: 'kernel' | 'kernel-sample-first';
  readonly params: readonly string[];
  readonly stallMs: number;
  readonly strandMs: number;
}

/** A twin as a file. */
export interface TwinFixture {
  readonly format: TwinFormat;
  /** The hfi1-sdma that wrote it. */
  readonly toolVersion: string;
  readonly source: TwinSource;
  readonly unit: TwinUnit;
  readonly seed: UnitSeed;
  /** The traffic the capture shows (run unless another workload is asked for). */
  readonly traffic: readonly TwinTraffic[];
  readonly notes: TwinNotes;
  /** The capture's findings at its last instant (notes left out): what the twin must reach. */
  readonly verdict: readonly TwinFinding[];
  /** The instants after the seed one, for a replay (none in a minimised fixture). */
  readonly observations: readonly TwinObservation[];
  /** How the emitted test runs it; absent outside one. */
  readonly run?: TwinRun;
}

type Json = unknown;

/** Checks one fixture's fields, naming the file and the field on the first one that is wrong. */
class FixtureChecker {
  constructor(private readonly file: string) {}

  fail(where: string, what: string): never {
    throw new Hfi1SdmaError(
      'E_PARSE',
      `${this.file}: ${where} ${what}; it is not a twin as hfi1-sdma writes one, or it was altered`,
    );
  }

  object(v: Json, where: string): Record<string, Json> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(where, 'must be an object');
    return v as Record<string, Json>;
  }

  list(v: Json, where: string, max: number): Json[] {
    if (!Array.isArray(v)) this.fail(where, 'must be a list');
    if (v.length > max) this.fail(where, `may hold at most ${max} entries`);
    return v;
  }

  int(v: Json, where: string, min: number, max: number): number {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      this.fail(where, `must be a whole number from ${min} to ${max}`);
    return v;
  }

  num(v: Json, where: string, min: number, max: number): number {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
      this.fail(where, `must be a number from ${min} to ${max}`);
    return v;
  }

  text(v: Json, where: string, max = 4096): string {
    if (typeof v !== 'string' || v.length > max) this.fail(where, `must be a string of at most ${max} characters`);
    return v;
  }

  textOrNull(v: Json, where: string): string | null {
    return v === null ? null : this.text(v, where);
  }

  oneOf<T extends string>(v: Json, where: string, of: readonly T[]): T {
    if (typeof v !== 'string' || !(of as readonly string[]).includes(v)) this.fail(where, `must be one of ${of.join(', ')}`);
    return v as T;
  }

  bool(v: Json, where: string): boolean {
    if (typeof v !== 'boolean') this.fail(where, 'must be true or false');
    return v;
  }

  intOrNull(v: Json, where: string, min: number, max: number): number | null {
    return v === null ? null : this.int(v, where, min, max);
  }

  texts(v: Json, where: string, max = 256): string[] {
    return this.list(v, where, max).map((t, i) => this.text(t, `${where}[${i}]`));
  }
}

const U32 = 0xffff_ffff;
const U48 = 2 ** 48;

function checkTx(c: FixtureChecker, v: Json, where: string): SeedTx {
  const o = c.object(v, where);
  const numDesc = c.int(o.numDesc, `${where}.numDesc`, 1, 32_767);
  if (o.lens === undefined) return { numDesc };
  const lens = c.list(o.lens, `${where}.lens`, numDesc).map((l, i) => c.int(l, `${where}.lens[${i}]`, 0, 0xffff));
  return { numDesc, lens };
}

function checkEngine(c: FixtureChecker, v: Json, where: string): SeedEngine {
  const o = c.object(v, where);
  const n = (k: string, max = U32) => c.int(o[k], `${where}.${k}`, 0, max);
  return {
    engine: n('engine', 15),
    descqHead: n('descqHead'),
    txHead: n('txHead', 0xffff),
    headSeq: n('headSeq'),
    descqFullCount: n('descqFullCount'),
    lastStatus: n('lastStatus', U48),
    sdmaInt: n('sdmaInt', Number.MAX_SAFE_INTEGER),
    progressInt: n('progressInt', Number.MAX_SAFE_INTEGER),
    idleInt: n('idleInt', Number.MAX_SAFE_INTEGER),
    errCount: n('errCount', Number.MAX_SAFE_INTEGER),
    descFetched: n('descFetched'),
    interrupts: n('interrupts', Number.MAX_SAFE_INTEGER),
    inFlight: c.list(o.inFlight, `${where}.inFlight`, 32_767).map((t, i) => checkTx(c, t, `${where}.inFlight[${i}]`)),
  };
}

const QP_STATES = ['RESET', 'INIT', 'RTR', 'RTS', 'SQD', 'SQE', 'ERR'] as const;

function checkIdentity(c: FixtureChecker, v: Json, where: string): SenderIdentity {
  const o = c.object(v, where);
  const out: { -readonly [K in keyof SenderIdentity]: SenderIdentity[K] } = {};
  if (o.qpn !== undefined) out.qpn = c.int(o.qpn, `${where}.qpn`, 2, 0xff_ffff);
  if (o.qpState !== undefined) out.qpState = c.oneOf(o.qpState, `${where}.qpState`, QP_STATES);
  if (o.pid !== undefined) out.pid = c.int(o.pid, `${where}.pid`, 1, 0x3fff_ffff);
  if (o.command !== undefined) out.command = escapeControls(c.text(o.command, `${where}.command`, 64));
  if (o.user !== undefined) out.user = escapeControls(c.text(o.user, `${where}.user`, 64));
  if (o.txq !== undefined) out.txq = c.int(o.txq, `${where}.txq`, 0, 4095);
  return out;
}

function checkWaiter(c: FixtureChecker, v: Json, where: string): SeedWaiter {
  const o = c.object(v, where);
  const w: { -readonly [K in keyof SeedWaiter]: SeedWaiter[K] } = {
    kind: c.oneOf(o.kind, `${where}.kind`, ['qp', 'psm', 'ipoib'] as const),
    engine: c.int(o.engine, `${where}.engine`, 0, 15),
    need: c.int(o.need, `${where}.need`, 1, 32_767),
    ownPending: c.int(o.ownPending, `${where}.ownPending`, 0, 32_767),
    asleepMs: c.num(o.asleepMs, `${where}.asleepMs`, 0, 1e9),
    identity: checkIdentity(c, o.identity, `${where}.identity`),
  };
  if (o.stuck !== undefined) w.stuck = c.bool(o.stuck, `${where}.stuck`);
  if (o.timeouts !== undefined) w.timeouts = c.int(o.timeouts, `${where}.timeouts`, 0, U32);
  return w;
}

function checkPort(c: FixtureChecker, v: Json, where: string): SeedPort {
  const o = c.object(v, where);
  const n = (k: string) => c.int(o[k], `${where}.${k}`, 0, Number.MAX_SAFE_INTEGER);
  return {
    port: c.int(o.port, `${where}.port`, 1, 2),
    state: c.oneOf(o.state, `${where}.state`, ['ACTIVE', 'INIT', 'DOWN'] as const),
    physState: c.oneOf(o.physState, `${where}.physState`, ['LinkUp', 'Polling', 'Disabled'] as const),
    xmitData: n('xmitData'),
    xmitPackets: n('xmitPackets'),
    xmitWait: n('xmitWait'),
    xmitDiscards: n('xmitDiscards'),
    linkDowned: n('linkDowned'),
    linkErrorRecovery: n('linkErrorRecovery'),
    rcvErrors: n('rcvErrors'),
    dmaWait: n('dmaWait'),
  };
}

function checkCondition(c: FixtureChecker, v: Json, where: string): SeedCondition {
  const o = c.object(v, where);
  const fault = c.oneOf(o.fault, `${where}.fault`, SEED_CONDITIONS);
  const out: { -readonly [K in keyof SeedCondition]: SeedCondition[K] } = { fault };
  if (o.engine !== undefined) out.engine = c.int(o.engine, `${where}.engine`, 0, 15);
  if (o.port !== undefined) out.port = c.int(o.port, `${where}.port`, 1, 2);
  return out;
}

function checkFinding(c: FixtureChecker, v: Json, where: string): TwinFinding {
  const o = c.object(v, where);
  return {
    code: c.text(o.code, `${where}.code`, 8),
    severity: c.oneOf(o.severity, `${where}.severity`, ['critical', 'warning', 'unknown', 'note'] as const),
    unit: c.textOrNull(o.unit, `${where}.unit`),
    engine: c.intOrNull(o.engine, `${where}.engine`, 0, 15),
    port: c.intOrNull(o.port, `${where}.port`, 1, 2),
    text: escapeControls(c.text(o.text, `${where}.text`)),
  };
}

function checkObservation(c: FixtureChecker, v: Json, where: string): TwinObservation {
  const o = c.object(v, where);
  return {
    instant: c.int(o.instant, `${where}.instant`, 0, 10_000),
    afterMs: c.num(o.afterMs, `${where}.afterMs`, 0, 86_400_000),
    gone: c.bool(o.gone, `${where}.gone`),
    engines: c.list(o.engines, `${where}.engines`, 16).map((e, i) => {
      const x = c.object(e, `${where}.engines[${i}]`);
      return {
        engine: c.int(x.engine, `${where}.engines[${i}].engine`, 0, 15),
        state: c.textOrNull(x.state, `${where}.engines[${i}].state`),
        descqHead: c.intOrNull(x.descqHead, `${where}.engines[${i}].descqHead`, 0, U32),
        inFlight: c.intOrNull(x.inFlight, `${where}.engines[${i}].inFlight`, 0, U32),
      };
    }),
    waiters: c.texts(o.waiters, `${where}.waiters`, 4096),
    ports: c.list(o.ports, `${where}.ports`, 2).map((p, i) => {
      const x = c.object(p, `${where}.ports[${i}]`);
      return {
        port: c.int(x.port, `${where}.ports[${i}].port`, 1, 2),
        state: c.textOrNull(x.state, `${where}.ports[${i}].state`),
      };
    }),
    findings: c.list(o.findings, `${where}.findings`, 256).map((f, i) => checkFinding(c, f, `${where}.findings[${i}]`)),
  };
}

function checkTraffic(c: FixtureChecker, v: Json, where: string): TwinTraffic {
  const o = c.object(v, where);
  return {
    engine: c.int(o.engine, `${where}.engine`, 0, 15),
    kind: c.oneOf(o.kind, `${where}.kind`, ['qp', 'psm', 'ipoib'] as const),
    load: c.num(o.load, `${where}.load`, 0, 100),
    numDesc: c.int(o.numDesc, `${where}.numDesc`, 1, 64),
    identity: checkIdentity(c, o.identity, `${where}.identity`),
  };
}

function checkRun(c: FixtureChecker, v: Json): TwinRun {
  const o = c.object(v, 'run');
  return {
    seed: c.int(o.seed, 'run.seed', 0, U32),
    workload: c.text(o.workload, 'run.workload', 256),
    faults: c.texts(o.faults, 'run.faults', 64),
    variant: c.oneOf(o.variant, 'run.variant', ['kernel', 'kernel-sample-first'] as const),
    params: c.texts(o.params, 'run.params', 64),
    stallMs: c.int(o.stallMs, 'run.stallMs', 1, 3_600_000),
    strandMs: c.int(o.strandMs, 'run.strandMs', 1, 3_600_000),
  };
}

/** Check a parsed fixture (`file` names it in messages); E_PARSE on the first field that is wrong. */
export function checkFixture(v: Json, file: string): TwinFixture {
  const c = new FixtureChecker(file);
  const o = c.object(v, 'the file');
  const format = typeof o.format === 'string' ? o.format : '';
  const m = /^hfi1-sdma-twin\/(\d+)$/.exec(format);
  if (!m) c.fail('format', `must be ${TWIN_FORMAT}, got ${JSON.stringify(escapeControls(String(o.format).slice(0, 60)))}`);
  const toolVersion = escapeControls(c.text(o.toolVersion, 'toolVersion', 64));
  if (format !== TWIN_FORMAT) {
    throw new Hfi1SdmaError(
      'E_PARSE',
      `${file}: a twin of format ${format}, written by hfi1-sdma ${toolVersion}: this hfi1-sdma reads ${TWIN_FORMAT} only; run it with hfi1-sdma ${toolVersion} or later`,
    );
  }
  const s = c.object(o.source, 'source');
  const source: TwinSource = {
    file: escapeControls(c.text(s.file, 'source.file')),
    format: escapeControls(c.text(s.format, 'source.format', 64)),
    host: s.host === null ? null : escapeControls(c.text(s.host, 'source.host', 256)),
    capturedAt: c.textOrNull(s.capturedAt, 'source.capturedAt'),
    toolVersion: s.toolVersion === null ? null : escapeControls(c.text(s.toolVersion, 'source.toolVersion', 64)),
    emulated: c.bool(s.emulated, 'source.emulated'),
    redacted: c.bool(s.redacted, 'source.redacted'),
    instant: c.int(s.instant, 'source.instant', 0, 10_000),
    instants: c.int(s.instants, 'source.instants', 1, 10_000),
    timeMs: c.num(s.timeMs, 'source.timeMs', 0, 86_400_000),
    sha256: s.sha256 === null ? null : c.text(s.sha256, 'source.sha256', 64),
  };
  const u = c.object(o.unit, 'unit');
  const unit: TwinUnit = {
    name: c.text(u.name, 'unit.name', 16),
    unit: c.int(u.unit, 'unit.unit', 0, 63),
    pci: c.text(u.pci, 'unit.pci', 16),
    chip: c.oneOf(u.chip, 'unit.chip', ['wfr', 'jkr'] as const),
    driver: c.oneOf(u.driver, 'unit.driver', ['upstream', 'cornelis', 'hfi2'] as const),
    ports: c.int(u.ports, 'unit.ports', 1, 2),
    activePorts: c.list(u.activePorts, 'unit.activePorts', 2).map((p, i) => c.int(p, `unit.activePorts[${i}]`, 1, 2)),
    firstEngine: c.int(u.firstEngine, 'unit.firstEngine', 0, 15),
    engines: c.int(u.engines, 'unit.engines', 1, 16),
    descqCnt: c.int(u.descqCnt, 'unit.descqCnt', 0, U32),
    idleCntNs: c.int(u.idleCntNs, 'unit.idleCntNs', 0, 1e9),
    params: c.texts(u.params, 'unit.params', 32),
  };
  if (!/^hfi[12]_\d{1,2}$/.test(unit.name)) c.fail('unit.name', 'must be hfi1_<N> or hfi2_<N>');
  const sd = c.object(o.seed, 'seed');
  const seed: UnitSeed = {
    engines: c.list(sd.engines, 'seed.engines', 16).map((e, i) => checkEngine(c, e, `seed.engines[${i}]`)),
    waiters: c.list(sd.waiters, 'seed.waiters', 4096).map((w, i) => checkWaiter(c, w, `seed.waiters[${i}]`)),
    ports: c.list(sd.ports, 'seed.ports', 2).map((p, i) => checkPort(c, p, `seed.ports[${i}]`)),
    conditions: c.list(sd.conditions, 'seed.conditions', 64).map((x, i) => checkCondition(c, x, `seed.conditions[${i}]`)),
  };
  const n = c.object(o.notes, 'notes');
  const notes: TwinNotes = {
    taken: c.texts(n.taken, 'notes.taken').map(escapeControls),
    assumed: c.texts(n.assumed, 'notes.assumed').map(escapeControls),
    notTaken: c.texts(n.notTaken, 'notes.notTaken').map(escapeControls),
  };
  const fixture: TwinFixture = {
    format: TWIN_FORMAT,
    toolVersion,
    source,
    unit,
    seed,
    traffic: c.list(o.traffic, 'traffic', 1024).map((t, i) => checkTraffic(c, t, `traffic[${i}]`)),
    notes,
    verdict: c.list(o.verdict, 'verdict', 256).map((f, i) => checkFinding(c, f, `verdict[${i}]`)),
    observations: c.list(o.observations, 'observations', 10_000).map((x, i) => checkObservation(c, x, `observations[${i}]`)),
    ...(o.run === undefined ? {} : { run: checkRun(c, o.run) }),
  };
  return fixture;
}
