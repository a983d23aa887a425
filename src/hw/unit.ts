// One live (or sysroot) hfi1 or hfi2 unit: samples merged from every readable source, and the ring.
//
// One rule for a source that is present but cannot be used (malformed, not a regular file, larger
// than it can be): it is left out, with a warning naming the file (and line), when another
// readable source gives what it gives; when it is the last such source, the read fails with its
// own error (65 for malformed input). Registers: sdes, else the BAR. Counters and seq: debugfs
// counters, else hw_counters, else /proc/interrupts (seq only). VL and CPU list: sysfs only.
import type {
  Clock,
  EngineCsrs,
  EngineSample,
  LinkState,
  PortCounters,
  PortLink,
  QpOwner,
  RingDump,
  SourceStatus,
  SourceWarning,
  Unit,
  UnitContext,
  UnitFlavour,
  UnitInfo,
  WaitersSample,
} from '../backend.js';
import { Hfi1SdmaError, isHfi1SdmaError } from '../errors.js';
import { type ChipModel, chipModel } from '../progress/chip.js';
import type { RegisterWindow } from './bar.js';
import { portNumbers, readLinkState, readPortLinks } from './context.js';
import type { FoundUnit } from './discover.js';
import { formatEngineIds } from './engines.js';
import { type HwFs, readSource, sdesCapBytes } from './fsio.js';
import { type EngineReads, mergeSample } from './merge.js';
import { parseInterrupts, type SdmaVectorCounts, vectorKey } from './parse/interrupts.js';
import { parseSdes, recordDescriptors, type SdesDump, type SdesHeader } from './parse/sdes.js';
import { type CpuVlEngines, cpuListOfEngine, parseSdmaCpuList } from './parse/sdma-cpu-list.js';
import { engineDir } from './paths.js';
import { PortCounterReader } from './port-counters.js';
import { QpOwnerReader } from './qp-owners.js';
import { INTERRUPTS_CAP_BYTES } from './read-file.js';
import { openSdmaWindow, readEngineCount, readEngineCsrs } from './regs.js';
import { missingRecord, noteSdes } from './sdes-notes.js';
import { readable } from './sources.js';
import { type CountersByEngine, readDebugfsCounters, readEngineSysfs, readHwCounters } from './unit-reads.js';
import { UnitWaiters } from './waiters.js';
import type { PsmScanOptions } from './waiters-psm.js';
import { isSourceFault, WarningLog } from './warnings.js';

/** The sources that show waiters or ports, not engine samples (waiters.ts, port-counters.ts). */
const WAITER_SOURCES: readonly string[] = ['qpStats', 'procPsm', 'trace', 'portCounters', 'kmsg'];

/** debugfs sdma_cpu_list holds a line per CPU and port (a few hundred bytes each): read at most this much. */
const SDMA_CPU_LIST_CAP_BYTES = 4 << 20;

/** Reads of a torn sdes before its tear is reported. */
const SDES_ATTEMPTS = 3;

/** A unit of the live-host backend. */
export class HwUnit implements Unit {
  readonly info: UnitInfo;
  private window: RegisterWindow | null = null;
  private readonly log: WarningLog;
  private readonly waiting: UnitWaiters;
  private readonly owners: QpOwnerReader;
  private readonly chip: ChipModel;
  private readonly portReader: PortCounterReader;

  constructor(
    private readonly found: FoundUnit,
    engineIds: readonly number[],
    flavour: UnitFlavour,
    sources: SourceStatus[],
    private readonly clock: Clock,
    private readonly fs: HwFs,
    warnings: readonly SourceWarning[] = [],
    context?: UnitContext,
    psmScan: PsmScanOptions = {},
  ) {
    this.info = {
      unit: found.unit,
      name: found.name,
      pci: found.pci,
      engines: engineIds.length,
      engineIds: [...engineIds],
      flavour,
      descqCnt: found.descqCnt,
      sources,
    };
    if (context) this.info.context = context;
    this.chip = chipModel(flavour.chip);
    this.log = new WarningLog(warnings);
    this.waiting = new UnitWaiters(found, clock, fs, this.log, context?.kernelRelease ?? null, psmScan);
    this.portReader = new PortCounterReader(fs, found.paths, this.log, readable(sources, 'portCounters'));
    this.owners = new QpOwnerReader(found.name, found.paths.procDir, fs, clock);
  }

  /** Every port's counters now: debugfs port<N>counters, else ports/<N>/hw_counters, and ports/<N>/counters (read at most every second). */
  portCounters(): Promise<PortCounters[]> {
    return this.portReader.read(portNumbers(this.found.flavourInputs.ports), this.clock.nowMs());
  }

  /** Whose these QPs are: rdma's resource tracking on a live host, else qp_stats' PID checked in /proc. */
  qpOwners(qps: readonly { qpn: number; creatorPid: number | null }[]): Promise<QpOwner[]> {
    return this.owners.owners(qps);
  }

  /** The waiters now: QPs from qp_stats, PSM writers from /proc (root), sinceMs carried across calls. */
  waiters(): Promise<WaitersSample> {
    return this.waiting.read();
  }

  warnings(): readonly SourceWarning[] {
    return this.log.all();
  }

  /** The port's link now, from ports/1/state, phys_state and rate; null when none is there. */
  link(): Promise<LinkState | null> {
    return readLinkState(this.fs, this.found.paths, this.log);
  }

  /** Every port's link now, from ports/<p>/state, phys_state and rate of each port listed under the unit. */
  links(): Promise<PortLink[]> {
    return readPortLinks(this.fs, this.found.paths, this.found.flavourInputs.ports, this.log);
  }

  /** debugfs sdma_cpu_list (sdma_seqfile_dump_cpu_list, sdma.c), or null when it cannot be read or parsed. */
  private async readUserCpuMap(): Promise<CpuVlEngines[] | null> {
    const file = this.found.paths.sdmaCpuList;
    try {
      const bytes = await readSource(this.fs, file, SDMA_CPU_LIST_CAP_BYTES);
      return parseSdmaCpuList(Buffer.from(bytes).toString('latin1'), file);
    } catch (e) {
      // A fallback: absent (or gone with the device, which the other reads report) is simply no answer.
      if (!isHfi1SdmaError(e)) throw e;
      if (isSourceFault(e)) {
        this.log.leftOut('sysfs', file, 'sdma_cpu_list:unusable', e, 'the user CPU list of the engines is left out');
      }
      return null;
    }
  }

  private has(name: Parameters<typeof readable>[1]): boolean {
    return readable(this.info.sources, name);
  }

  private checkEngine(engine: number): void {
    if (!this.info.engineIds.includes(engine)) {
      throw new Hfi1SdmaError(
        'E_NO_ENGINE',
        `${this.info.name} has engines ${formatEngineIds(this.info.engineIds)}; there is no engine ${engine}`,
      );
    }
  }

  /** Read and parse sdes, re-reading a torn file a few times; a tear that stays is in `torn`. */
  async readSdes(headersOnly = false): Promise<SdesDump> {
    const file = this.found.paths.sdes;
    let dump: SdesDump | null = null;
    for (let i = 0; i < SDES_ATTEMPTS && (dump === null || dump.torn); i++) {
      const bytes = await readSource(this.fs, file, sdesCapBytes(this.found.descqCnt));
      dump = parseSdes(bytes, { file, descqCnt: this.found.descqCnt, headersOnly });
    }
    return dump as SdesDump;
  }

  /** The sdes header of each wanted engine; an engine without a usable record falls back or fails. */
  private async sdesHeaders(list: readonly number[], canFallBack: boolean): Promise<Map<number, SdesHeader>> {
    const file = this.found.paths.sdes;
    let dump: SdesDump;
    try {
      dump = await this.readSdes(true);
    } catch (e) {
      if (!canFallBack || !isSourceFault(e)) throw e;
      this.log.leftOut(
        'sdes',
        file,
        'sdes:unusable',
        e,
        'registers come from the BAR instead (no state, no software head and tail)',
      );
      return new Map();
    }
    noteSdes(this.log, file, dump);
    const out = new Map<number, SdesHeader>(dump.records.map((r) => [r.header.engine, r.header]));
    if (dump.torn?.header) out.set(dump.torn.header.engine, dump.torn.header);
    const missing = list.filter((e) => !out.has(e));
    if (missing.length > 0) {
      const err = missingRecord(file, dump, missing[0] as number);
      if (!canFallBack) throw err;
      const which = missing.length === 1 ? `engine ${missing[0]} comes` : `engines ${missing.join(', ')} come`;
      this.log.leftOut('sdes', file, `sdes:records:${missing.join(',')}`, err, `${which} from the BAR and the counters instead`);
    }
    return out;
  }

  private windowOrNull(): RegisterWindow | null {
    if (!this.has('bar')) return null;
    this.window ??= openSdmaWindow(this.found.paths.resource0, this.chip, this.found.paths.sysroot);
    return this.window;
  }

  /** The counters by the rule: debugfs, else hw_counters, else none (seq then from /proc/interrupts). */
  private async readCounters(
    list: readonly number[],
  ): Promise<{ from: 'counters' | 'hwCounters'; byEngine: CountersByEngine } | null> {
    const p = this.found.paths;
    if (this.has('counters')) {
      try {
        return { from: 'counters', byEngine: await readDebugfsCounters(this.fs, p, list) };
      } catch (e) {
        if (!isSourceFault(e) || !(this.has('hwCounters') || this.has('interrupts'))) throw e;
        this.log.leftOut(
          'counters',
          p.counters,
          'counters:unusable',
          e,
          'the counters come from hw_counters or /proc/interrupts instead',
        );
      }
    }
    if (this.has('hwCounters')) {
      try {
        return { from: 'hwCounters', byEngine: await readHwCounters(this.fs, p.hwCounters, list) };
      } catch (e) {
        if (!isSourceFault(e) || !this.has('interrupts')) throw e;
        this.log.leftOut('hwCounters', p.hwCounters, 'hwCounters:unusable', e, 'seq comes from /proc/interrupts instead');
      }
    }
    return null;
  }

  /** The engines' vector counts from /proc/interrupts, left out by the rule when counters stand in. */
  private async readVectors(haveCounters: boolean): Promise<SdmaVectorCounts | null> {
    if (!this.has('interrupts')) return null;
    const file = this.found.paths.interrupts;
    try {
      return parseInterrupts(Buffer.from(await readSource(this.fs, file, INTERRUPTS_CAP_BYTES)).toString('utf8'), file);
    } catch (e) {
      if (!haveCounters || !isSourceFault(e)) throw e;
      this.log.leftOut('interrupts', file, 'interrupts:unusable', e, 'seq comes from the counters');
      return null;
    }
  }

  /** The sources of engine samples (the waiter sources left out). */
  private sampleSources(): SourceStatus[] {
    return this.info.sources.filter((s) => !WAITER_SOURCES.includes(s.source));
  }

  private noSource(): Hfi1SdmaError {
    const needRoot = this.sampleSources().some((s) => s.fix?.includes('root'));
    const why = this.sampleSources()
      .map((s) => `${s.source}: ${s.reason ?? 'readable'}`)
      .join('; ');
    return new Hfi1SdmaError(
      needRoot ? 'E_PERMISSION' : 'E_UNAVAILABLE',
      `${this.info.name}: no source is readable (${why}); run 'hfi1-sdma doctor'`,
    );
  }

  /** The BAR registers of the engines, or gone; the file's size is checked first (no SIGBUS). */
  private readBar(list: readonly number[]): { csrs: (EngineCsrs | null)[]; gone: boolean } {
    const win = this.windowOrNull();
    if (!win) return { csrs: list.map(() => null), gone: false };
    try {
      win.check();
      readEngineCount(win, this.found.paths.resource0, this.chip);
      return { csrs: list.map((e) => readEngineCsrs(win, e, this.chip)), gone: false };
    } catch (e) {
      if (!isHfi1SdmaError(e) || e.code !== 'E_DEVICE_GONE') throw e;
      this.log.add({ source: 'bar', path: this.found.paths.resource0, key: 'bar:gone', message: e.message });
      return { csrs: list.map(() => null), gone: true };
    }
  }

  async sample(engines?: readonly number[]): Promise<EngineSample[]> {
    const list = engines ?? this.info.engineIds;
    for (const e of list) this.checkEngine(e);
    if (!this.sampleSources().some((s) => s.readable)) throw this.noSource();
    const timeMs = this.clock.nowMs();
    const bar = this.readBar(list);
    const headers = this.has('sdes') ? await this.sdesHeaders(list, this.has('bar')) : null;
    const counters = await this.readCounters(list);
    const vectors = await this.readVectors(counters !== null);
    const out: EngineSample[] = [];
    let userMap: CpuVlEngines[] | null | undefined;
    for (let i = 0; i < list.length; i++) {
      const engine = list[i] as number;
      const sys = this.has('sysfs')
        ? await readEngineSysfs(this.fs, engineDir(this.found.paths, engine), this.log)
        : { vl: null, cpuList: null };
      if (sys.cpuList === null && this.has('sdes')) {
        // No sdma<E>/cpu_list: the same map from debugfs sdma_cpu_list, read once a sample.
        if (userMap === undefined) userMap = await this.readUserCpuMap();
        if (userMap !== null) sys.cpuList = cpuListOfEngine(userMap, engine);
      }
      const reads: EngineReads = {
        unit: this.info.unit,
        engine,
        timeMs,
        sdes: headers?.get(engine) ?? null,
        bar: bar.csrs[i] ?? null,
        barGone: bar.gone,
        counters: counters?.byEngine.get(engine) ?? null,
        countersFrom: counters?.from ?? null,
        vectorCount: vectors?.get(vectorKey(this.info.unit, engine, this.info.flavour.module)) ?? null,
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
        `${this.info.name}: the ring is shown only by debugfs sdes, which is not readable here: ${status?.path ? `${status.path}: ` : ''}${status?.reason ?? 'unknown'}${status?.fix ? `; ${status.fix}` : ''}`,
      );
    }
    const file = this.found.paths.sdes;
    const dump = await this.readSdes();
    noteSdes(this.log, file, dump);
    const rec = dump.records.find((r) => r.header.engine === engine);
    if (!rec) throw missingRecord(file, dump, engine);
    return {
      unit: this.info.unit,
      engine,
      descqCnt: this.info.descqCnt,
      head: rec.header.swHead,
      tail: rec.header.swTail,
      descriptors: recordDescriptors(dump, rec, this.info.flavour.chip),
    };
  }

  /** Release the BAR mapping and the kernel log. */
  close(): void {
    this.window?.close();
    this.window = null;
    this.waiting.close();
  }
}
