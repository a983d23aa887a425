// The emulator's types, as a caller writes its options: faults and workloads are literal unions (a misspelt one does
// not compile), the controls are the emulator's own, beside the contract it keeps.
import type { Backend, ChipKind, DriverBuild } from '../backend.js';
import type { TwinFixture } from '../twin/fixture.js';

/** The faults the emulator injects (`hfi1-sdma explain` and the README describe each). */
export type FaultName =
  | 'stop-fetch'
  | 'lost-interrupt'
  | 'head-writeback-stall'
  | 'engine-error'
  | 'link-down'
  | 'link-up'
  | 'freeze'
  | 'slow'
  | 'device-gone'
  | 'lost-wakeup'
  | 'netdev-unregister'
  | 'halt-stuck'
  | 'link-flap'
  | 'fabric-stall'
  | 'ipoib-timeout';

/**
 * A fault with its parameter, to fire now: `engine-error:<bit>` (0-23 or a name such as `GenMismatch`),
 * `slow:<factor>`, `lost-wakeup` or `lost-wakeup:qp|psm|ipoib`, or one of the other names alone.
 */
export type Fault =
  | Exclude<FaultName, 'engine-error' | 'slow' | 'lost-wakeup'>
  | `engine-error:${number | string}`
  | `slow:${number}`
  | 'lost-wakeup'
  | `lost-wakeup:${'qp' | 'psm' | 'ipoib'}`;

/** A fault at a virtual time: `NAME[:PARAM]@MS[:ENGINE]`, or `@MS[:PORT]` for the link and fabric faults. */
export type ScheduledFault = `${Fault}@${number}` | `${Fault}@${number}:${number}`;

/** The workloads the emulator runs (`captured`: a twin's, the traffic its capture shows). */
export type WorkloadName = 'mixed' | 'line-rate' | 'qp' | 'psm' | 'small' | 'ipoib' | 'idle' | 'captured';

/** A workload's parameters: `key=value`, several joined by commas (`size` is `LO-HI` bytes, `load` a fraction or `max`). */
export type WorkloadKey = 'load' | 'spread' | 'qps' | 'psms' | 'ipoib' | 'window' | 'size' | 'frag' | 'gbps';

/** A workload by name, with parameters: `mixed`, `mixed:gbps=10`, `qp:qps=4,load=0.5`. */
export type Workload = WorkloadName | `${WorkloadName}:${WorkloadKey}=${string}`;

/** A port's state and physical state as a seed gives them. */
export type { PhysStateName, PortStateName } from '../emu/ports.js';
/** The state a twin starts from (its `seed`): engines, waiters, ports and the conditions in force. */
export type { SeedCondition, SeedConditionFault, SeedEngine, SeedPort, SeedTx, SeedWaiter, UnitSeed } from '../emu/seed.js';
/** Who a seeded sender is: a QP's number, state and owner, a PSM writer's pid, an IPoIB queue. */
export type { SenderIdentity } from '../emu/sender.js';
/**
 * A capture's twin as a file holds it (`emu twin --emit-test` writes one): the unit and the state it starts from, what
 * was taken, assumed and left, the capture's verdict, and the run a test pinned. Hand one (parsed) to `from`.
 */
export type {
  EngineView,
  TwinFinding,
  TwinFixture,
  TwinFormat,
  TwinNotes,
  TwinObservation,
  TwinRun,
  TwinSource,
  TwinTraffic,
  TwinUnit,
} from '../twin/fixture.js';

/** The orders of sdma_check_progress the emulator runs: the kernel's, or the head_lock sample first. */
export type SubmitterOrder = 'kernel' | 'kernel-sample-first';

/** What the emulated host is: the options of the command line's emulator, by name. */
export interface EmulatorOptions {
  /** Seed of every random choice (default 1): the same seed and options give the same run. */
  seed?: number;
  /** Engines: how many (1-16, default 16 from `firstEngine`). */
  engines?: number;
  /** The first engine's absolute index (an hfi2 function's window, e.g. 8 with `engines: 8`; default 0). */
  firstEngine?: number;
  /** `wfr` (Omni-Path 100, the default) or `jkr` (CN5000). */
  chip?: ChipKind;
  /** `upstream` (default), `cornelis` or `hfi2` (the unit is then hfi2_0). */
  driver?: DriverBuild;
  /** Ports (1 or 2), and those whose link comes up (default: every port). */
  ports?: 1 | 2;
  activePorts?: readonly number[];
  /** The sdma_descq_cnt module parameter (a power of two from 64 to 32768; any other unsigned value means 2048). */
  descqCnt?: number;
  /** The workload (default `mixed`). */
  workload?: Workload;
  /** Virtual ms to run before the first sample (default 20, or 100 ms past the last fault). */
  atMs?: number;
  /** Faults at virtual times, e.g. `stop-fetch@1000:3`, `lost-wakeup:qp@50:1`, `link-down@500` (every port). */
  faults?: readonly ScheduledFault[];
  /** Stops the warm-up to `atMs` (a long one runs in steps that let the event loop through). */
  signal?: AbortSignal;
  /**
   * Start from a capture's instant instead of driver load: a snapshot's path (read at `fromInstant`, default its
   * last instant), a twin's .json path, or a twin as parsed from one (its pinned `run` gives the seed, workload,
   * faults, order and parameters unless given here). The unit, engines, ports and ring size are the capture's:
   * `engines`, `firstEngine`, `chip`, `driver`, `ports`, `activePorts` and `descqCnt` are refused beside it. The
   * workload defaults to `captured`, the traffic the capture shows (`idle`: none).
   */
  from?: string | TwinFixture;
  /** The instant of a snapshot `from` names (0 for the first). */
  fromInstant?: number;
  /** The order of sdma_check_progress (default `kernel`). */
  variant?: SubmitterOrder;
}

/** Counts of what the emulator did since it started. */
export interface EmulatorTotals {
  readonly descriptors: number;
  readonly txSubmitted: number;
  readonly txCompleted: number;
  readonly txAborted: number;
  readonly waitersAsleep: number;
  readonly lostWakeups: number;
  /** The invariants of the model that did not hold (none in a sound run). */
  readonly invariantViolations: readonly string[];
}

/** How `serve` keeps the tree. */
export interface ServeOptions {
  /** Stops serving (required: a served tree is kept until then). */
  signal: AbortSignal;
  /** Wall ms between rewrites of the tree (10-60000, default 100). */
  intervalMs?: number;
  /** Virtual ms per wall ms (0.001-1000, default 1). */
  speed?: number;
}

/** The emulated backend. Once closed, every method rejects with E_USAGE; `await using` closes it. */
export interface Emulator extends Backend, AsyncDisposable {
  readonly kind: 'emu';
  /** Always: its unit is the emulator's, not an adapter (as its UnitInfo says). */
  readonly emulated: true;
  /** The twin it started from (`from`), as it would be written to a file; null when it started from driver load. */
  readonly twin: TwinFixture | null;
  /** Its virtual time now (ms): 0 until first used, when it runs to `atMs` (any method but `injectFault` does). */
  readonly nowMs: number;
  /**
   * Let `ms` (finite, ≥ 0) of virtual time pass, in steps of bounded wall time that yield to the event loop.
   * `signal` stops it between steps, where it got to: the promise rejects with the signal's reason (an
   * AbortError DOMException when it has none).
   */
  advance(ms: number, opts?: { signal?: AbortSignal }): Promise<void>;
  /** Let `ms` (finite, ≥ 0) of virtual time pass at once, without yielding (what the monitor's rounds do). */
  advanceMs(ms: number): void;
  /**
   * Inject a fault: `NAME[:PARAM]@MS[:ENGINE|PORT]` as the option takes it, or `NAME[:PARAM]` to fire now on
   * `target` (an engine or, for link faults, a port; every engine or port when absent). A bad one is E_USAGE
   * naming the faults.
   */
  injectFault(fault: Fault, target?: number): void;
  injectFault(fault: ScheduledFault): void;
  /** Write its host once under `dir` (a new or empty directory, or one it wrote before), as `emu write` does. */
  writeSysroot(dir: string): Promise<void>;
  /** Keep its host live under `dir` until `signal` aborts, virtual time following wall time × `speed`. */
  serve(dir: string, opts: ServeOptions): Promise<void>;
  /** What it did so far. */
  totals(): EmulatorTotals;
}
