// What a report shows, gathered from the monitor's rounds: per unit its identity, every engine's series over
// the instants (occupancy, head movement, state and verdict, DQF and error counts, waiters), its ports, its
// waiters judged at the end, its findings, and the kernel log placed on the same time axis. Types only.
import type { PortLink, QpOwner, SourceWarning, UnitInfo, WaiterVisibility } from '../backend.js';
import type { LogEvent, LogUnit } from '../kmsg/parse.js';
import type { Finding } from '../monitor/findings.js';
import type { Provenance, UnitStatus } from '../monitor/round.js';
import type { Reason, Verdict } from '../progress/classify.js';
import type { WaiterJudgement } from '../progress/strand.js';

/** One engine at one instant, as the monitor judged it. */
export interface EnginePoint {
  /** ms from the first round. */
  tMs: number;
  verdict: Verdict;
  reason: Reason;
  state: string | null;
  /** Descriptors in flight (the classifier's), null when unknown. */
  inFlight: number | null;
  /** Descriptors retired per second since the previous round (the classifier's), null on the first. */
  descPerSec: number | null;
  /** descq_full_count (DQF) as read, null when not readable. */
  descqFull: number | null;
  /** SDMAErrCt as the classifier tracks it, null when the counters are not readable. */
  errCount: number | null;
  /** Error bits set at this instant, by name (halting ones end with `!`). */
  errorBits: string[];
  /** Waiters on the engine (null where none can be seen), and how many of them are stranded (certain, probable). */
  waiters: number | null;
  stranded: number;
  probable: number;
}

/** One engine over the capture. */
export interface EngineSeries {
  engine: number;
  points: EnginePoint[];
}

/** A finding and the rounds it was seen in. */
export interface SeenFinding {
  finding: Finding;
  /** ms from the first round of the first and the last round that stated it. */
  firstMs: number;
  lastMs: number;
  /** Whether the last round still states it. */
  current: boolean;
}

/** A port's link at one instant. */
export interface PortPoint {
  tMs: number;
  link: PortLink;
}

/** A unit's status at one instant (up, gone, failed, or not listed). */
export interface StatusPoint {
  tMs: number;
  status: UnitStatus | 'vanished';
  problem: string | null;
}

/** The waiters of a unit as the last round that listed them judged them. */
export interface WaitersAtEnd {
  /** ms from the first round, or null when never listed. */
  tMs: number | null;
  /** When they were read, on the backend's clock (the ages are counted to it). */
  readMs: number | null;
  judgements: readonly WaiterJudgement[];
  /** Whose the waiting QPs are, where that could be found. */
  owners: readonly QpOwner[];
  visibility: readonly WaiterVisibility[];
  psmStalls: number;
  listed: boolean;
}

/** A kernel log event, placed on the capture's time axis where that is possible. */
export interface PlacedEvent {
  event: LogEvent;
  /** The kernel timestamp in seconds (dmesg's), null when the line has none. */
  kernelSec: number | null;
  /** ms from the first round, null when it cannot be placed. */
  tMs: number | null;
}

/** The kernel log of the capture. */
export interface ReportLog {
  /** Why there is no log, or null. */
  missing: string | null;
  /** Why its events cannot be placed on the time axis, or null when they are. */
  unplaced: string | null;
  /** Events of each unit, by unit name, in log order. */
  byUnit: Map<string, PlacedEvent[]>;
  /** The units the log itself names (which build printed a line). */
  units: LogUnit[];
  /** Lines read and events left out by the decoder's bounds. */
  linesRead: number;
  eventsDropped: number;
}

/** One unit over the capture. */
export interface UnitReport {
  /** The identity as the last round that read it gave it. */
  info: UnitInfo;
  status: StatusPoint[];
  engines: EngineSeries[];
  ports: Map<number, PortPoint[]>;
  waiters: WaitersAtEnd;
  /** Every finding seen, worst first: those the last round states, then the earlier ones. */
  findings: SeenFinding[];
  warnings: readonly SourceWarning[];
}

/** A whole report. */
export interface ReportData {
  provenance: Provenance;
  /** Where the numbers were read, as the report names it (the snapshot, the sysroot, the host, the emulator). */
  sourceLabel: string;
  /** The version of hfi1-sdma that renders the report. */
  toolVersion: string;
  /** When the report was rendered (epoch ms). */
  renderedAtMs: number;
  rounds: number;
  /** ms from the first round to the last. */
  spanMs: number;
  /** The instants' times, ms from the first round. */
  timesMs: number[];
  stallMs: number;
  strandMs: number;
  units: UnitReport[];
  /** Findings not tied to a unit (none today: kept so that none is ever dropped). */
  otherFindings: SeenFinding[];
  /** Listing problems said by the monitor (distinct, in order). */
  listingProblems: string[];
  log: ReportLog;
}
