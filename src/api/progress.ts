// hfi1-sdma/progress: the pure core, usable with no backend at all: sdma_progress and the ring arithmetic as each
// driver build counts, descriptor decoding per chip, the engine state names, the engine classifier and the
// stranded-waiter rule. Nothing here reads a file, a clock or a device.
//
// Each function checks its arguments before the core sees them (the core itself trusts its callers, the
// emulator's and the monitor's inner loops): a ring size that is not one, a NaN counter or a driver that does not
// exist is E_USAGE naming the argument, where C's wrap-around arithmetic would have returned a number.
import type { EngineSample, WaitersSample } from '../backend.js';
import { usageError } from '../errors.js';
import type { ChipName } from '../progress/chip.js';
import type { Classification, ClassifyOptions, EngineTrack } from '../progress/classify.js';
import * as classifier from '../progress/classify.js';
import type { DescriptorFields } from '../progress/descriptor.js';
import * as descriptor from '../progress/descriptor.js';
import type { ChipDescriptor } from '../progress/descriptor-chip.js';
import * as chipDescriptor from '../progress/descriptor-chip.js';
import type { DriverName, SubmitPath } from '../progress/driver.js';
import * as driver from '../progress/driver.js';
import type { FitReport } from '../progress/ring.js';
import * as ring from '../progress/ring.js';
import type { ProgressOutcome, ProgressState } from '../progress/seq.js';
import * as progressSeq from '../progress/seq.js';
import type { StrandOptions, StrandTrack, WaiterJudgement } from '../progress/strand.js';
import * as strand from '../progress/strand.js';
import { checkNumber, checkOneOf, checkPeriodMs } from './check.js';
import { chipName, descCount, driverName, encoded, progressState, qword, ringArgs, ringSize, u32 } from './progress-args.js';

export type * from '../backend.js';
export type { ChipName } from '../progress/chip.js';
export { CHIP_NAMES } from '../progress/chip.js';
export type {
  Classification,
  ClassificationFigures,
  ClassifyOptions,
  EngineTrack,
  Reason,
  ReasonOf,
  Verdict,
  VerdictReason,
} from '../progress/classify.js';
export { DEFAULT_CLASSIFY_OPTIONS, REASONS, REASONS_BY_VERDICT, VERDICTS } from '../progress/classify.js';
export {
  MAX_DESC,
  MAX_WAITER_NEED,
  SDMA_DESCQ_CNT_DEFAULT,
  SDMA_DESCQ_CNT_MAX,
  SDMA_DESCQ_CNT_MIN,
  SDMA_WAIT_BATCH_SIZE,
  TXE_NUM_SDMA_ENGINES,
  VL_UNMAPPED,
} from '../progress/constants.js';
export type { EngErrBit } from '../progress/csr.js';
export type { DescriptorFields } from '../progress/descriptor.js';
export type { ChipDescriptor } from '../progress/descriptor-chip.js';
export type { DriverName, PathFit, SubmitPath } from '../progress/driver.js';
export { DRIVER_NAMES, isDriverName } from '../progress/driver.js';
export type { FitReport } from '../progress/ring.js';
export { isValidDescqCnt } from '../progress/ring.js';
export type { ProgressOutcome, ProgressReason, ProgressState } from '../progress/seq.js';
export type { EventName, StateName } from '../progress/state.js';
export { EVENT_NAMES, isOperational, isStateName, STATE_NAMES } from '../progress/state.js';
export type {
  SiblingEvidence,
  StrandOptions,
  StrandTrack,
  WaiterJudgement,
  WaiterReason,
  WaiterTrack,
  WaiterVerdict,
} from '../progress/strand.js';
export {
  DEFAULT_STRAND_MS,
  STRAND_SAMPLES,
  WAITER_REASONS,
  WAITER_REASONS_BY_VERDICT,
  WAITER_VERDICTS,
} from '../progress/strand.js';

// Ring arithmetic (sdma_descq_freecnt and friends, sdma.h).

/** The ring size the driver uses for an sdma_descq_cnt module parameter (sdma_get_descq_cnt, sdma.c). */
export function descqCntFromParam(param: number): number {
  checkNumber('descqCntFromParam', 'param', param, { min: 0, max: 0xffff_ffff, integer: true, what: 'a module parameter' });
  return ring.descqCntFromParam(param);
}

/** The ring slot of a free-running counter. */
export function slot(counter: number, descqCnt: number): number {
  u32('slot', 'counter', counter);
  return ring.slot(counter, ringSize('slot', descqCnt));
}

/** Descriptors written and not retired: descq_tail − descq_head in u32 arithmetic. */
export function inFlight(descqHead: number, descqTail: number): number {
  return ring.inFlight(u32('inFlight', 'descqHead', descqHead), u32('inFlight', 'descqTail', descqTail));
}

/** sdma_descq_freecnt (sdma.h): descq_cnt − (tail − head) − 1, as the kernel's u16. */
export function freeCount(descqCnt: number, descqHead: number, descqTail: number): number {
  ringArgs('freeCount', descqCnt, descqHead, descqTail);
  return ring.freeCount(descqCnt, descqHead, descqTail);
}

/** sdma_descq_inprocess (sdma.h) of upstream hfi1: descq_cnt − freecnt, in flight + 1. */
export function inProcess(descqCnt: number, descqHead: number, descqTail: number): number {
  ringArgs('inProcess', descqCnt, descqHead, descqTail);
  return ring.inProcess(descqCnt, descqHead, descqTail);
}

/** sdma_empty (sdma.h): tail equals head. */
export function isEmpty(descqHead: number, descqTail: number): boolean {
  return ring.isEmpty(u32('isEmpty', 'descqHead', descqHead), u32('isEmpty', 'descqTail', descqTail));
}

/** The largest free count a ring of this size shows: descq_cnt − 1. */
export function maxFree(descqCnt: number): number {
  return ring.maxFree(ringSize('maxFree', descqCnt));
}

/** The in-process count at which sdma_engine_progress_schedule (sdma.h) fires: descq_cnt / 8. */
export function scheduleThreshold(descqCnt: number): number {
  return ring.scheduleThreshold(ringSize('scheduleThreshold', descqCnt));
}

/** Whether sdma_engine_progress_schedule (sdma.h) would force a progress interrupt, upstream hfi1. */
export function progressScheduleFires(descqCnt: number, descqHead: number, descqTail: number): boolean {
  ringArgs('progressScheduleFires', descqCnt, descqHead, descqTail);
  return ring.progressScheduleFires(descqCnt, descqHead, descqTail);
}

/**
 * Would a request of `numDesc` descriptors be admitted now (sdma_send_txreq, sdma_send_txlist: sdma.c), as the
 * driver build counts: `fit` on explicit counters.
 */
export function fitReport(
  descqCnt: number,
  descqHead: number,
  descqTail: number,
  numDesc: number,
  driverBuild: DriverName = 'upstream',
  padSdmaDesc = 0,
  path: SubmitPath = 'txreq',
): FitReport {
  const where = 'fitReport';
  ringArgs(where, descqCnt, descqHead, descqTail);
  descCount(where, numDesc);
  driverName(where, driverBuild);
  checkNumber(where, 'padSdmaDesc', padSdmaDesc, { min: 0, max: 0xffff, integer: true, what: 'the pad_sdma_desc parameter' });
  checkOneOf(where, 'path', path, ['txreq', 'txlist'] as const);
  return ring.fitReport(descqCnt, descqHead, descqTail, numDesc, driverBuild, padSdmaDesc, path);
}

// The same per driver build (the Cornelis hfi1 and hfi2 count in-process differently, sdma.h).

/** sdma_descq_inprocess of the build. */
export function inProcessFor(driverBuild: DriverName, descqCnt: number, descqHead: number, descqTail: number): number {
  driverName('inProcessFor', driverBuild);
  ringArgs('inProcessFor', descqCnt, descqHead, descqTail);
  return driver.inProcessFor(driverBuild, descqCnt, descqHead, descqTail);
}

/** sdma_descq_freecnt of the build. */
export function freeCountFor(driverBuild: DriverName, descqCnt: number, descqHead: number, descqTail: number): number {
  driverName('freeCountFor', driverBuild);
  ringArgs('freeCountFor', descqCnt, descqHead, descqTail);
  return driver.freeCountFor(driverBuild, descqCnt, descqHead, descqTail);
}

/** Whether sdma_engine_progress_schedule of the build forces a progress interrupt. */
export function progressScheduleFiresFor(
  driverBuild: DriverName,
  descqCnt: number,
  descqHead: number,
  descqTail: number,
): boolean {
  driverName('progressScheduleFiresFor', driverBuild);
  ringArgs('progressScheduleFiresFor', descqCnt, descqHead, descqTail);
  return driver.progressScheduleFiresFor(driverBuild, descqCnt, descqHead, descqTail);
}

// Descriptors (the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h).

/** Decode a WFR descriptor given as two 64-bit qwords. */
export function decode(qw0: bigint, qw1: bigint): DescriptorFields {
  return descriptor.decode(qword('decode', 'qw0', qw0), qword('decode', 'qw1', qw1));
}

/** Encode a WFR descriptor as two qwords; a field out of its range is E_USAGE naming it. */
export function encode(f: DescriptorFields): { qw0: bigint; qw1: bigint } {
  return encoded('encode', () => descriptor.encode(f));
}

/** The debugfs flag string: four characters in the order I H F L, `-` where clear. */
export function flagString(f: Pick<DescriptorFields, 'intReq' | 'headToHost' | 'first' | 'last'>): string {
  return descriptor.flagString(f);
}

/** Decode a descriptor of `chip` given as two 64-bit qwords. */
export function decodeFor(chip: ChipName, qw0: bigint, qw1: bigint): ChipDescriptor {
  return chipDescriptor.decodeFor(chipName('decodeFor', chip), qword('decodeFor', 'qw0', qw0), qword('decodeFor', 'qw1', qw1));
}

/** Encode a descriptor of `chip` as two qwords; a field out of its range is E_USAGE naming it. */
export function encodeFor(chip: ChipName, f: ChipDescriptor): { qw0: bigint; qw1: bigint } {
  chipName('encodeFor', chip);
  return encoded('encodeFor', () => chipDescriptor.encodeFor(chip, f));
}

// The head-lock sequence and sdma_progress (sdma.h).

/** raw_seqcount_begin: the sequence with bit 0 cleared. */
export function sampleSeq(seq: number): number {
  return progressSeq.sampleSeq(u32('sampleSeq', 'seq', seq));
}

/** read_seqretry: the sequence moved since the sample. */
export function seqChanged(currentSeq: number, sampledSeq: number): boolean {
  return progressSeq.seqChanged(u32('seqChanged', 'currentSeq', currentSeq), u32('seqChanged', 'sampledSeq', sampledSeq));
}

/** sdma_progress (sdma.h): 1 when the sequence moved since `seqAtSleep` and `numDesc` fits now; 0 otherwise. */
export function sdmaProgress(state: ProgressState, seqAtSleep: number, numDesc: number): 0 | 1 {
  progressState('sdmaProgress', state);
  u32('sdmaProgress', 'seqAtSleep', seqAtSleep);
  descCount('sdmaProgress', numDesc);
  return progressSeq.sdmaProgress(state, seqAtSleep, numDesc);
}

/** sdma_progress with its reason and its desc_avail refresh spelled out. */
export function sdmaProgressOutcome(state: ProgressState, seqAtSleep: number, numDesc: number): ProgressOutcome {
  progressState('sdmaProgressOutcome', state);
  u32('sdmaProgressOutcome', 'seqAtSleep', seqAtSleep);
  descCount('sdmaProgressOutcome', numDesc);
  return progressSeq.sdmaProgressOutcome(state, seqAtSleep, numDesc);
}

// The judges: an engine's verdict, a waiter's.

/** A fresh track for classify(). */
export function newTrack(): EngineTrack {
  return classifier.newTrack();
}

/**
 * Classify one new sample of an engine, updating `track`: its verdict and reason, rates and stall counts. Samples of
 * one engine come in time order.
 */
export function classify(track: EngineTrack, sample: EngineSample, opts: ClassifyOptions): Classification {
  const where = 'classify';
  if (opts === null || typeof opts !== 'object') throw usageError(`${where}: opts must be { stallMs, recoveryMs, descqCnt }`);
  checkPeriodMs(where, 'opts.stallMs', opts.stallMs);
  checkPeriodMs(where, 'opts.recoveryMs', opts.recoveryMs);
  ringSize(where, opts.descqCnt);
  checkNumber(where, 'sample.timeMs', sample?.timeMs, { what: 'a time in ms' });
  return classifier.classify(track, sample, opts);
}

/** A fresh track for judgeWaiters(). */
export function newStrandTrack(): StrandTrack {
  return strand.newStrandTrack();
}

/** Judge every waiter of one new sample of a unit against the same round's engine samples, updating `track`. */
export function judgeWaiters(
  track: StrandTrack,
  sample: WaitersSample,
  engines: readonly EngineSample[],
  opts: StrandOptions,
): WaiterJudgement[] {
  const where = 'judgeWaiters';
  if (opts === null || typeof opts !== 'object') throw usageError(`${where}: opts must be { strandMs, descqCnt? }`);
  checkPeriodMs(where, 'opts.strandMs', opts.strandMs);
  if (opts.descqCnt !== undefined) ringSize(where, opts.descqCnt);
  checkNumber(where, 'sample.timeMs', sample?.timeMs, { what: 'a time in ms' });
  return strand.judgeWaiters(track, sample, engines, opts);
}
