// Building an EngineSample from whatever sources were read (DESIGN.md "The progress sequence").
import type { EngineCounters, EngineCsrs, EngineSample, EngineSoftware, SeqSource, SourceName } from '../backend.js';
import type { SdesHeader } from './parse/sdes.js';
import { csrsGone } from './regs.js';

/** seq on a live host: 2 × interrupt-handler passes, as an unsigned 32-bit value (DESIGN.md). */
export function seqFromPasses(passes: bigint): number {
  return Number((passes * 2n) & 0xffff_ffffn);
}

/** Interrupt-handler passes of an engine: SDMAInt + SDMAIdInt + SDMAPrIntCn (§a.2, §g.4). */
export function interruptPasses(c: EngineCounters): bigint {
  return c.sdmaInt + c.idleInt + c.progressInt;
}

/** The CSRs an sdes header prints (§g.2); DESC_FETCHED_CNT is not among them. */
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

/** The software fields an sdes header prints (§g.2, §a.2). */
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
  return {
    unit: r.unit,
    engine: r.engine,
    timeMs: r.timeMs,
    sources,
    state: r.sdes?.state ?? null,
    cpu: r.sdes?.cpu ?? null,
    csr,
    sw: r.sdes ? softwareFromHeader(r.sdes) : null,
    counters: r.counters,
    seq,
    seqSource,
    vl: r.vl,
    cpuList: r.cpuList,
    gone: r.barGone || (csr !== null && csrsGone(csr)),
  };
}
