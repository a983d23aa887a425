// Hand-made engine samples for classifier and command tests.
import type { EngineSample } from '../../src/backend.js';

/** The knobs of a sample; everything else takes a healthy default. */
export interface SampleSpec {
  t: number;
  dh?: number;
  dt?: number;
  hwHead?: number;
  hwTail?: number;
  headDma?: number;
  state?: string | null;
  status?: bigint;
  err?: bigint;
  ctrl?: bigint;
  dqf?: number;
  txh?: number;
  txt?: number;
  fetched?: number;
  /** SDMAErrCt; gives the sample counters (fetched 0) when set alone. */
  errCount?: number;
  seq?: number;
  gone?: boolean;
  flne?: boolean;
  noSw?: boolean;
  noCsr?: boolean;
  engine?: number;
  descqCnt?: number;
}

/** Build an EngineSample; hardware head and tail default to the software ones' slots. */
export function mkSample(s: SampleSpec): EngineSample {
  const cnt = s.descqCnt ?? 2048;
  const dh = s.dh ?? 0;
  const dt = s.dt ?? dh;
  const mask = cnt - 1;
  const hwHead = s.hwHead ?? dh & mask;
  const hwTail = s.hwTail ?? dt & mask;
  return {
    unit: 0,
    engine: s.engine ?? 0,
    timeMs: s.t,
    sources: ['sdes', 'counters'],
    state: s.state === undefined ? 's99_Running' : s.state,
    cpu: 3,
    gone: s.gone ?? false,
    csr: s.noCsr
      ? null
      : {
          ctrl: s.ctrl ?? 0x9n,
          status: s.status ?? 0n,
          errStatus: s.err ?? 0n,
          hwTail: BigInt(hwTail),
          hwHead: BigInt(hwHead),
          headDma: BigInt(s.headDma ?? hwHead),
          memory: 0x1880000n,
          lenGen: 0x40800n,
          reloadCnt: 0xc9n,
          checkSlid: 0n,
          descFetchedCnt: null,
        },
    sw: s.noSw
      ? null
      : {
          descqTail: dt,
          descqHead: dh,
          swTail: dt & mask,
          swHead: dh & mask,
          txTail: s.txt ?? 0,
          txHead: s.txh ?? 0,
          lastStatus: 0n,
          ahgBits: 0xfffffffe00000000n,
          flushListNonEmpty: s.flne ?? false,
          descqFullCount: s.dqf ?? 0,
        },
    counters:
      s.fetched === undefined && s.errCount === undefined
        ? null
        : {
            descFetched: BigInt(s.fetched ?? 0),
            sdmaInt: 0n,
            idleInt: 0n,
            progressInt: 0n,
            errCount: BigInt(s.errCount ?? 0),
          },
    seq: s.seq ?? 0,
    seqSource: 'counters',
    vl: 0,
    cpuList: 'empty',
  };
}
