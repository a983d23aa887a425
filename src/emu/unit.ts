// EmuUnit: one emulated hfi1 unit — engines, chips, senders and faults on one virtual clock —
// implementing the contract's Unit and adding the emulator's controls.
import type {
  ChipKind,
  DriverBuild,
  EngineSample,
  LinkState,
  PortCounters,
  PortLink,
  QpOwner,
  RingDump,
  Unit,
  UnitInfo,
  WaitersSample,
} from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import { SEND_DMA_MEM_SIZE_OBSERVED } from '../progress/constants.js';
import type { DriverSettings } from '../progress/driver.js';
import { descqCntFromParam } from '../progress/ring.js';
import { buildVlMap, selectEngineVl, type VlMap } from '../progress/select.js';
import type { TxReq } from '../progress/txreq.js';
import { Chip } from './chip.js';
import { EMU_CAP_MASK, emuContext, portRate } from './context.js';
import { dispatch } from './dispatch.js';
import { Engine } from './engine.js';
import { FastForward, type SkipTotals } from './fast-forward.js';
import { type FaultSpec, parseFault } from './faults.js';
import { type EmuFlavour, extraCtrlBits, resolveFlavour, unitFlavour, windowText } from './flavour.js';
import { type ChipConfig, EmuStats, Ev, type Host, kernelLogLine, kernelLogRaw } from './host.js';
import type { IoWait } from './iowait.js';
import { assignTransmitPorts } from './link.js';
import { EventLog, type LogKindName, type LogRecord, type LogRetention } from './log.js';
import { checkLostWakeup } from './lost-wakeup.js';
import { checkIpoibTimeout, startNetdevWatchdog } from './netdev.js';
import { bulkService, CAP_SDMA, checkParamsForBuild, emuSettings, parseParams } from './params.js';
import { modelPortCounters } from './port-files.js';
import { makePorts, portLink, shownPort } from './ports.js';
import { Sfc32 } from './prng.js';
import { modelQpOwners } from './qp-owners.js';
import { ringDump, sampleEngine } from './sample.js';
import { Scheduler } from './scheduler.js';
import { seedUnit, type UnitSeed } from './seed.js';
import { Sender } from './sender.js';
import { EBUSY, ECOMM, EINVAL, EmuTx, type TxOwner, TxPhase } from './tx.js';
import { modelWaiters } from './waiters.js';
import { DEFAULT_WORKLOAD, parseWorkload, type Workload } from './workload.js';

/** How to build a unit. Everything has a default; the seed fixes every random choice. */
export interface EmuUnitOptions {
  seed?: number;
  /** How many engines the unit owns (default: every engine from firstEngine to 15). */
  engines?: number;
  /** The absolute index of the unit's first engine (a window firstEngine..firstEngine+engines−1; default 0). */
  firstEngine?: number;
  /** The chip: wfr (default) or jkr. */
  chip?: ChipKind;
  /** The driver build: upstream (default), cornelis or hfi2 (the unit is then hfi2_N). */
  driver?: DriverBuild;
  /** Ports of the adapter: 1 (default) or 2 (JKR only). */
  ports?: number;
  /** The ports in use (`--active-ports`; default every port): the others stay DOWN and Disabled. */
  activePorts?: readonly number[];
  /** The host is AMD (cornelis/hfi2 automatic settings on JKR; default true on JKR, false on WFR). */
  amdHost?: boolean;
  /** pad_sdma_desc / sdma_align / sdma_threshold replacing the automatic values (cornelis/hfi2). */
  driverSettings?: Partial<DriverSettings>;
  /** The sdma_single_descriptor module parameter (cornelis/hfi2). */
  singleDescriptor?: boolean;
  /** The sdma_descq_cnt module parameter (sdma_get_descq_cnt, sdma.c rule applied). */
  descqCnt?: number;
  workload?: string;
  faults?: readonly (string | FaultSpec)[];
  unit?: number;
  pci?: string;
  idleCntNs?: number;
  desctIntr?: number;
  capMask?: number;
  numVls?: number;
  portActiveMs?: number;
  /** Timing of the chip model. */
  chipTiming?: Partial<ChipConfig>;
  /** Which event-log records are kept in memory, read back by events() (all are hashed): `rare` (the default) or `all` (LogRetention, log.ts). */
  retainLog?: LogRetention;
  /**
   * `fast` (the default): periodic stretches of each engine are skipped in closed form (fast-forward.ts); `stepped`:
   * every event is stepped, the oracle the fast model is checked against. Both give the same state at every instant.
   */
  model?: EmuModel;
  /** Module parameters as `NAME=VALUE` (`--param`): use_bulksvc and the bulksvc_* ones (cornelis), num_vls, cap_mask (params.ts). */
  params?: readonly string[];
  /**
   * Start from this state instead of driver load (seed.ts): the engines, rings, waiters, ports and conditions of an
   * instant of a host. The flavour options must be the host's; the workload's senders run beside the seed's.
   */
  from?: UnitSeed;
  /**
   * The order of sdma_check_progress: `kernel` (default: the free count, then the head_lock sample) or
   * `kernel-sample-first` (the sample first, then the free count: the order `emu race` calls so).
   */
  variant?: EmuVariant;
}

/** The submitter orders the model runs (EmuUnitOptions.variant). */
export type EmuVariant = 'kernel' | 'kernel-sample-first';

/** Which model runs a unit (EmuUnitOptions.model). */
export type EmuModel = 'fast' | 'stepped';

/** Totals of a run (`emu run --json`, docs/json.md). */
export interface EmuTotals {
  virtualMs: number;
  descriptors: number;
  txSubmitted: number;
  txCompleted: number;
  txAborted: number;
  txInFlight: number;
  waitersAsleep: number;
  lostWakeups: number;
  /** Txreqs IPoIB queues dropped after `netdev-unregister` (hfi1_ipoib_sdma_sleep, ipoib_tx.c: -EINVAL); never on the ring. */
  ipoibDropped: number;
}

/** The emulated unit. */
export class EmuUnit implements Unit {
  readonly info: UnitInfo;
  readonly host: Host;
  readonly engines: Engine[] = [];
  readonly chips: Chip[] = [];
  readonly senders: Sender[] = [];
  readonly faults: FaultSpec[] = [];
  readonly vlMap: VlMap;
  readonly workload: Workload;
  readonly seed: number;
  /** Per-bit engine-error counts summed over engines (the debugfs counters, debugfs.c). */
  readonly errBitCounts = new Array<number>(24).fill(0);
  /** Per-engine interrupt vector counts (/proc/interrupts): handler calls. */
  readonly vectorCounts: number[];
  /** The chip, driver build, ports and engine window (flavour.ts). */
  readonly flavour: EmuFlavour;
  /** The engines the bulk service owns (absolute; empty when it is off): no SDMA sender uses them. */
  readonly bulkEngines: readonly number[];
  /** The module parameters given (`--param`), resolved (params.ts). */
  readonly params: ReturnType<typeof parseParams>;
  /** Engines by absolute index (holes outside the window). */
  private readonly byIdx: (Engine | undefined)[];
  private readonly direct: TxOwner;
  /** The fast model (null: stepped). */
  private readonly fast: FastForward | null;
  /** What the scheduler calls for each event. */
  private readonly dispatcher: () => void;
  /** The model this unit runs. */
  readonly model: EmuModel;

  constructor(opts: EmuUnitOptions = {}) {
    const flavour = resolveFlavour({
      chip: opts.chip,
      driver: opts.driver,
      ports: opts.ports,
      activePorts: opts.activePorts,
      firstEngine: opts.firstEngine,
      engines: opts.engines,
      amdHost: opts.amdHost,
      settings: opts.driverSettings,
      singleDescriptor: opts.singleDescriptor,
    });
    this.flavour = flavour;
    const engines = flavour.count;
    const first = flavour.firstEngine;
    const param = opts.descqCnt ?? 2048;
    const descqCnt = descqCntFromParam(param);
    const given = opts.params ?? [];
    const params = parseParams(given);
    checkParamsForBuild(params, flavour.driver, given);
    const numVls = Math.min(params.numVls ?? opts.numVls ?? 8, engines);
    // The bulk service takes the window's last engines; SDMA keeps the rest and maps its VLs over them (params.ts).
    const bulk = bulkService(params, {
      chip: flavour.chip.name,
      first: flavour.firstEngine,
      count: engines,
      numVls: params.numVls ?? opts.numVls ?? 8,
      ports: flavour.ports,
      unit: opts.unit ?? 0,
    });
    const bulkEngines = bulk.engines;
    const sdmaEngines = engines - bulkEngines.length;
    this.vlMap = buildVlMap(sdmaEngines, numVls);
    this.seed = (opts.seed ?? 1) >>> 0;
    const rng = new Sfc32(this.seed);
    const unit = opts.unit ?? 0;
    const pci = opts.pci ?? '0000:05:00.0';
    const capMask = params.capMask ?? opts.capMask ?? EMU_CAP_MASK;
    const wl = parseWorkload(opts.workload ?? DEFAULT_WORKLOAD, sdmaEngines, this.vlMap, numVls, engines);
    // SDMA off in cap_mask: the driver sends nothing through an engine (the senders go by PIO, not modelled).
    if ((capMask & CAP_SDMA) === 0) wl.senders.length = 0;
    this.workload = wl;
    this.bulkEngines = bulkEngines;
    const chip: ChipConfig = {
      descPerSec: wl.descPerSec,
      bytesPerSec: (wl.gbps * 1e9) / 8 / engines,
      irqLatencyNs: 1500,
      haltLatencyNs: 1000,
      cleanUpLatencyNs: 5000,
      maxBatch: 64,
      ...opts.chipTiming,
    };
    this.host = {
      sched: new Scheduler(),
      log: new EventLog(opts.retainLog),
      rng,
      cfg: {
        engines,
        descqCntParam: param,
        descqCnt,
        idleCntNs: opts.idleCntNs ?? 250,
        desctIntr: opts.desctIntr || 64,
        numVls,
        capMask,
        portActiveNs: (opts.portActiveMs ?? 1) * 1e6,
        cpus: Math.max(16, engines),
        chip,
        flavour,
        jkr: flavour.chip.name === 'jkr',
        extraCtrl: extraCtrlBits(flavour),
        sampleFirst: opts.variant === 'kernel-sample-first',
      },
      stats: new EmuStats(),
      gone: false,
      netdevRegistered: true,
      bulkService: bulkEngines.length > 0,
      ports: makePorts(flavour.ports, flavour.activePorts, this.vlMap, (wl.gbps * 1e9) / 8 / 1e9),
      beforeSeqSample: null,
      afterSeqSample: null,
      kernelLog: [],
      kernelLogUs: [],
      kernelLogPri: [],
      kernelLogSeq: 0,
      sdmaPrintTag: 0,
      templates: new Map(),
      logPrefix: `${flavour.module} ${pci}: ${flavour.module}_${unit}: `,
    };
    this.vectorCounts = new Array<number>(engines).fill(0);
    this.byIdx = new Array<Engine | undefined>(flavour.chip.numEngines).fill(undefined);
    for (let pos = 0; pos < engines; pos++) {
      const idx = first + pos;
      const e = new Engine(this.host, idx, idx % this.host.cfg.cpus, pos);
      const c = new Chip(this.host, idx, e.descq, pos, e.stats);
      e.chip = c;
      c.init(descqCnt, this.host.cfg.idleCntNs, engines, SEND_DMA_MEM_SIZE_OBSERVED, pos);
      this.engines.push(e);
      this.chips.push(c);
      this.byIdx[idx] = e;
    }
    let psmRank = 0;
    let txq = 0;
    wl.senders.forEach((spec, id) => {
      const e = this.engines[selectEngineVl(this.vlMap, spec.selector, spec.vl, numVls)] as Engine;
      const s = new Sender(this.host, id, spec, e, rng.fork());
      if (spec.kind === 'psm') s.rank = psmRank++;
      if (s.ipoib) s.ipoib.txq = txq++;
      this.senders.push(s);
    });
    this.direct = { complete: () => {} };
    this.info = {
      unit,
      name: `${flavour.module}_${unit}`,
      pci,
      engines,
      engineIds: this.engines.map((e) => e.idx),
      flavour: unitFlavour(flavour),
      descqCnt,
      sources: [{ source: 'model', readable: true }],
      emulated: true,
      context: { ...emuContext(flavour.chip.name) },
      settings: emuSettings({
        driver: flavour.driver,
        params,
        bulkEngines,
        engines,
        numVls,
        capMask,
        given,
      }),
    };
    this.params = params;
    for (const l of bulk.log) {
      if (l.device) kernelLogLine(this.host, l.text, l.level);
      else kernelLogRaw(this.host, l.text, l.level);
    }
    if (opts.from) seedUnit(this, opts.from, this.direct);
    else {
      // Driver load (__sdma_process_event, sdma.c): e10 to every engine at time 0, the port ACTIVE later.
      this.host.sched.at(0, Ev.portActive, -1);
      this.host.sched.at(this.host.cfg.portActiveNs, Ev.portActive, 1);
    }
    this.host.sched.at(1e6, Ev.check, 0);
    assignTransmitPorts(this);
    startNetdevWatchdog(this);
    for (const f of opts.faults ?? []) this.injectFault(f);
    this.model = opts.model ?? 'fast';
    const fast = this.model === 'fast' ? new FastForward(this) : null;
    this.fast = fast;
    const sched = this.host.sched;
    this.dispatcher = fast
      ? () => {
          dispatch(this);
          fast.after(sched);
        }
      : () => dispatch(this);
  }

  /** Virtual time now, in ms. */
  get nowMs(): number {
    return this.host.sched.nowNs / 1e6;
  }

  /** Run the model until virtual time `ms`. */
  runUntilMs(ms: number): void {
    const target = ms * 1e6;
    if (target <= this.host.sched.nowNs) return;
    this.fast?.begin(target);
    this.host.sched.runUntil(target, this.dispatcher);
  }

  /** What the fast model has skipped so far (all zero with the stepped model). */
  skipped(): SkipTotals {
    return this.fast ? { ...this.fast.totals } : { periods: 0, skippedNs: 0, jumps: 0 };
  }

  /** Advance virtual time by `ms`. */
  advance(ms: number): void {
    this.runUntilMs(this.nowMs + ms);
  }

  /** Schedule a fault (`NAME@MS[:ENGINE]` or parsed); a time in the past applies now. */
  injectFault(f: string | FaultSpec): FaultSpec {
    const spec = typeof f === 'string' ? parseFault(f, this.flavour) : f;
    if (spec.name === 'lost-wakeup') checkLostWakeup(this.senders, this.info.engineIds, spec, this.workload.name);
    if (spec.name === 'ipoib-timeout') checkIpoibTimeout(this, spec);
    this.faults.push(spec);
    this.host.sched.at(spec.atMs * 1e6, Ev.fault, this.faults.length - 1);
    return spec;
  }

  /** Stop every chip from fetching (software keeps running). */
  pause(): void {
    this.fast?.changed();
    for (const c of this.chips) {
      c.paused = true;
      c.stop();
    }
  }

  /** Let the chips fetch again. */
  resume(): void {
    this.fast?.changed();
    for (const c of this.chips) {
      c.paused = false;
      c.kick();
    }
  }

  /**
   * Place an engine's empty ring at given free-running counters, as if that many descriptors and
   * txreqs had gone through it since the last clean-up (tail = head; the chip's HEAD, TAIL and
   * generation counter follow). Refused unless the ring is empty.
   */
  presetCounters(engine: number, descqHead: number, txHead: number): void {
    const e = this.engineAt(engine);
    if (e.descqHead !== e.descqTail || e.txHead !== e.txTail || e.flushlist.length > 0) {
      throw new Hfi1SdmaError(
        'E_USAGE',
        `engine ${engine}: presetCounters needs an empty ring (pause the chip and let it drain first)`,
      );
    }
    this.fast?.changed();
    e.descqHead = e.descqTail = descqHead >>> 0;
    e.txHead = e.txTail = txHead & 0xffff;
    e.descAvail = e.freecnt();
    const c = e.chip;
    c.hwHead = c.hwTail = e.descqHead & e.mask;
    c.genCount = e.descqHead;
  }

  /** Submit one request with sdma_send_txreq (sdma_send_txreq, sdma.c); returns the kernel's return code. */
  submit(engine: number, req: TxReq | EmuTx, opts: { wait?: IoWait | null; pktsSent?: boolean } = {}): number {
    const e = this.engineAt(engine);
    this.fast?.changed();
    const tx = req instanceof EmuTx ? req : new EmuTx(this.direct).load(req);
    const ret = e.sendTxreq(opts.wait ?? null, tx, opts.pktsSent ?? false);
    // -EINVAL for tlen ≠ 0 is refused before the ring is looked at; the IPoIB callback's -EINVAL counts in descq_full_count.
    const refused = ret === EINVAL && tx.tlen !== 0;
    if (ret !== ECOMM && !refused && tx.phase === TxPhase.idle) e.stats.failedPlacements++;
    return ret;
  }

  /** Submit a list with sdma_send_txlist (sdma_send_txlist, sdma.c); unsubmitted requests stay in `list`. */
  submitList(engine: number, list: EmuTx[], wait: IoWait | null = null): { ret: number; count: number } {
    const count = { value: 0 };
    const e = this.engineAt(engine);
    this.fast?.changed();
    const ret = e.sendTxlist(wait, list, count);
    if (ret === EBUSY) e.stats.failedPlacements++;
    return { ret, count: count.value };
  }

  /** The event log's records kept (optionally of some kinds; asking for a kind the unit does not keep is an error). */
  events(kinds?: readonly LogKindName[]): LogRecord[] {
    const log = this.host.log;
    const dropped = (kinds ?? []).filter((k) => !log.keeps(k));
    if (dropped.length > 0) {
      throw new Error(`emulator: the event log keeps only its rare records (retainLog 'rare'), not ${dropped.join(', ')}`);
    }
    return log.records(kinds);
  }

  /** sha256 of the event log so far. */
  logHash(): string {
    return this.host.log.digest();
  }

  /** The unit's running totals: every engine's, and the unit's own (lost wake-ups, invariant violations). */
  stats(): EmuStats {
    const s = new EmuStats();
    const own = this.host.stats;
    for (const e of this.engines) {
      const t = e.stats;
      s.txSubmitted += t.txSubmitted;
      s.txCompleted += t.txCompleted;
      s.txAborted += t.txAborted;
      s.descriptors += t.descriptors;
      s.failedPlacements += t.failedPlacements;
      s.dropped += t.dropped;
      s.ipoibDropped += t.ipoibDropped;
      s.genMismatches += t.genMismatches;
      s.lostWakeups += t.lostWakeups;
      for (const v of t.violations) s.violate(v);
    }
    s.lostWakeups += own.lostWakeups;
    for (const v of own.violations) s.violate(v);
    return s;
  }

  /** Running totals. */
  totals(): EmuTotals {
    const s = this.stats();
    let inFlight = 0;
    let asleep = 0;
    for (const e of this.engines) {
      inFlight += ((e.txTail - e.txHead) & 0xffff) + e.flushlist.length;
      asleep += e.dmawait.length;
    }
    return {
      virtualMs: this.nowMs,
      descriptors: s.descriptors,
      txSubmitted: s.txSubmitted,
      txCompleted: s.txCompleted,
      txAborted: s.txAborted,
      txInFlight: inFlight,
      waitersAsleep: asleep,
      lostWakeups: s.lostWakeups,
      ipoibDropped: s.ipoibDropped,
    };
  }

  /** The engine of absolute index `engine` (E_NO_ENGINE outside the unit's window). */
  engineAt(engine: number): Engine {
    const e = Number.isInteger(engine) ? this.byIdx[engine] : undefined;
    if (!e) {
      throw new Hfi1SdmaError(
        'E_NO_ENGINE',
        `${this.info.name} has no engine ${engine}: engines are ${windowText(this.flavour)}`,
      );
    }
    return e;
  }

  /** The engine of absolute index `idx`, or undefined (scheduler events carry absolute indexes). */
  engineById(idx: number): Engine | undefined {
    return this.byIdx[idx];
  }

  async sample(engines?: readonly number[]): Promise<EngineSample[]> {
    const which = engines ?? this.info.engineIds;
    return which.map((i) => sampleEngine(this, this.engineAt(i)));
  }

  async ring(engine: number): Promise<RingDump> {
    return ringDump(this, this.engineAt(engine));
  }

  /** The senders asleep on the engines' dmawait lists now, from the model (every kind visible). */
  async waiters(): Promise<WaitersSample> {
    return modelWaiters(this);
  }

  /** Whose these QPs are, from the model (each QP sender's own process, run by the job user). */
  async qpOwners(qps: readonly { qpn: number }[]): Promise<QpOwner[]> {
    return modelQpOwners(
      this.senders,
      qps.map((q) => q.qpn),
      this.info.unit,
    );
  }

  /** The link the contract's single-port view shows: the first ACTIVE port, else the first in use (ports.ts). */
  async link(): Promise<LinkState> {
    const { state, physState, rate } = portLink(shownPort(this.host.ports), portRate(this.flavour.chip.name));
    return { state, physState, rate };
  }

  /** Every port's link now, port 1 first (DOWN and Polling after `link-down`, DOWN and Disabled when not in use). */
  async links(): Promise<PortLink[]> {
    const rate = portRate(this.flavour.chip.name);
    return this.host.ports.map((p) => portLink(p, rate));
  }

  /** Every port's counters now, from the model (XmitWait, data, packets, discards, link events, DmaWait). */
  async portCounters(): Promise<PortCounters[]> {
    return this.host.ports.map((p) => modelPortCounters(p, this.host.sched.nowNs));
  }
}
