// A scripted backend for command tests: each engine follows a function of virtual time, and
// time advances only through advanceMs (as the emulator's does).
import type { Backend, EngineSample, RingDump, Unit, UnitInfo } from '../../src/backend.js';
import { Hfi1SdmaError } from '../../src/errors.js';
import { mkSample, type SampleSpec } from './samples.js';

export type Script = (engine: number, tMs: number) => Omit<SampleSpec, 't' | 'engine'>;

/** A one-unit backend whose engines follow `script`; virtual time starts at 0. */
export class FakeBackend implements Backend {
  readonly kind = 'emu' as const;
  nowMs = 0;
  closed = 0;
  readonly info: UnitInfo;

  constructor(
    private readonly script: Script,
    engines = 4,
    descqCnt = 2048,
  ) {
    this.info = {
      unit: 0,
      name: 'hfi1_0',
      pci: '0000:05:00.0',
      engines,
      descqCnt,
      sources: [{ source: 'model', readable: true }],
    };
  }

  advanceMs(ms: number): void {
    this.nowMs += ms;
  }

  async units(): Promise<UnitInfo[]> {
    return [this.info];
  }

  async unit(n: number): Promise<Unit> {
    if (n !== 0) throw new Hfi1SdmaError('E_NO_DEVICE', `no unit hfi1_${n}`);
    const sample = async (engines?: readonly number[]): Promise<EngineSample[]> =>
      (engines ?? Array.from({ length: this.info.engines }, (_, i) => i)).map((e) =>
        mkSample({ ...this.script(e, this.nowMs), t: this.nowMs, engine: e, descqCnt: this.info.descqCnt }),
      );
    const ring = async (engine: number): Promise<RingDump> => {
      const [s] = await sample([engine]);
      const sw = s?.sw;
      const n = sw ? (sw.descqTail - sw.descqHead) >>> 0 : 0;
      return {
        unit: 0,
        engine,
        descqCnt: this.info.descqCnt,
        head: sw?.swHead ?? 0,
        tail: sw?.swTail ?? 0,
        descriptors: Array.from({ length: n }, (_, k) => ({
          slot: ((sw?.swHead ?? 0) + k) & (this.info.descqCnt - 1),
          flags: k % 2 === 0 ? '--F-' : '-H-L',
          addr: BigInt(0x1000 + k * 64),
          gen: 1,
          len: 64,
          ...(k % 2 === 0 ? { ahgIdx: 0, ahgMode: 0 } : {}),
        })),
      };
    };
    return { info: this.info, sample, ring };
  }

  async close(): Promise<void> {
    this.closed += 1;
  }
}
