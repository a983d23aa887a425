// Reading the model as the contract wants it: the per-engine CSRs at their offsets (SEND_DMA_*, chip_registers.h) (all-ones
// once the device is gone), EngineSamples and ring listings (sdma_seqfile_dump_sde, sdma.c).
import type { EngineSample, RingDescriptor, RingDump } from '../backend.js';
import {
  ALL_ONES_64,
  SDMA_ENGINE_STRIDE,
  SEND_DMA_BASE_ADDR,
  SEND_DMA_CHECK_OPCODE,
  SEND_DMA_CHECK_SLID,
  SEND_DMA_CTRL,
  SEND_DMA_DESC_CNT,
  SEND_DMA_DESC_FETCHED_CNT,
  SEND_DMA_ENG_ERR_MASK,
  SEND_DMA_ENG_ERR_STATUS,
  SEND_DMA_HEAD,
  SEND_DMA_HEAD_ADDR,
  SEND_DMA_LEN_GEN,
  SEND_DMA_MEMORY,
  SEND_DMA_PRIORITY_THLD,
  SEND_DMA_RELOAD_CNT,
  SEND_DMA_STATUS,
  SEND_DMA_STATUS_ENG_CLEANED_UP_BIT,
  SEND_DMA_STATUS_ENG_HALTED_BIT,
  SEND_DMA_TAIL,
} from '../progress/constants.js';
import { type DescriptorFields, decodeAt, emptyDescriptor, flagString } from '../progress/descriptor.js';
import type { Chip } from './chip.js';
import type { Engine } from './engine.js';
import { decodeSlot } from './ring-lines.js';
import type { EmuUnit } from './unit.js';

/** SEND_DMA_STATUS: the two bits public sources name (SEND_DMA_* per-engine CSRs, chip_registers.h), zero elsewhere. */
export function statusCsr(c: Chip): bigint {
  return (
    (c.halted ? 1n << BigInt(SEND_DMA_STATUS_ENG_HALTED_BIT) : 0n) |
    (c.cleanedUp ? 1n << BigInt(SEND_DMA_STATUS_ENG_CLEANED_UP_BIT) : 0n)
  );
}

/** Read one per-engine CSR by its base offset (SEND_DMA_* per-engine CSRs, chip_registers.h); all-ones when the device is gone. */
export function readCsr(c: Chip, gone: boolean, base: number): bigint {
  if (gone) return ALL_ONES_64;
  switch (base) {
    case SEND_DMA_CTRL:
      return BigInt(c.ctrl);
    case SEND_DMA_STATUS:
      return statusCsr(c);
    case SEND_DMA_BASE_ADDR:
      return BigInt(c.baseAddr);
    case SEND_DMA_LEN_GEN:
      return BigInt(c.lenGen);
    case SEND_DMA_TAIL:
      return BigInt(c.hwTail);
    case SEND_DMA_HEAD:
      return BigInt(c.hwHead);
    case SEND_DMA_HEAD_ADDR:
      return BigInt(c.headAddr);
    case SEND_DMA_RELOAD_CNT:
      return BigInt(c.reloadCnt);
    case SEND_DMA_DESC_CNT:
      return BigInt(c.descCnt);
    case SEND_DMA_DESC_FETCHED_CNT:
      return BigInt(c.descFetched);
    case SEND_DMA_ENG_ERR_STATUS:
      return BigInt(c.errStatus);
    case SEND_DMA_ENG_ERR_MASK:
      return ALL_ONES_64; // init_sdma_regs, sdma.c: written all-ones
    case SEND_DMA_CHECK_SLID:
      return BigInt(c.checkSlid);
    case SEND_DMA_CHECK_OPCODE:
      return 0n; // init_sdma_regs, sdma.c
    case SEND_DMA_MEMORY:
      return BigInt(c.memory);
    case SEND_DMA_PRIORITY_THLD:
      return BigInt(c.priorityThld);
    default:
      return 0n;
  }
}

/** Every per-engine CSR offset the model holds (SEND_DMA_* per-engine CSRs, chip_registers.h base offsets). */
export const CSR_OFFSETS = [
  SEND_DMA_CTRL,
  SEND_DMA_STATUS,
  SEND_DMA_BASE_ADDR,
  SEND_DMA_LEN_GEN,
  SEND_DMA_TAIL,
  SEND_DMA_HEAD,
  SEND_DMA_HEAD_ADDR,
  SEND_DMA_RELOAD_CNT,
  SEND_DMA_DESC_CNT,
  SEND_DMA_DESC_FETCHED_CNT,
  SEND_DMA_ENG_ERR_STATUS,
  SEND_DMA_ENG_ERR_MASK,
  SEND_DMA_CHECK_SLID,
  SEND_DMA_CHECK_OPCODE,
  SEND_DMA_MEMORY,
] as const;

/** Absolute BAR0 offset of a per-engine CSR (SEND_DMA_* per-engine CSRs, chip_registers.h: base + 0x100 × engine). */
export function csrOffset(base: number, engine: number): number {
  return base + SDMA_ENGINE_STRIDE * engine;
}

/**
 * One EngineSample with every field filled from the model. Once the device is gone the contract
 * holds: no state (so not running) and no registers (they read all-ones). `asKernelPrints`
 * instead gives what the driver's sdes shows then: its software state and the all-ones CSRs.
 */
export function sampleEngine(u: EmuUnit, e: Engine, asKernelPrints = false): EngineSample {
  const c = e.chip;
  const gone = u.host.gone;
  const r = (base: number) => readCsr(c, gone, base);
  const vl = u.vlMap.engineToVl[e.pos] ?? -1;
  const hideRegisters = gone && !asKernelPrints;
  return {
    unit: u.info.unit,
    engine: e.idx,
    timeMs: u.nowMs,
    sources: ['model'],
    state: hideRegisters ? null : e.state,
    cpu: e.cpu,
    csr: hideRegisters
      ? null
      : {
          ctrl: r(SEND_DMA_CTRL),
          status: r(SEND_DMA_STATUS),
          errStatus: r(SEND_DMA_ENG_ERR_STATUS),
          hwTail: r(SEND_DMA_TAIL),
          hwHead: r(SEND_DMA_HEAD),
          headDma: BigInt(c.headDma),
          memory: r(SEND_DMA_MEMORY),
          lenGen: r(SEND_DMA_LEN_GEN),
          reloadCnt: r(SEND_DMA_RELOAD_CNT),
          // sdma_seqfile_dump_sde (sdma.c) reads SEND_DMA_CHECK_SLID on WFR only and prints 0 on a JKR, which has none.
          checkSlid: u.host.cfg.jkr ? 0n : r(SEND_DMA_CHECK_SLID),
          descFetchedCnt: r(SEND_DMA_DESC_FETCHED_CNT),
        },
    sw: {
      descqTail: e.descqTail,
      descqHead: e.descqHead,
      swTail: e.descqTail & e.mask,
      swHead: e.descqHead & e.mask,
      txTail: e.txTail,
      txHead: e.txHead,
      lastStatus: BigInt(e.lastStatus),
      ahgBits: e.ahgBits,
      flushListNonEmpty: e.flushlist.length > 0,
      descqFullCount: e.descqFullCount,
    },
    counters: {
      descFetched: BigInt(c.descFetched),
      sdmaInt: BigInt(e.sdmaIntCnt),
      idleInt: BigInt(e.idleIntCnt),
      progressInt: BigInt(e.progressIntCnt),
      errCount: BigInt(e.errCnt),
    },
    seq: e.headSeq,
    seqSource: 'head-lock',
    vl: vl < 0 ? null : vl,
    // The emulated Cornelis hfi1 and hfi2 units map each engine's interrupt CPU for user processes (a choice:
    // sdma_cpu_list then shows their pidx lines); the upstream unit maps none, and no map keeps an engine the bulk
    // service took: sdma_set_cpu_to_sde_map refuses an engine without a VL (sdma_engine_get_vl, sdma.c).
    cpuList: u.host.cfg.flavour.driver === 'upstream' || u.bulkEngines.includes(e.idx) ? 'empty' : String(e.cpu),
    gone,
  };
}

/** The descriptor in ring slot `s` of the words `w` (JKR layout when `jkr`), decoded into the scratch `f`. */
export function descriptorAt(w: Uint32Array, s: number, f: DescriptorFields, jkr = false): RingDescriptor {
  if (jkr) decodeSlot(true, w, s, f);
  else decodeAt(w, s, f);
  const i = s * 4;
  const d: RingDescriptor = {
    slot: s,
    flags: flagString(f),
    addr: BigInt(f.addr),
    gen: f.gen,
    len: f.len,
    qw0: (BigInt(w[i + 1] ?? 0) << 32n) | BigInt(w[i] ?? 0),
    qw1: (BigInt(w[i + 3] ?? 0) << 32n) | BigInt(w[i + 2] ?? 0),
  };
  if (f.first) {
    d.ahgIdx = f.ahgIdx;
    d.ahgMode = f.ahgMode;
  }
  return d;
}

/** The descriptors from the software head slot up to the software tail slot (sdma_seqfile_dump_sde, sdma.c). */
export function ringDump(u: EmuUnit, e: Engine): RingDump {
  const head = e.descqHead & e.mask;
  const tail = e.descqTail & e.mask;
  const out: RingDescriptor[] = [];
  const f = emptyDescriptor();
  const jkr = u.host.cfg.jkr;
  for (let s = head; s !== tail; s = (s + 1) & e.mask) out.push(descriptorAt(e.descq, s, f, jkr));
  return { unit: u.info.unit, engine: e.idx, descqCnt: e.descqCnt, head, tail, descriptors: out };
}
