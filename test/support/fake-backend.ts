// A scripted backend for command tests: each engine follows a function of virtual time, and
// time advances only through advanceMs (as the emulator's does).
import type {
  Backend,
  BackendKind,
  EngineSample,
  LinkState,
  PortCounters,
  Recording,
  RingDump,
  SourceWarning,
  Unit,
  UnitContext,
  UnitFlavour,
  UnitInfo,
  UnitSettings,
  Waiter,
  WaiterVisibility,
} from '../../src/backend.js';
import { Hfi1SdmaError } from '../../src/errors.js';
import { carrySince, visibilityOf } from '../../src/progress/waiters.js';
import { mkSample, type SampleSpec } from './samples.js';

export type Script = (engine: number, tMs: number) => Omit<SampleSpec, 't' | 'engine'>;

/** A recording of the fake's script at the given instants: sample() shows the current one. */
class FakeRecording implements Recording {
  private at = 0;
  advances = 0;

  constructor(
    readonly source: string,
    readonly timesMs: readonly number[],
  ) {}

  position(): number {
    return this.at;
  }

  async advance(): Promise<boolean> {
    this.advances += 1;
    if (this.at + 1 >= this.timesMs.length) return false;
    this.at += 1;
    return true;
  }
}

/** Extras of a fake: a recording instead of live time, source warnings, the backend kind. */
export interface FakeOptions {
  recordingTimesMs?: readonly number[];
  warnings?: readonly SourceWarning[];
  kind?: BackendKind;
  /** The port's link as link() returns it; a function follows virtual time; absent: no link() at all. */
  link?: LinkState | null | ((tMs: number) => LinkState | null);
  /** The unit's context (UnitInfo.context); absent: none. */
  context?: UnitContext;
  /**
   * The waiters at virtual time t (sinceMs is carried across calls while a waiter stays), and which
   * kinds are visible (default: qp visible through the model, the others not); absent: no waiters() at all.
   */
  waiters?: { at: (tMs: number) => Waiter[]; visibility?: WaiterVisibility[] };
  /** The engines' absolute indexes (default 0 to engines − 1); `engines` becomes their count. */
  engineIds?: readonly number[];
  /** The unit's flavour (default hfi1 / wfr / upstream, 1 port); the unit is named `<module>_0`. */
  flavour?: Partial<UnitFlavour>;
  /** Every port's counters at virtual time t (Unit.portCounters); absent: no portCounters() at all. */
  portCounters?: (tMs: number) => PortCounters[];
  /** The driver settings (UnitInfo.settings); absent: none. */
  settings?: UnitSettings;
}

/** A one-unit backend whose engines follow `script`; virtual time starts at 0. */
export class FakeBackend implements Backend {
  readonly kind: BackendKind;
  nowMs = 0;
  closed = 0;
  readonly info: UnitInfo;
  readonly recording?: FakeRecording;
  private readonly sourceWarnings: readonly SourceWarning[];
  private readonly linkOpt: FakeOptions['link'];
  private readonly waitersOpt: FakeOptions['waiters'];
  private readonly portCountersOpt: FakeOptions['portCounters'];
  private lastWaiters: Waiter[] = [];

  constructor(
    private readonly script: Script,
    engines = 4,
    descqCnt = 2048,
    opts: FakeOptions = {},
  ) {
    this.kind = opts.kind ?? 'emu';
    this.sourceWarnings = opts.warnings ?? [];
    this.linkOpt = opts.link;
    this.waitersOpt = opts.waiters;
    this.portCountersOpt = opts.portCounters;
    if (opts.recordingTimesMs) this.recording = new FakeRecording('node17.tar.gz', opts.recordingTimesMs);
    const engineIds = opts.engineIds ? [...opts.engineIds] : Array.from({ length: engines }, (_, i) => i);
    const flavour: UnitFlavour = { module: 'hfi1', chip: 'wfr', driver: 'upstream', ports: 1, evidence: [], ...opts.flavour };
    this.info = {
      unit: 0,
      name: `${flavour.module}_0`,
      pci: '0000:05:00.0',
      engines: engineIds.length,
      engineIds,
      flavour,
      descqCnt,
      sources: [{ source: 'model', readable: true }],
      ...(opts.context ? { context: opts.context } : {}),
      ...(opts.settings ? { settings: opts.settings } : {}),
    };
  }

  advanceMs(ms: number): void {
    this.nowMs += ms;
  }

  async units(): Promise<UnitInfo[]> {
    return [this.info];
  }

  async unit(id: number | string): Promise<Unit> {
    if (id !== 0 && id !== this.info.name) {
      throw new Hfi1SdmaError('E_NO_DEVICE', `no unit ${typeof id === 'string' ? id : `${this.info.flavour.module}_${id}`}`);
    }
    const now = () => (this.recording ? (this.recording.timesMs[this.recording.position()] ?? 0) : this.nowMs);
    const sample = async (engines?: readonly number[]): Promise<EngineSample[]> =>
      (engines ?? this.info.engineIds).map((e) =>
        mkSample({ ...this.script(e, now()), t: now(), engine: e, descqCnt: this.info.descqCnt }),
      );
    const ring = async (engine: number): Promise<RingDump> => {
      const [s] = await sample([engine]);
      const sw = s?.sw;
      const n = sw ? (sw.descqTail - sw.descqHead) >>> 0 : 0;
      return {
        unit: 0,
        engine,
        descqCnt: this.info.descqCnt,
        head: sw?.swHead ?? 0,
        tail: sw?.swTail ?? 0,
        descriptors: Array.from({ length: n }, (_, k) => ({
          slot: ((sw?.swHead ?? 0) + k) & (this.info.descqCnt - 1),
          flags: k % 2 === 0 ? '--F-' : '-H-L',
          addr: BigInt(0x1000 + k * 64),
          gen: 1,
          len: 64,
          ...(k % 2 === 0 ? { ahgIdx: 0, ahgMode: 0 } : {}),
        })),
      };
    };
    const unit: Unit = { info: this.info, sample, ring, warnings: () => this.sourceWarnings };
    const l = this.linkOpt;
    if (l !== undefined) unit.link = async () => (typeof l === 'function' ? l(now()) : l);
    const pc = this.portCountersOpt;
    if (pc !== undefined) unit.portCounters = async () => pc(now());
    const w = this.waitersOpt;
    if (w !== undefined) {
      unit.waiters = async () => {
        const t = now();
        this.lastWaiters = carrySince(
          this.lastWaiters,
          w.at(t).map((x) => ({ ...x, sinceMs: t })),
        );
        const visibility = w.visibility ?? [{ kind: 'qp', visible: true, source: 'model' }];
        return { unit: 0, timeMs: t, waiters: this.lastWaiters, visibility: visibilityOf(visibility) };
      };
    }
    return unit;
  }

  async close(): Promise<void> {
    this.closed += 1;
  }
}
