// hfi1-sdma as a library: open a backend (the live host, a sysroot or a snapshot, or the emulator), watch it
// with the monitor that every command and the exporter render, and the contract every backend keeps. The live
// backend only reads: the BAR is mapped read-only, nothing is written to a device, sysfs or debugfs.

export type {
  Backend,
  BackendKind,
  BackendOrigin,
  ChipKind,
  Clock,
  DriverBuild,
  EngineCounters,
  EngineCsrs,
  EngineSample,
  EngineSoftware,
  LinkState,
  PortLink,
  QpOwner,
  Recording,
  RingDescriptor,
  RingDump,
  SourceStatus,
  SourceWarning,
  Unit,
  UnitContext,
  UnitFlavour,
  UnitInfo,
  Waiter,
  WaiterIdentity,
  WaiterKind,
  WaiterSource,
  WaitersSample,
  WaiterVisibility,
  WaitFor,
} from '../backend.js';
export { type ErrorCode, EXIT_CODES, Hfi1SdmaError, isHfi1SdmaError, ParseError } from '../errors.js';
export { FINDING_KINDS, type FindingKind, type FindingKindName, type Severity } from '../monitor/codes.js';
export type { Finding } from '../monitor/findings.js';
export type { MonitorTracks } from '../monitor/monitor.js';
export type { EngineRound, EngineWaiters, Provenance, Round, UnitRound, UnitStatus, UnitWaitersRound } from '../monitor/round.js';
export type { Classification, Reason, Verdict } from '../progress/classify.js';
export type { WaiterJudgement, WaiterReason, WaiterVerdict } from '../progress/strand.js';
export type { Emulator, EmulatorOptions, EmulatorTotals } from './emulator.js';
export { type CreateMonitorOptions, createMonitor, type Hfi1Monitor, type MonitorRoundsOptions } from './monitor.js';
export { type OpenBackendOptions, openBackend } from './open.js';
