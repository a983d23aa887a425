// One live (or sysroot) hfi1 unit: samples merged from every readable source, and the ring.
import { join } from 'node:path';
import type { Clock, EngineCounters, EngineCsrs, EngineSample, RingDump, SourceStatus, Unit, UnitInfo } from '../backend.js';
import { Hfi1SdmaError, isHfi1SdmaError } from '../errors.js';
import {
  COUNTER_DESC_FETCHED,
  COUNTER_ERR,
  COUNTER_IDLE_INT,
  COUNTER_PROGRESS_INT,
  COUNTER_SDMA_INT,
} from '../progress/constants.js';
import type { RegisterWindow } from './bar.js';
import type { FoundUnit } from './discover.js';
import { type HwFs, readdirOrNull, readSource } from './fsio.js';
import { type EngineReads, mergeSample } from './merge.js';
import {
  countersByName,
  engineCounters,
  hwCounterName,
  parseCounterNames,
  parseCounterValues,
  parseHwCounterValue,
} from './parse/counters.js';
import { parseInterrupts, vectorKey } from './parse/interrupts.js';
import { parseSdes, recordDescriptors, type SdesDump } from './parse/sdes.js';
import { parseCpuList, parseVl } from './parse/sysfs.js';
import { engineDir } from './paths.js';
import { openSdmaWindow, readEngineCount, readEngineCsrs } from './regs.js';
import { readable } from './sources.js';

/** Reads of a torn sdes before its error is reported. */
const SDES_ATTEMPTS = 3;

/** A unit of the live-host backend. */
export class HwUnit implements Unit {
  readonly info: UnitInfo;
  private window: RegisterWindow | null = null;

  constructor(
    private readonly found: FoundUnit,
    engines: number,
    sources: SourceStatus[],
    private readonly clock: Clock,
    private readonly fs: HwFs,
  ) {
    this.info = { unit: found.unit, name: found.name, pci: found.pci, engines, descqCnt: found.descqCnt, sources };
  }

  private has(name: Parameters<typeof readable>[1]): boolean {
    return readable(this.info.sources, name);
  }

  private checkEngine(engine: number): void {
    if (!Number.isInteger(engine) || engine < 0 || engine >= this.info.engines) {
      throw new Hfi1SdmaError(
        'E_NO_ENGINE',
        `${this.info.name} has engines 0 to ${this.info.engines - 1}; there is no engine ${engine}`,
      );
    }
  }

  /** Read and parse sdes, re-reading a torn file; the torn error only when a wanted engine is cut. */
  async readSdes(wanted: readonly number[]): Promise<SdesDump> {
    let dump: SdesDump | null = null;
    for (let i = 0; i < SDES_ATTEMPTS; i++) {
      const bytes = await readSource(this.fs, this.found.paths.sdes);
      dump = parseSdes(bytes, { file: this.found.paths.sdes, descqCnt: this.found.descqCnt });
      if (!dump.torn) return dump;
    }
    const d = dump as SdesDump;
    const have = d.records.length;
    if (wanted.some((e) => e >= have)) throw d.torn?.error;
    return d;
  }

  private windowOrNull(): RegisterWindow | null {
    if (!this.has('bar')) return null;
    this.window ??= openSdmaWindow(this.found.paths.resource0);
    return this.window;
  }

  private async readCounters(): Promise<{
    from: 'counters' | 'hwCounters';
    get: (e: number) => Promise<EngineCounters | null>;
  } | null> {
    if (this.has('counters')) {
      const p = this.found.paths;
      const names = parseCounterNames(Buffer.from(await readSource(this.fs, p.counterNames)).toString('utf8'), p.counterNames);
      const values = parseCounterValues(await readSource(this.fs, p.counters), names.length, p.counters);
      const byName = countersByName(names, values);
      return { from: 'counters', get: async (e) => engineCounters(byName, e) };
    }
    if (this.has('hwCounters')) {
      const dir = this.found.paths.hwCounters;
      const files = new Map(((await readdirOrNull(this.fs, dir)) ?? []).map((f) => [hwCounterName(f), f]));
      const one = async (name: string): Promise<bigint | undefined> => {
        const f = files.get(name);
        if (f === undefined) return undefined;
        const path = join(dir, f);
        return parseHwCounterValue(Buffer.from(await readSource(this.fs, path)).toString('utf8'), path);
      };
      return {
        from: 'hwCounters',
        get: async (e) => {
          const m = new Map<string, bigint>();
          for (const base of [COUNTER_DESC_FETCHED, COUNTER_SDMA_INT, COUNTER_IDLE_INT, COUNTER_PROGRESS_INT, COUNTER_ERR]) {
            const v = await one(`${base}${e}`);
            if (v !== undefined) m.set(`${base}${e}`, v);
          }
          return engineCounters(m, e);
        },
      };
    }
    return null;
  }

  private async readSysfs(engine: number): Promise<{ vl: number | null; cpuList: string | null }> {
    const dir = engineDir(this.found.paths, engine);
    const read = async (f: string) => Buffer.from(await readSource(this.fs, join(dir, f))).toString('utf8');
    // vl reads as an error when the engine serves no VL (§h.2).
    const vl = await read('vl').then(
      (t) => parseVl(t, join(dir, 'vl')),
      () => null,
    );
    const cpuList = await read('cpu_list').then(
      (t) => parseCpuList(t, join(dir, 'cpu_list')).text,
      () => null,
    );
    return { vl, cpuList };
  }

  private noSource(): Hfi1SdmaError {
    const needRoot = this.info.sources.some((s) => s.fix?.includes('root'));
    const why = this.info.sources.map((s) => `${s.source}: ${s.reason ?? 'readable'}`).join('; ');
    return new Hfi1SdmaError(
      needRoot ? 'E_PERMISSION' : 'E_UNAVAILABLE',
      `${this.info.name}: no source is readable (${why}); run 'hfi1-sdma doctor'`,
    );
  }

  async sample(engines?: readonly number[]): Promise<EngineSample[]> {
    const list = engines ?? Array.from({ length: this.info.engines }, (_, i) => i);
    for (const e of list) this.checkEngine(e);
    if (!this.info.sources.some((s) => s.readable)) throw this.noSource();
    const timeMs = this.clock.nowMs();
    const win = this.windowOrNull();
    let barGone = false;
    let csrs: (EngineCsrs | null)[] = list.map(() => null);
    if (win) {
      try {
        readEngineCount(win, this.found.paths.resource0);
        csrs = list.map((e) => readEngineCsrs(win, e));
      } catch (e) {
        if (!isHfi1SdmaError(e) || e.code !== 'E_DEVICE_GONE') throw e;
        barGone = true;
      }
    }
    const sdes = this.has('sdes') ? await this.readSdes(list) : null;
    const counters = await this.readCounters();
    const vectors = this.has('interrupts')
      ? parseInterrupts(
          Buffer.from(await readSource(this.fs, this.found.paths.interrupts)).toString('utf8'),
          this.found.paths.interrupts,
        )
      : null;
    const out: EngineSample[] = [];
    for (let i = 0; i < list.length; i++) {
      const engine = list[i] as number;
      const sys = this.has('sysfs') ? await this.readSysfs(engine) : { vl: null, cpuList: null };
      const reads: EngineReads = {
        unit: this.info.unit,
        engine,
        timeMs,
        sdes: sdes?.records[engine]?.header ?? null,
        bar: csrs[i] ?? null,
        barGone,
        counters: counters ? await counters.get(engine) : null,
        countersFrom: counters?.from ?? null,
        vectorCount: vectors?.get(vectorKey(this.info.unit, engine)) ?? null,
        vl: sys.vl,
        cpuList: sys.cpuList,
        sysfs: this.has('sysfs'),
      };
      out.push(mergeSample(reads));
    }
    return out;
  }

  async ring(engine: number): Promise<RingDump> {
    this.checkEngine(engine);
    const status = this.info.sources.find((s) => s.source === 'sdes');
    if (!status?.readable) {
      throw new Hfi1SdmaError(
        status?.fix?.includes('root') ? 'E_PERMISSION' : 'E_UNAVAILABLE',
        `${this.info.name}: the ring is shown only by debugfs sdes (§g.2), which is not readable here: ${status?.reason ?? 'unknown'}${status?.fix ? `; ${status.fix}` : ''}`,
      );
    }
    const dump = await this.readSdes([engine]);
    const rec = dump.records[engine];
    if (!rec) throw new Hfi1SdmaError('E_NO_ENGINE', `${this.found.paths.sdes} has no record for engine ${engine}`);
    return {
      unit: this.info.unit,
      engine,
      descqCnt: this.info.descqCnt,
      head: rec.header.swHead,
      tail: rec.header.swTail,
      descriptors: recordDescriptors(dump, rec),
    };
  }

  /** Release the BAR mapping. */
  close(): void {
    this.window?.close();
    this.window = null;
  }
}
