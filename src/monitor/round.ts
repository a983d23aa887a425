// What one round of the monitor yields: every selected unit with its engines judged, its waiters judged,
// every port's link, its warnings, and the findings of the round. Every command and the exporter render
// these and nothing else, so the same samples give the same verdicts on every path.
import type {
  EngineSample,
  PortCounters,
  PortLink,
  QpOwner,
  SourceWarning,
  Unit,
  UnitInfo,
  WaiterVisibility,
} from '../backend.js';
import type { Hfi1SdmaError } from '../errors.js';
import type { CauseJudgement } from '../progress/cause.js';
import type { Classification } from '../progress/classify.js';
import type { WaiterJudgement } from '../progress/strand.js';
import type { Finding } from './findings.js';

/**
 * A round's part as the monitor builds it, before the round is handed out: the same fields, writable. Whoever
 * receives a round reads it; nothing in it may be changed.
 */
export type Draft<T> = { -readonly [K in keyof T]: T[K] };

/** What the numbers of a round come from: a live host, the emulator, a recording; who captured it and when. */
export interface Provenance {
  /** `hw` (a live host or a sysroot), `emu` (the emulator in process) or `snapshot` (a recording played back). */
  readonly backend: 'hw' | 'emu' | 'snapshot';
  /** The numbers describe the emulator, not an adapter (in process, an emulated sysroot, or a capture of one). */
  readonly emulated: boolean;
  /** The host, where known (a snapshot's manifest; this host for a live read of `/`). */
  readonly host: string | null;
  /** A recording: the snapshot as named, when it started (epoch ms), its instants, the version that captured it. */
  readonly source: string | null;
  readonly capturedAtMs: number | null;
  readonly instants: number | null;
  readonly toolVersion: string | null;
}

/** The waiters of one engine, for the columns of engines and watch; null where no waiter can be seen. */
export interface EngineWaiters {
  readonly count: number;
  /** Certainly stranded (a QP or IPoIB queue on a running, empty, quiet engine, with the evidence). */
  readonly stranded: number;
  /** Probably stranded: the evidence does not reach (a sibling of the VL busy and short of room). */
  readonly probable: number;
  /** Whether a stranded verdict can be given yet (3 samples, a strandable kind visible). */
  readonly confirmable: boolean;
}

/** One engine of one round. */
export interface EngineRound {
  readonly sample: EngineSample;
  readonly verdict: Classification;
  readonly waiters: EngineWaiters | null;
  /** A stalled engine's cause class (host, fabric, link) from its ports' counters; null otherwise or when unknown. */
  readonly cause: CauseJudgement | null;
}

/** The waiters of one unit in one round, judged. */
export interface UnitWaitersRound {
  /** False when the unit cannot list its waiters (no waiters(), a failed or late read, a unit not read). */
  readonly listed: boolean;
  /** When they were read (ms, the backend's clock), or null when not listed. */
  readonly timeMs: number | null;
  readonly judgements: readonly WaiterJudgement[];
  /** One entry per kind: visible or not, and why. */
  readonly visibility: readonly WaiterVisibility[];
  /** Confirmed PSM stall episodes seen so far (of writers still waiting and gone). */
  readonly psmStalls: number;
  /** Enough samples were judged (3) for a stranded verdict to be possible. */
  readonly confirmable: boolean;
  /** Whose the QPs are that a finding names (stranded, orphaned, in ERR), where the unit can tell. */
  readonly owners: readonly QpOwner[];
}

/** How a unit fared this round. */
export type UnitStatus = 'up' | 'gone' | 'failed';

/** One unit of one round. */
export interface UnitRound {
  readonly unit: Unit;
  readonly info: UnitInfo;
  /** up: read; gone: registers read all-ones or the device vanished; failed: a read error or no answer in time. */
  readonly status: UnitStatus;
  /** Why it failed (failed only); the error keeps its code, so a command exits as a single-unit read would. */
  readonly error: Hfi1SdmaError | null;
  /** A one-line account of what went wrong (gone, failed), or null. */
  readonly problem: string | null;
  /** Every engine read (gone engines too); empty when the unit failed. */
  readonly engines: readonly EngineRound[];
  readonly waiters: UnitWaitersRound;
  /** Every port read, by port number; empty when no port could be read. */
  readonly ports: readonly PortLink[];
  /** Every port's counters read this round (XmitWait, data, link events, DmaWait); empty when none could be read. */
  readonly portCounters: readonly PortCounters[];
  /** The ports seen ACTIVE so far (this run, or in the state it carried): one not ACTIVE now went down. */
  readonly activeSeen: readonly number[];
  /** Every distinct source warning of the unit so far, and those first raised this round. */
  readonly warnings: readonly SourceWarning[];
  readonly newWarnings: readonly SourceWarning[];
}

/** One round of the monitor. */
export interface Round {
  /** 1 for the monitor's first round (rounds carried in a state file count on from there). */
  readonly index: number;
  /** The backend's time of the round (ms): the first sample's, or the recorded instant's. */
  readonly timeMs: number;
  readonly provenance: Provenance;
  readonly units: readonly UnitRound[];
  /** Units listed before and no longer (their device vanished), still said gone until they are back. */
  readonly vanished: readonly UnitInfo[];
  /** No unit at all was found (and none vanished). */
  readonly noUnit: boolean;
  /** Why listing the units failed this round, or null. */
  readonly listingProblem: string | null;
  /** What the round shows that deserves a line, worst first. */
  readonly findings: readonly Finding[];
}
