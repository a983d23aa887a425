// hfi1-sdma/progress: the pure core, usable with no backend at all: sdma_progress and the ring arithmetic as each
// driver build counts, descriptor decoding per chip, the engine state names, the engine classifier and the
// stranded-waiter rule. Nothing here reads a file, a clock or a device.

export type { ChipName } from '../progress/chip.js';
export { CHIP_NAMES } from '../progress/chip.js';
export type { Classification, ClassifyOptions, EngineTrack, Reason, Verdict } from '../progress/classify.js';
export { classify, DEFAULT_CLASSIFY_OPTIONS, newTrack, REASONS, VERDICTS } from '../progress/classify.js';
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
export type { DescriptorFields } from '../progress/descriptor.js';
export { decode, encode, flagString } from '../progress/descriptor.js';
export type { ChipDescriptor } from '../progress/descriptor-chip.js';
export { decodeFor, encodeFor } from '../progress/descriptor-chip.js';
export type { DriverName } from '../progress/driver.js';
export { DRIVER_NAMES, freeCountFor, inProcessFor, isDriverName, progressScheduleFiresFor } from '../progress/driver.js';
export {
  descqCntFromParam,
  fitReport,
  freeCount,
  inFlight,
  inProcess,
  isEmpty,
  isValidDescqCnt,
  maxFree,
  progressScheduleFires,
  scheduleThreshold,
  slot,
} from '../progress/ring.js';
export type { ProgressOutcome, ProgressReason, ProgressState } from '../progress/seq.js';
export { sampleSeq, sdmaProgress, sdmaProgressOutcome, seqChanged } from '../progress/seq.js';
export type { EventName, StateName } from '../progress/state.js';
export { EVENT_NAMES, isOperational, isStateName, STATE_NAMES } from '../progress/state.js';
export type { StrandTrack, WaiterJudgement, WaiterReason, WaiterVerdict } from '../progress/strand.js';
export {
  DEFAULT_STRAND_MS,
  judgeWaiters,
  newStrandTrack,
  STRAND_SAMPLES,
  WAITER_REASONS,
  WAITER_VERDICTS,
} from '../progress/strand.js';
