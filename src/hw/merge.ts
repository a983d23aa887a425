// Building an EngineSample from whatever sources were read (README, "The progress sequence").
import type { EngineCounters, EngineCsrs, EngineSample, EngineSoftware, SeqSource, SourceName } from '../backend.js';
import type { SdesHeader } from './parse/sdes.js';
import { csrsGone } from './regs.js';

/** seq on a live host: 2 × head-lock passes, as an unsigned 32-bit value. */
export function seqFromPasses(passes: bigint): number {
  return Number((passes * 2n) & 0xffff_ffffn);
}

/**
 * Passes through the head lock an engine's counters show: every interrupt-handler call bumps
 * exactly one of SDMAInt, SDMAIdInt and SDMAPrIntCn (sdma_engine_interrupt), and every engine
 * error interrupt bumps SDMAErrCt and also takes the head lock (sdma_engine_error).
 */
export function interruptPasses(c: EngineCounters): bigint {
  return c.sdmaInt + c.idleInt + c.progressInt + c.errCount;
}

/** The CSRs an sdes header prints (sdma_seqfile_dump_sde, sdma.c); DESC_FETCHED_CNT is not among them. */
export function csrsFromHeader(h: SdesHeader): EngineCsrs {
  return {
    ctrl: h.ctrl,
    status: h.status,
    errStatus: h.errStatus,
    hwTail: h.hwTail,
    hwHead: h.hwHead,
    headDma: h.headDma,
    memory: h.memory,
    lenGen: h.lenGen,
    reloadCnt: h.reloadCnt,
    checkSlid: h.checkSlid,
    descFetchedCnt: null,
  };
}

/** The software fields an sdes header prints (sdma_seqfile_dump_sde, sdma.c; struct sdma_engine, sdma.h). */
export function softwareFromHeader(h: SdesHeader): EngineSoftware {
  return {
    descqTail: h.descqTail,
    descqHead: h.descqHead,
    swTail: h.swTail,
    swHead: h.swHead,
    txTail: h.txTail,
    txHead: h.txHead,
    lastStatus: h.lastStatus,
    ahgBits: h.ahgBits,
    flushListNonEmpty: h.flushListNonEmpty,
    descqFullCount: h.descqFullCount,
  };
}

/** What was read for one engine. Absent parts are null. */
export interface EngineReads {
  unit: number;
  engine: number;
  timeMs: number;
  sdes: SdesHeader | null;
  bar: EngineCsrs | null;
  /** The BAR answered all-ones (E_DEVICE_GONE). */
  barGone: boolean;
  counters: EngineCounters | null;
  countersFrom: 'counters' | 'hwCounters' | null;
  vectorCount: number | null;
  vl: number | null;
  cpuList: string | null;
  sysfs: boolean;
}

/**
 * Merge the reads: sdes gives the header fields; without it the BAR gives the registers; with
 * both, the BAR adds DESC_FETCHED_CNT. seq comes from the counters, else the IRQ vector count.
 */
export function mergeSample(r: EngineReads): EngineSample {
  const sources: SourceName[] = [];
  let csr: EngineCsrs | null = null;
  if (r.sdes) {
    sources.push('sdes');
    csr = csrsFromHeader(r.sdes);
    if (r.bar) {
      csr.descFetchedCnt = r.bar.descFetchedCnt;
      sources.push('bar');
    }
  } else if (r.bar) {
    csr = r.bar;
    sources.push('bar');
  }
  let seq: number | null = null;
  let seqSource: SeqSource = 'none';
  if (r.counters && r.countersFrom) {
    sources.push(r.countersFrom);
    seq = seqFromPasses(interruptPasses(r.counters));
    seqSource = 'counters';
  }
  if (r.vectorCount !== null) {
    sources.push('interrupts');
    if (seq === null) {
      seq = (r.vectorCount * 2) % 0x1_0000_0000;
      seqSource = 'interrupts';
    }
  }
  if (r.sysfs) sources.push('sysfs');
  // A gone device reads all-ones: no register value and no state is real then (the software
  // fields of sdes are kernel memory and stay true).
  const gone = r.barGone || (csr !== null && csrsGone(csr));
  return {
    unit: r.unit,
    engine: r.engine,
    timeMs: r.timeMs,
    sources,
    state: gone ? null : (r.sdes?.state ?? null),
    cpu: r.sdes?.cpu ?? null,
    csr: gone ? null : csr,
    sw: r.sdes ? softwareFromHeader(r.sdes) : null,
    counters: r.counters,
    seq,
    seqSource,
    vl: r.vl,
    cpuList: r.cpuList,
    gone,
  };
}
