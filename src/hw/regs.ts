// The registers this program reads through the BAR (SEND_DMA_* per-engine CSRs, chip_registers.h per-engine CSRs, SEND_DMA device registers, chip_registers.h device-wide), and
// the engine CSR sample built from them.

import { statfsSync } from 'node:fs';
import type { EngineCsrs } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import {
  type ChipModel,
  checkRegOffset,
  chipModel,
  type EngineReg,
  engineBlockRange,
  engineRegOffset,
  memoryRegOffset,
} from '../progress/chip.js';
import {
  SDMA_CSR_BLOCK_SIZE,
  SDMA_CSR_BLOCK_START,
  SDMA_ENGINE_STRIDE,
  SEND_DMA_CHECK_SLID,
  SEND_DMA_CTRL,
  SEND_DMA_DESC_FETCHED_CNT,
  SEND_DMA_ENG_ERR_STATUS,
  SEND_DMA_ENGINES,
  SEND_DMA_HEAD,
  SEND_DMA_LEN_GEN,
  SEND_DMA_MEM_SIZE,
  SEND_DMA_MEMORY,
  SEND_DMA_RELOAD_CNT,
  SEND_DMA_STATUS,
  SEND_DMA_TAIL,
} from '../progress/constants.js';
import { isAllOnes } from '../progress/csr.js';
import { openBarWindow, type RegisterWindow, type WindowSpec } from './bar.js';
import { openFileWindow } from './bar-file.js';
import { containmentOf } from './contain.js';

const WFR = chipModel('wfr');
const TXE_BASE = 0x1800000; // the BAR0 map, chip_registers.h TXE region
const SEND_DMA_ERR_STATUS = 0x1800060; // SEND_DMA device registers, chip_registers.h
const SEND_DMA_ERR_MASK = 0x1800068; // SEND_DMA device registers, chip_registers.h
const SEND_EGRESS_ERR_STATUS = 0x1800080; // SEND_DMA device registers, chip_registers.h
const SEND_EGRESS_SEND_DMA_STATUS = 0x1800e00; // SEND_DMA device registers, chip_registers.h; + 8 × engine

/**
 * The mapping: the TXE region up to the end of the SDMA CSR block (the BAR0 map, chip_registers.h), and inside it only the
 * SEND_DMA device registers, chip_registers.h registers and the per-engine block (SEND_DMA_* per-engine CSRs, chip_registers.h; pci_mmap_resource, drivers/pci: the registers the driver itself dumps).
 */
export const SDMA_WINDOW: WindowSpec = {
  start: TXE_BASE,
  length: SDMA_CSR_BLOCK_START + SDMA_CSR_BLOCK_SIZE - TXE_BASE,
  allowed: [
    [SDMA_CSR_BLOCK_START, SDMA_CSR_BLOCK_START + SDMA_CSR_BLOCK_SIZE],
    [SEND_DMA_ENGINES, SEND_DMA_ENGINES + 8],
    [SEND_DMA_MEM_SIZE, SEND_DMA_MEM_SIZE + 8],
    [SEND_DMA_ERR_STATUS, SEND_DMA_ERR_MASK + 8],
    [SEND_EGRESS_ERR_STATUS, SEND_EGRESS_ERR_STATUS + 8],
    [SEND_EGRESS_SEND_DMA_STATUS, SEND_EGRESS_SEND_DMA_STATUS + 8 * 16],
  ],
};

const PAGE = 4096;

/**
 * The window of a chip. WFR: SDMA_WINDOW. JKR (chip_registers_jkr.h): from the engines' blocks at 0x1A00000
 * (stride 0x2000) to the page holding SEND_DMA_CFG_MEMORY, allowing only each engine's registers, SEND_DMA_ENGINES,
 * SEND_DMA_MEM_SIZE and SEND_DMA_CFG_MEMORY of each engine. The JKR file must be the chip's whole 128 MiB BAR0.
 */
export function sdmaWindowFor(chip: ChipModel): WindowSpec {
  if (chip.name === 'wfr') return SDMA_WINDOW;
  const blocks = engineBlockRange(chip);
  const memoryEnd = memoryRegOffset(chip, chip.numEngines);
  const top = Math.max(blocks.end, memoryEnd, chip.sendDmaEngines + 8, chip.sendDmaMemSize + 8);
  const start = blocks.start - (blocks.start % PAGE);
  const end = Math.ceil(top / PAGE) * PAGE;
  return {
    start,
    length: end - start,
    minFileBytes: chip.bar0Size,
    allowed: [
      // Only the known registers of each engine's 0x2000 block: nothing else in it is read.
      ...Array.from({ length: chip.numEngines }, (_, e): [number, number] => [
        engineRegOffset(chip, 'ctrl', e),
        engineRegOffset(chip, 'engErrClear', e) + 8,
      ]),
      [chip.sendDmaEngines, chip.sendDmaEngines + 8],
      [chip.sendDmaMemSize, chip.sendDmaMemSize + 8],
      [memoryRegOffset(chip, 0), memoryEnd],
    ],
  };
}

/** statfs f_type of sysfs (the kernel's SYSFS_MAGIC). */
const SYSFS_MAGIC = 0x62656572;

/** True when `path` lies on sysfs: a PCI resource file, whose size the kernel fixes. */
function onSysfs(path: string): boolean {
  try {
    return statfsSync(path).type === SYSFS_MAGIC;
  } catch {
    return false;
  }
}

/**
 * A read-only window on `resource0`: under `/`, a PCI resource on sysfs is mapped (a resource file
 * cannot shrink under the mapping); anything else, a BAR image under a sysroot (an emulated host, an
 * unpacked snapshot, a tree bind-mounted over /sys), is read with pread, which needs no FFI and cannot
 * fault (SIGBUS) when the file shrinks; under a sysroot the path must resolve inside it (contain.ts).
 */
export function openRegisterWindow(resource0: string, spec: WindowSpec, sysroot = '/'): RegisterWindow {
  const within = containmentOf(sysroot);
  if (within === null && onSysfs(resource0)) return openBarWindow(resource0, spec);
  return openFileWindow(resource0, spec, within);
}

/** The SDMA registers of a device's resource0 (openRegisterWindow), laid out as the chip's (WFR by default). */
export function openSdmaWindow(resource0: string, chip: ChipModel = WFR, sysroot = '/'): RegisterWindow {
  return openRegisterWindow(resource0, sdmaWindowFor(chip), sysroot);
}

/** Per-engine register offset (SEND_DMA_* per-engine CSRs, chip_registers.h: base + 0x100 × engine). */
export function engineReg(base: number, engine: number): number {
  return base + SDMA_ENGINE_STRIDE * engine;
}

/** SEND_DMA_ENGINES of the chip (chip_registers.h, chip_registers_jkr.h); E_DEVICE_GONE when it reads all-ones. */
export function readEngineCount(win: RegisterWindow, path: string, chip: ChipModel = WFR): number {
  const v = win.read64(chip.sendDmaEngines);
  if (isAllOnes(v)) {
    throw new Hfi1SdmaError(
      'E_DEVICE_GONE',
      `${path}: registers read all-ones: the device is gone (fell off the bus or was reset)`,
    );
  }
  return Number(v & 0xffn);
}

/**
 * The CSRs of one engine (an absolute index) from the BAR, at the chip's offsets (chip.ts): JKR's engine blocks
 * are 0x2000 apart from 0x1A00000, its memory configuration is SEND_DMA_CFG_MEMORY, and it has no
 * SEND_DMA_CHECK_SLID (read as 0, as sdma_seqfile_dump_sde prints SLC on a chip without it). head_dma is host
 * memory: null here.
 */
export function readEngineCsrs(win: RegisterWindow, engine: number, chip: ChipModel = WFR): EngineCsrs {
  if (chip.name !== 'wfr') return readChipCsrs(win, engine, chip);
  const o = SDMA_ENGINE_STRIDE * engine;
  return {
    ctrl: win.read64(SEND_DMA_CTRL + o),
    status: win.read64(SEND_DMA_STATUS + o),
    errStatus: win.read64(SEND_DMA_ENG_ERR_STATUS + o),
    hwTail: win.read64(SEND_DMA_TAIL + o),
    hwHead: win.read64(SEND_DMA_HEAD + o),
    headDma: null,
    memory: win.read64(SEND_DMA_MEMORY + o),
    lenGen: win.read64(SEND_DMA_LEN_GEN + o),
    reloadCnt: win.read64(SEND_DMA_RELOAD_CNT + o),
    checkSlid: win.read64(SEND_DMA_CHECK_SLID + o),
    descFetchedCnt: win.read64(SEND_DMA_DESC_FETCHED_CNT + o),
  };
}

function readChipCsrs(win: RegisterWindow, engine: number, chip: ChipModel): EngineCsrs {
  const at = (reg: EngineReg) => win.read64(engineRegOffset(chip, reg, engine));
  const slid = checkRegOffset(chip, 'checkSlid', engine);
  return {
    ctrl: at('ctrl'),
    status: at('status'),
    errStatus: at('engErrStatus'),
    hwTail: at('tail'),
    hwHead: at('head'),
    headDma: null,
    memory: win.read64(memoryRegOffset(chip, engine)),
    lenGen: at('lenGen'),
    reloadCnt: at('reloadCnt'),
    checkSlid: slid === null ? 0n : win.read64(slid),
    descFetchedCnt: at('descFetchedCnt'),
  };
}

/** The registers readEngineCsrs loads, as offsets from the engine's base (for benchmarks). */
export const ENGINE_CSR_OFFSETS: readonly number[] = [
  SEND_DMA_CTRL,
  SEND_DMA_STATUS,
  SEND_DMA_ENG_ERR_STATUS,
  SEND_DMA_TAIL,
  SEND_DMA_HEAD,
  SEND_DMA_MEMORY,
  SEND_DMA_LEN_GEN,
  SEND_DMA_RELOAD_CNT,
  SEND_DMA_CHECK_SLID,
  SEND_DMA_DESC_FETCHED_CNT,
];

/**
 * The ring size SEND_DMA_LEN_GEN says was programmed (SEND_DMA_* per-engine CSRs, chip_registers.h: LENGTH at bit 6 written as
 * descq_cnt / 64), or null when the field is zero. Whether the register reads back as written
 * is UNSURE in the reference, so callers only compare.
 */
export function descqCntFromLenGen(lenGen: bigint): number | null {
  const length = Number((lenGen >> 6n) & 0x3ffn);
  return length === 0 ? null : length * 64;
}

/** A register read all-ones: the device is not answering (the BAR0 map, chip_registers.h; sdma_seqfile_dump_sde, sdma.c). */
export function csrsGone(c: EngineCsrs): boolean {
  return isAllOnes(c.ctrl) && isAllOnes(c.status);
}
