// The two chips an hfi1/hfi2 driver runs: WFR (Intel Omni-Path 100, chip_registers.h) and JKR (Cornelis CN5000,
// chip_registers_jkr.h / chip_jkr.h). Pure data: the per-engine CSR map, the BAR0 size, the interrupt sources,
// the core clock and the CTRL bits that may be set while an engine runs. WFR values are those of constants.ts.
// SEND_DMA_STATUS bits 56 (halted) and 57 (cleaned up) and the ENG_ERR bits are the same on both chips; how JKR
// reads back its other STATUS and LEN_GEN bits is not public, so csr.ts keeps them raw on both (a choice).

import {
  ASIC_CCLOCK_PS,
  BAR0_SIZE,
  IS_SDMA_START,
  SDMA_ENGINE_STRIDE,
  SEND_DMA_CTRL,
  SEND_DMA_CTRL_ENABLE,
  SEND_DMA_CTRL_INT_ENABLE,
  SEND_DMA_ENGINES,
  SEND_DMA_MEM_SIZE,
  SEND_DMA_MEMORY,
  TXE_NUM_SDMA_ENGINES,
} from './constants.js';
import type { DriverName } from './driver.js';

/** The chips: `wfr` (Intel 8086:24f0/24f1) and `jkr` (Cornelis 434e:0001, CN5000). */
export const CHIP_NAMES = ['wfr', 'jkr'] as const;
export type ChipName = (typeof CHIP_NAMES)[number];

/** Per-engine CSR offsets inside an engine's block, the same on both chips (SEND_DMA_* per-engine CSRs). */
export const ENGINE_REG_OFFSETS = {
  ctrl: 0x0,
  status: 0x8,
  baseAddr: 0x10,
  lenGen: 0x18,
  tail: 0x20,
  head: 0x28,
  headAddr: 0x30,
  priorityThld: 0x38,
  idleCnt: 0x40,
  reloadCnt: 0x48,
  descCnt: 0x50,
  descFetchedCnt: 0x58,
  engErrStatus: 0x60,
  engErrMask: 0x68,
  engErrClear: 0x70,
} as const;
export type EngineReg = keyof typeof ENGINE_REG_OFFSETS;

/** The SEND_DMA_CHECK_* registers, inside the engine block on WFR only. */
export const CHECK_REG_OFFSETS = {
  checkEnable: 0x80,
  checkVl: 0x88,
  checkJobKey: 0x90,
  checkPartitionKey: 0x98,
  checkSlid: 0xa0,
  checkOpcode: 0xa8,
} as const;
export type CheckReg = keyof typeof CHECK_REG_OFFSETS;

/** SEND_DMA_CTRL bit 4, SDmaThresholdEnable (JKR; set by init_sdma_regs, sdma.c, when sdma_threshold ≠ 0). */
export const SEND_DMA_CTRL_THRESHOLD_ENABLE = 0x10n;
/** SEND_DMA_CTRL bit 5, SDmaSingleDescriptor (JKR; from the sdma_single_descriptor module parameter). */
export const SEND_DMA_CTRL_SINGLE_DESCRIPTOR = 0x20n;

/** Everything that differs between the chips for SDMA. */
export interface ChipModel {
  name: ChipName;
  /** BAR0 length in bytes (64 MiB WFR, 128 MiB JKR). */
  bar0Size: number;
  /** Offset of engine 0's block (SEND_DMA_CTRL of engine 0). */
  engineBase: number;
  /** Bytes between two engines' blocks (0x100 WFR, 0x2000 JKR). */
  engineStride: number;
  /** Engines the chip has (16 on both). */
  numEngines: number;
  /** Per-engine SDMA memory configuration: base and per-engine step (SEND_DMA_MEMORY in the block on WFR, SEND_DMA_CFG_MEMORY on JKR). */
  memoryBase: number;
  memoryStride: number;
  /** Whether the SEND_DMA_CHECK_* registers exist (WFR only; sdma_seqfile_dump_sde prints SLC 0 elsewhere). */
  hasCheckRegs: boolean;
  /** SEND_DMA_ENGINES and SEND_DMA_MEM_SIZE, device-wide. */
  sendDmaEngines: number;
  sendDmaMemSize: number;
  /** First interrupt source of each SDMA kind (IS_SDMAENG_ERR_START, IS_SDMA_START, IS_SDMA_PROGRESS_START, IS_SDMA_IDLE_START). */
  isEngErrStart: number;
  isSdmaStart: number;
  isProgressStart: number;
  isIdleStart: number;
  /** Core clock period in picoseconds (the idle-count conversion of init_sdma_regs, sdma.c). */
  cclockPs: number;
}

const WFR: ChipModel = Object.freeze({
  name: 'wfr',
  bar0Size: BAR0_SIZE,
  engineBase: SEND_DMA_CTRL,
  engineStride: SDMA_ENGINE_STRIDE,
  numEngines: TXE_NUM_SDMA_ENGINES,
  memoryBase: SEND_DMA_MEMORY,
  memoryStride: SDMA_ENGINE_STRIDE,
  hasCheckRegs: true,
  sendDmaEngines: SEND_DMA_ENGINES,
  sendDmaMemSize: SEND_DMA_MEM_SIZE,
  isEngErrStart: 16,
  isSdmaStart: IS_SDMA_START,
  isProgressStart: IS_SDMA_START + 16,
  isIdleStart: IS_SDMA_START + 32,
  cclockPs: ASIC_CCLOCK_PS,
});

// chip_registers_jkr.h (JKR_C_TXE_SDMA_STRIDE, SEND_DMA_CFG_MEMORY, SEND_DMA_ENGINES, SEND_DMA_MEM_SIZE),
// chip_jkr.h (JKR_BAR0_SIZE, the JKR IS ranges, the core-clock constant).
const JKR: ChipModel = Object.freeze({
  name: 'jkr',
  bar0Size: 0x8000000,
  engineBase: 0x1a00000,
  engineStride: 0x2000,
  numEngines: 16,
  memoryBase: 0x1b00b00,
  memoryStride: 8,
  hasCheckRegs: false,
  sendDmaEngines: 0x1b00018,
  sendDmaMemSize: 0x1b00028,
  isEngErrStart: 16,
  isSdmaStart: 272,
  isProgressStart: 288,
  isIdleStart: 304,
  cclockPs: 602,
});

/** JKR only: SEND_DMA_CFG_SI_IDX of engine e is at this base + 8·e (chip_registers_jkr.h). */
export const JKR_SEND_DMA_CFG_SI_IDX = 0x1b00c00;

const CHIPS: Readonly<Record<ChipName, ChipModel>> = { wfr: WFR, jkr: JKR };

/** The model of a chip by name. */
export function chipModel(name: ChipName): ChipModel {
  return CHIPS[name];
}

/** True when `s` names a chip (`wfr` or `jkr`). */
export function isChipName(s: unknown): s is ChipName {
  return s === 'wfr' || s === 'jkr';
}

/** Absolute BAR0 offset of a per-engine register of `engine` on `chip`. */
export function engineRegOffset(chip: ChipModel, reg: EngineReg, engine: number): number {
  return chip.engineBase + chip.engineStride * engine + ENGINE_REG_OFFSETS[reg];
}

/** Absolute BAR0 offset of a SEND_DMA_CHECK_* register, or null on a chip without them (JKR). */
export function checkRegOffset(chip: ChipModel, reg: CheckReg, engine: number): number | null {
  if (!chip.hasCheckRegs) return null;
  return chip.engineBase + chip.engineStride * engine + CHECK_REG_OFFSETS[reg];
}

/** Absolute BAR0 offset of the engine's SDMA memory configuration (SEND_DMA_MEMORY on WFR, SEND_DMA_CFG_MEMORY on JKR). */
export function memoryRegOffset(chip: ChipModel, engine: number): number {
  return chip.memoryBase + chip.memoryStride * engine;
}

/** The engine (and register) an absolute offset falls in, or null outside the engines' blocks or between registers. */
export function engineRegAt(chip: ChipModel, offset: number): { engine: number; reg: EngineReg } | null {
  const rel = offset - chip.engineBase;
  if (rel < 0 || rel >= chip.engineStride * chip.numEngines) return null;
  const engine = Math.floor(rel / chip.engineStride);
  const inner = rel - engine * chip.engineStride;
  for (const [reg, off] of Object.entries(ENGINE_REG_OFFSETS)) {
    if (off === inner) return { engine, reg: reg as EngineReg };
  }
  return null;
}

/** The byte range [start, end) every engine's per-engine registers occupy (for a size check of a BAR image). */
export function engineBlockRange(chip: ChipModel): { start: number; end: number } {
  return { start: chip.engineBase, end: chip.engineBase + chip.engineStride * chip.numEngines };
}

/**
 * Interrupt source numbers and CCE interrupt-register bit positions of engine e (the engine interrupt masks of
 * sdma.c, taken relative to IS_SDMA_START % 64): WFR register 3, bits e / 16+e / 32+e; JKR register 4, bits
 * 16+e / 32+e / 48+e. Engine errors are source 16+e (register 0) on both.
 */
export function interruptSources(chip: ChipModel, engine: number) {
  const sdma = chip.isSdmaStart + engine;
  const progress = chip.isProgressStart + engine;
  const idle = chip.isIdleStart + engine;
  return {
    engErr: chip.isEngErrStart + engine,
    sdma,
    progress,
    idle,
    /** The CCE_INT_STATUS register index holding the sdma/progress/idle sources. */
    reg: Math.floor(chip.isSdmaStart / 64),
    intMask: 1n << BigInt(sdma % 64),
    progressMask: 1n << BigInt(progress % 64),
    idleMask: 1n << BigInt(idle % 64),
  };
}

/** Picoseconds to core-clock cycles (init_sdma_regs, sdma.c: sdma_idle_cnt converted with the chip's clock). */
export function nsToCclocks(chip: ChipModel, ns: number): number {
  return Math.floor((ns * 1000) / chip.cclockPs);
}

/** Core-clock cycles to nanoseconds, rounded down. */
export function cclocksToNs(chip: ChipModel, cclocks: number): number {
  return Math.floor((cclocks * chip.cclockPs) / 1000);
}

/** The CTRL value of a healthy running engine, ENABLE | INT_ENABLE (0x9), as the s99 state writes it. */
export const RUNNING_CTRL = SEND_DMA_CTRL_ENABLE | SEND_DMA_CTRL_INT_ENABLE;

/**
 * The CTRL bits of a running engine that the driver build does not write (empty when the value is healthy).
 * Upstream: anything but 0x9. The Cornelis hfi1 and hfi2: 0x9 plus the threshold (bit 4) and single-descriptor
 * (bit 5) bits that sdma_sendctrl (sdma.c) ORs into every CTRL write on any chip (their automatic settings turn the
 * threshold on for a JKR chip in an AMD host only), so 0x19, 0x29 and 0x39 are healthy there.
 */
export function unexpectedRunningCtrl(driver: DriverName, ctrl: bigint): { missing: bigint; extra: bigint } {
  const optional = driver === 'upstream' ? 0n : SEND_DMA_CTRL_THRESHOLD_ENABLE | SEND_DMA_CTRL_SINGLE_DESCRIPTOR;
  const missing = RUNNING_CTRL & ~ctrl;
  const extra = ctrl & ~(RUNNING_CTRL | optional);
  return { missing, extra };
}

/** True when a running engine's CTRL is what the driver build writes. */
export function isHealthyRunningCtrl(driver: DriverName, ctrl: bigint): boolean {
  const u = unexpectedRunningCtrl(driver, ctrl);
  return u.missing === 0n && u.extra === 0n;
}
