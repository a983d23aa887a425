// hfi1-sdma as a library: open a backend (the live host, a sysroot or a snapshot, or the emulator), watch it
// with the monitor that every command and the exporter render, and the contract every backend keeps. The live
// backend only reads: the BAR is mapped read-only, nothing is written to a device, sysfs or debugfs. Backends, units
// and rounds say whether they are the emulator's; the default never runs the emulator in a host's place.

export type * from '../backend.js';
export { type ErrorCode, EXIT_CODES, Hfi1SdmaError, isHfi1SdmaError, ParseError, type ParsePosition } from '../errors.js';
export {
  COUNTS,
  type CountName,
  FINDING_KINDS,
  type FindingCode,
  type FindingKind,
  type FindingKindName,
  type Severity,
} from '../monitor/codes.js';
export type { Finding, FindingHistory } from '../monitor/findings.js';
export type { MonitorTracks } from '../monitor/monitor.js';
export type { PortMark } from '../monitor/ports.js';
export type { EngineRound, EngineWaiters, Provenance, Round, UnitRound, UnitStatus, UnitWaitersRound } from '../monitor/round.js';
export { type CauseJudgement, STALL_CAUSES, type StallCause } from '../progress/cause.js';
export {
  type Classification,
  type ClassificationFigures,
  type EngineTrack,
  REASONS,
  REASONS_BY_VERDICT,
  type Reason,
  type ReasonOf,
  VERDICTS,
  type Verdict,
  type VerdictReason,
} from '../progress/classify.js';
export type { EngErrBit } from '../progress/csr.js';
export {
  type SiblingEvidence,
  type StrandTrack,
  WAITER_REASONS,
  WAITER_REASONS_BY_VERDICT,
  WAITER_VERDICTS,
  type WaiterJudgement,
  type WaiterReason,
  type WaiterTrack,
  type WaiterVerdict,
} from '../progress/strand.js';
export type * from './emulator-types.js';
export { type CreateMonitorOptions, createMonitor, type Hfi1Monitor, type MonitorRoundsOptions } from './monitor.js';
export { type OpenBackendOptions, type OpenedBackend, openBackend } from './open.js';
export { type CaptureSnapshotOptions, captureSnapshot, type SnapshotSummary } from './snapshot.js';
