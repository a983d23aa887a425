// The registers this program reads through the BAR (§f.2 per-engine CSRs, §f.3 device-wide), and
// the engine CSR sample built from them.
import type { EngineCsrs } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
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

const TXE_BASE = 0x1800000; // §f.1 TXE region
const SEND_DMA_ERR_STATUS = 0x1800060; // §f.3
const SEND_DMA_ERR_MASK = 0x1800068; // §f.3
const SEND_EGRESS_ERR_STATUS = 0x1800080; // §f.3
const SEND_EGRESS_SEND_DMA_STATUS = 0x1800e00; // §f.3, + 8 × engine

/**
 * The mapping: the TXE region up to the end of the SDMA CSR block (§f.1), and inside it only the
 * §f.3 registers and the per-engine block (§f.2, §f.7: the registers the driver itself dumps).
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

/** Map the SDMA registers of a device's resource0 read-only. */
export function openSdmaWindow(resource0: string): RegisterWindow {
  return openBarWindow(resource0, SDMA_WINDOW);
}

/** Per-engine register offset (§f.2: base + 0x100 × engine). */
export function engineReg(base: number, engine: number): number {
  return base + SDMA_ENGINE_STRIDE * engine;
}

/** SEND_DMA_ENGINES (§f.3); E_DEVICE_GONE when it reads all-ones (§f.1). */
export function readEngineCount(win: RegisterWindow, path: string): number {
  const v = win.read64(SEND_DMA_ENGINES);
  if (isAllOnes(v)) {
    throw new Hfi1SdmaError(
      'E_DEVICE_GONE',
      `${path}: registers read all-ones: the device is gone (fell off the bus or was reset)`,
    );
  }
  return Number(v & 0xffn);
}

/** The CSRs of one engine from the BAR (§f.2). head_dma is host memory: null here. */
export function readEngineCsrs(win: RegisterWindow, engine: number): EngineCsrs {
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
 * The ring size SEND_DMA_LEN_GEN says was programmed (§f.2: LENGTH at bit 6 written as
 * descq_cnt / 64), or null when the field is zero. Whether the register reads back as written
 * is UNSURE in the reference, so callers only compare.
 */
export function descqCntFromLenGen(lenGen: bigint): number | null {
  const length = Number((lenGen >> 6n) & 0x3ffn);
  return length === 0 ? null : length * 64;
}

/** A register read all-ones: the device is not answering (§f.1, §g.2). */
export function csrsGone(c: EngineCsrs): boolean {
  return isAllOnes(c.ctrl) && isAllOnes(c.status);
}
