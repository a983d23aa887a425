// Decoding of the per-engine CSRs an operator looks at: SEND_DMA_CTRL, SEND_DMA_STATUS and
// SEND_DMA_ENG_ERR_STATUS (SEND_DMA_* per-engine CSRs, chip_registers.h; SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h).

import { type ChipName, SEND_DMA_CTRL_SINGLE_DESCRIPTOR, SEND_DMA_CTRL_THRESHOLD_ENABLE } from './chip.js';
import {
  ALL_ONES_64,
  ENG_ERR_BITS,
  SDMA_ENG_ERR_HALT_BIT,
  SDMA_ENG_ERR_HALT_MASK,
  SEND_DMA_CTRL_CLEANUP,
  SEND_DMA_CTRL_ENABLE,
  SEND_DMA_CTRL_HALT,
  SEND_DMA_CTRL_INT_ENABLE,
  SEND_DMA_STATUS_ENG_CLEANED_UP_BIT,
  SEND_DMA_STATUS_ENG_HALTED_BIT,
} from './constants.js';

/** SEND_DMA_CTRL bits (SEND_DMA_* per-engine CSRs, chip_registers.h). */
export interface CtrlBits {
  enable: boolean;
  halt: boolean;
  cleanup: boolean;
  intEnable: boolean;
}

/** Decode SEND_DMA_CTRL (SEND_DMA_* per-engine CSRs, chip_registers.h). */
export function decodeCtrl(ctrl: bigint): CtrlBits {
  return {
    enable: (ctrl & SEND_DMA_CTRL_ENABLE) !== 0n,
    halt: (ctrl & SEND_DMA_CTRL_HALT) !== 0n,
    cleanup: (ctrl & SEND_DMA_CTRL_CLEANUP) !== 0n,
    intEnable: (ctrl & SEND_DMA_CTRL_INT_ENABLE) !== 0n,
  };
}

/**
 * The names of the set CTRL bits, e.g. ["ENABLE", "INT_ENABLE"]. On JKR bits 4 and 5 are named too
 * (THRESHOLD_ENABLE, SINGLE_DESCRIPTOR); on WFR (the default) only the four bits it defines are.
 */
export function ctrlNames(ctrl: bigint, chip: ChipName = 'wfr'): string[] {
  const b = decodeCtrl(ctrl);
  const names: string[] = [];
  if (b.enable) names.push('ENABLE');
  if (b.halt) names.push('HALT');
  if (b.cleanup) names.push('CLEANUP');
  if (b.intEnable) names.push('INT_ENABLE');
  if (chip === 'jkr') {
    if (ctrl & SEND_DMA_CTRL_THRESHOLD_ENABLE) names.push('THRESHOLD_ENABLE');
    if (ctrl & SEND_DMA_CTRL_SINGLE_DESCRIPTOR) names.push('SINGLE_DESCRIPTOR');
  }
  return names;
}

/** SEND_DMA_STATUS bits named in public sources (SEND_DMA_* per-engine CSRs, chip_registers.h); the rest are kept raw. */
export interface StatusBits {
  engHalted: boolean; // bit 56
  engCleanedUp: boolean; // bit 57
  /** Every other set bit, unnamed (UNSURE in the reference what they mean). */
  otherBits: number[];
}

/** SEND_DMA_STATUS bit 56, ENG_HALTED (SEND_DMA_* per-engine CSRs, chip_registers.h), without decoding the rest. */
export function isEngHalted(status: bigint): boolean {
  return ((status >> BigInt(SEND_DMA_STATUS_ENG_HALTED_BIT)) & 1n) === 1n;
}

/** Decode SEND_DMA_STATUS (SEND_DMA_* per-engine CSRs, chip_registers.h). */
export function decodeStatus(status: bigint): StatusBits {
  const otherBits: number[] = [];
  for (let bit = 0; bit < 64; bit++) {
    if (bit === SEND_DMA_STATUS_ENG_HALTED_BIT || bit === SEND_DMA_STATUS_ENG_CLEANED_UP_BIT) continue;
    if ((status >> BigInt(bit)) & 1n) otherBits.push(bit);
  }
  return {
    engHalted: ((status >> BigInt(SEND_DMA_STATUS_ENG_HALTED_BIT)) & 1n) === 1n,
    engCleanedUp: ((status >> BigInt(SEND_DMA_STATUS_ENG_CLEANED_UP_BIT)) & 1n) === 1n,
    otherBits,
  };
}

/** One set bit of SEND_DMA_ENG_ERR_STATUS (SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h). */
export interface EngErrBit {
  bit: number;
  name: string;
  halts: boolean;
}

/** Decode SEND_DMA_ENG_ERR_STATUS (SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h); bits above 23 are reported as `bit<N>` that do not halt. */
export function decodeEngErr(errStatus: bigint): EngErrBit[] {
  const out: EngErrBit[] = [];
  if (errStatus === 0n) return out;
  for (let bit = 0; bit < 64; bit++) {
    if (((errStatus >> BigInt(bit)) & 1n) === 0n) continue;
    const known = ENG_ERR_BITS[bit];
    out.push(known ? { ...known } : { bit, name: `bit${bit}`, halts: false });
  }
  return out;
}

/** Any halt-class bit set (SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h: mask 0x7FDFF → event e60). */
export function isHaltClassError(errStatus: bigint): boolean {
  return (errStatus & SDMA_ENG_ERR_HALT_MASK) !== 0n;
}

/** The driver logs an engine error (and dumps the ring) unless the halt bit is the only bit (SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h; __sdma_process_event, sdma.c). */
export function isLoggedError(errStatus: bigint): boolean {
  return errStatus !== 0n && errStatus !== 1n << BigInt(SDMA_ENG_ERR_HALT_BIT);
}

/** A register that reads all-ones: the device is gone (the BAR0 map, chip_registers.h; sdma_seqfile_dump_sde, sdma.c). */
export function isAllOnes(value: bigint): boolean {
  return value === ALL_ONES_64;
}

/** Look an error bit up by name (case-insensitive, with or without the `SDma` prefix and `Err` suffix). */
export function engErrBitByName(name: string): EngErrBit | undefined {
  const want = name.toLowerCase().replace(/^sdma/, '').replace(/err$/, '');
  return ENG_ERR_BITS.find((b) => b.name.toLowerCase().replace(/^sdma/, '').replace(/err$/, '') === want);
}
