// The chip side of one engine: the per-engine CSRs (SEND_DMA_*, chip_registers.h) holding what the driver programs
// (init_sdma_regs, sdma.c), descriptor fetch at a configured rate with the generation check (SDMA_DESC1_GENERATION, sdma.h), HEAD and the
// head write-back (the head write-back, sdma.c), and the three interrupt sources of an engine (its interrupt masks, sdma.c). Completions are applied in
// steps of at most `maxBatch` descriptors, ending early at an INT_REQ descriptor or when the
// DESC_CNT progress threshold is reached, so HEAD moves as the chip finishes each step.
import { interruptSources } from '../progress/chip.js';
import {
  SDMA_ENG_ERR_HALT_BIT,
  SEND_DMA_LEN_GEN_GENERATION_SHIFT,
  SEND_DMA_LEN_GEN_LENGTH_SHIFT,
} from '../progress/constants.js';
import { doubleFields } from './double-fields.js';
import { computeStep, FetchStep, INT_IDLE, INT_PROGRESS, INT_SDMA } from './fetch.js';
import { type EmuStats, Ev, type Host } from './host.js';
import { LogKind } from './log.js';
import { TrafficMeter } from './port-counters.js';
import type { EmuPort } from './ports.js';

export { INT_IDLE, INT_PROGRESS, INT_SDMA } from './fetch.js';

const CTRL_ENABLE = 0x1; // SEND_DMA_* per-engine CSRs, chip_registers.h SEND_DMA_CTRL bits
const CTRL_HALT = 0x2;
const CTRL_CLEANUP = 0x4;
const CTRL_INT_ENABLE = 0x8;
const HALT_CLASS = 0x7fdff; // SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h
const GEN_MISMATCH_BIT = 1; // SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h SDmaGenMismatchErr
const JKR_CREDITS_LIMIT = 1568; // jkr_sdma_credits_limit at -1 (sdma.c of the cornelis/hfi2 builds)

/** One engine's registers and fetch engine. */
export class Chip {
  ctrl = 0;
  halted = false;
  cleanedUp = false;
  errStatus = 0;
  hwTail = 0;
  hwHead = 0;
  headDma = 0;
  lenGen = 0;
  reloadCnt = 0;
  descCnt = 0;
  descFetched = 0;
  checkSlid = 0;
  memory = 0;
  /** SEND_DMA_PRIORITY_THLD: sdma_threshold, written with every CTRL write when it is not 0 (sdma_sendctrl, sdma.c). */
  priorityThld = 0;
  /** This engine's SDMA, progress and idle bits in its CCE_INT_STATUS register (the engine's interrupt masks, sdma.c). */
  readonly masks: readonly [number, number, number];
  readonly baseAddr: number;
  readonly headAddr: number;
  /** Descriptors consumed since LEN_GEN was loaded: the chip's generation counter (SDMA_DESC1_GENERATION, sdma.h). */
  genCount = 0;
  genCheck = false;
  /** AHG edit descriptors still to come in the current packet (no generation check). */
  editRemaining = 0;
  /** Descriptors completed since the last progress interrupt or DESC_CNT write. */
  progressCount = 0;
  // Scheduling state.
  active = false;
  epoch = 0;
  idleEpoch = 0;
  idleArmed = false;
  pending = 0;
  irqScheduled = false;
  errIrqScheduled = false;
  /** Scheduler handles of the pending step end and idle timer (cancelled when the chip stops or the timer is disarmed). */
  doneEvent = -1;
  idleEvent = -1;
  /** The step in progress, applied by done(). */
  readonly step = new FetchStep();
  // Faults and controls.
  stopFetch = false;
  lostInterrupt = false;
  headWritebackStall = false;
  slow = 1;
  frozen = false;
  paused = false;
  /** Fault `halt-stuck`: the error bits stay latched (the handler's write-1-to-clear does not take). */
  haltStuck = false;
  interruptsLost = 0;
  /** The port the engine's packets leave by (ports.ts transmitPorts); null while no port is ACTIVE. */
  txPort: EmuPort | null = null;
  /** What the engine has sent, and its own measure of its load (port-counters.ts). */
  readonly traffic: TrafficMeter;

  /**
   * `idx` is the absolute hardware index; `pos` the engine's place in the unit's window, which is also the
   * scheduler domain of its events (scheduler.ts).
   */
  constructor(
    private readonly host: Host,
    readonly idx: number,
    private readonly descq: Uint32Array,
    readonly pos: number = idx,
    private readonly stats: EmuStats = host.stats,
  ) {
    this.baseAddr = 0x1_0000_0000 + idx * 0x10_0000;
    this.headAddr = 0x2_0000_0000 + idx * 64; // one cache line per engine (struct sdma_engine, sdma.h head_dma)
    this.traffic = new TrafficMeter();
    const src = interruptSources(host.cfg.flavour.chip, idx);
    this.masks = [Number(src.intMask), Number(src.progressMask), Number(src.idleMask)];
    doubleFields(this, 'doneEvent', 'idleEvent');
  }

  /**
   * The chip fetches descriptors: enabled, not halted, not stopped, frozen, paused or gone, and its port has credits
   * (without them the send buffer stays full and nothing more is fetched: fault `fabric-stall`).
   */
  canFetch(): boolean {
    return (
      (this.ctrl & CTRL_ENABLE) !== 0 &&
      !this.halted &&
      !this.stopFetch &&
      !this.paused &&
      !this.frozen &&
      !this.host.gone &&
      (this.txPort === null || this.txPort.counters.credits)
    );
  }

  /** Start fetching if there is reason to (the first step is computed at once). */
  kick(): void {
    if (!this.active && this.canFetch()) {
      this.active = true;
      this.run(this.epoch);
    }
  }

  /** True when the chip has nothing in progress: ring consumed, no step or interrupt pending. */
  quiescent(): boolean {
    return !this.active && this.hwHead === this.hwTail && !this.irqScheduled;
  }

  /**
   * Driver init (init_sdma_regs, sdma.c): RELOAD_CNT from sdma_idle_cnt in the chip's core clocks, the engine's
   * share of the SDMA memory (SEND_DMA_MEMORY on WFR, SEND_DMA_CFG_MEMORY on JKR), DESC_CNT 0, and the
   * PRIORITY_THLD that sdma_sendctrl writes with the first CTRL write.
   * `pos` is the engine's place in the unit's window. On JKR the share is jkr_sdma_credits_limit (1568 when
   * automatic) capped at 6272 / engines and made even; the register keeps WFR's count-and-base layout (a choice:
   * its JKR field layout is not public).
   */
  init(descqCnt: number, idleCntNs: number, engines: number, memSize: number, pos: number = this.idx): void {
    const f = this.host.cfg.flavour;
    const cclockPs = f.chip.cclockPs;
    this.reloadCnt = idleCntNs > 0 ? Math.max(1, Math.floor((idleCntNs * 1000) / cclockPs)) : 0;
    let credits = Math.floor(memSize / (engines * 64));
    if (f.chip.name === 'jkr') credits = Math.min(JKR_CREDITS_LIMIT, credits) & ~1;
    this.memory = credits * 0x10000 + credits * pos;
    this.priorityThld = f.driver === 'upstream' ? 0 : f.settings.sdmaThreshold;
    this.descCnt = 0;
    this.writeLenGen(descqCnt);
  }

  /** SEND_DMA_LEN_GEN written twice (SDMA_DESC1_GENERATION, sdma.h): length, then generation 4 (check on, counter 0). */
  writeLenGen(descqCnt: number): void {
    this.lenGen = ((descqCnt / 64) << SEND_DMA_LEN_GEN_LENGTH_SHIFT) | (4 << SEND_DMA_LEN_GEN_GENERATION_SHIFT);
    this.genCount = 0;
    this.genCheck = true;
    this.editRemaining = 0;
  }

  /** SEND_DMA_TAIL written by software (sdma_send_txreq, sdma.c). */
  writeTail(slot: number): void {
    this.hwTail = slot;
    if (this.idleArmed) this.disarmIdle();
    this.kick();
  }

  private disarmIdle(): void {
    this.idleArmed = false;
    this.idleEpoch++;
    this.host.sched.cancel(this.idleEvent);
    this.idleEvent = -1;
  }

  /** SEND_DMA_CTRL written on a state change (the state names, sdma.c); the clean-up bit is a pulse. */
  writeCtrl(v: number): void {
    this.ctrl = v & ~CTRL_CLEANUP;
    const s = this.host.sched;
    if (v & CTRL_HALT && !this.halted) {
      this.stop();
      s.after(this.host.cfg.chip.haltLatencyNs, Ev.chipHaltDone, this.idx, 0, this.pos);
    }
    if (v & CTRL_CLEANUP) s.after(this.host.cfg.chip.cleanUpLatencyNs, Ev.chipCleanUpDone, this.idx, 0, this.pos);
    if (v & CTRL_ENABLE) {
      this.cleanedUp = false;
      this.kick();
    } else this.stop();
  }

  /** Abandon the step in progress. */
  stop(): void {
    if (this.active) {
      this.active = false;
      this.epoch++;
      this.host.sched.cancel(this.doneEvent);
      this.doneEvent = -1;
    }
  }

  /** The chip has halted after CTRL.HALT and reports it with SDmaHaltErr (__sdma_process_event, sdma.c load). */
  haltDone(): void {
    this.halted = true;
    this.raiseError(1 << SDMA_ENG_ERR_HALT_BIT);
  }

  /** The clean-up pulse has finished (SEND_DMA_* per-engine CSRs, chip_registers.h ENG_CLEANED_UP): HEAD back to 0, halt cleared. */
  cleanUpDone(): void {
    this.stop();
    this.hwHead = 0;
    this.halted = false;
    this.cleanedUp = true;
    this.editRemaining = 0;
    this.progressCount = 0;
    if (this.idleArmed) this.disarmIdle();
  }

  /** Set SEND_DMA_ENG_ERR_STATUS bits; a halt-class bit stops the engine (SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h). */
  raiseError(bits: number): void {
    this.errStatus = (this.errStatus | bits) >>> 0;
    if (bits & HALT_CLASS) {
      this.halted = true;
      this.stop();
      this.host.log.write(this.host.sched.nowNs, LogKind.chipHalt, this.idx, 31 - Math.clz32(bits & HALT_CLASS), 0, 0);
    }
    if (!this.errIrqScheduled && !this.host.gone) {
      this.errIrqScheduled = true;
      this.host.sched.after(this.host.cfg.chip.irqLatencyNs, Ev.engineErrorInterrupt, this.idx, 0, this.pos);
    }
  }

  /** The engine-error handler reads and clears the error status (write-1-to-clear; latched under `halt-stuck`). */
  takeErrors(): number {
    this.errIrqScheduled = false;
    const s = this.errStatus;
    if (!this.haltStuck) this.errStatus = 0;
    return s;
  }

  /** Raise interrupt sources; `forced` is a CCE_INT_FORCE write (sdma_engine_progress_schedule, sdma.h), not a chip event. */
  raise(bits: number, forced = false): void {
    if (!forced && (this.ctrl & CTRL_INT_ENABLE) === 0) return;
    if (this.host.gone) return;
    if (this.lostInterrupt) {
      this.interruptsLost++;
      this.host.log.write(this.host.sched.nowNs, LogKind.interruptLost, this.idx, bits, 0, 0);
      return;
    }
    this.pending |= bits;
    if (!this.irqScheduled) {
      this.irqScheduled = true;
      this.host.sched.after(this.host.cfg.chip.irqLatencyNs, Ev.interrupt, this.idx, 0, this.pos);
    }
  }

  /** This engine's pending bits of its CCE_INT_STATUS register (#3 WFR, #4 JKR) as its interrupt masks (sdma.c) (for the BAR image). */
  pendingStatusMask(): number {
    return this.statusMask(this.pending);
  }

  /** Local interrupt bits as this engine's CCE_INT_STATUS bits (the engine's interrupt masks, sdma.c). */
  statusMask(bits: number): number {
    let m = 0;
    if (bits & INT_SDMA) m += this.masks[0];
    if (bits & INT_PROGRESS) m += this.masks[1];
    if (bits & INT_IDLE) m += this.masks[2];
    return m;
  }

  /** CCE_INT_STATUS for this engine, cleared as sdma_interrupt clears it (sdma_make_progress, sdma.c). */
  takeStatus(): number {
    this.irqScheduled = false;
    const s = this.pending;
    this.pending = 0;
    return s;
  }

  /** An idle timer expired (scheduler event). */
  idleTimer(epoch: number): void {
    if (epoch !== this.idleEpoch || !this.idleArmed) return;
    this.idleArmed = false;
    this.idleEvent = -1;
    if (this.hwHead === this.hwTail && (this.ctrl & CTRL_ENABLE) !== 0 && !this.halted) this.raise(INT_IDLE);
  }

  /** The idle timeout in whole ns: RELOAD_CNT core clocks (init_sdma_regs, sdma.c). */
  idleDelayNs(): number {
    return Math.round((this.reloadCnt * this.host.cfg.flavour.chip.cclockPs) / 1000);
  }

  /**
   * Fetch and complete descriptors from HEAD (at once from kick(), or from done() when a step has completed and the
   * next follows it without a pause: `continues`).
   */
  run(epoch: number, continues = false): void {
    if (epoch !== this.epoch) return;
    this.doneEvent = -1;
    if (!this.canFetch()) {
      this.active = false;
      return;
    }
    const sched = this.host.sched;
    if (this.hwHead === this.hwTail) {
      this.active = false;
      if (!this.idleArmed && this.reloadCnt > 0) {
        this.idleArmed = true;
        this.idleEvent = sched.after(this.idleDelayNs(), Ev.idleTimer, this.idx, this.idleEpoch, this.pos);
      }
      return;
    }
    const step = this.step;
    const k = computeStep(this.descq, this, this.host.cfg, sched.nowNs, step);
    if (k === 0) {
      // The descriptor at HEAD carries the wrong generation: halt (SDMA_DESC1_GENERATION, sdma.h). A mismatch later in
      // the step ends the step and is found here at the start of the next one.
      this.active = false;
      this.stats.genMismatches++;
      this.raiseError(1 << GEN_MISMATCH_BIT);
      return;
    }
    this.traffic.start(sched.nowNs, continues);
    this.doneEvent = sched.at(step.endNs, Ev.chipDone, this.idx, this.epoch, this.pos);
  }

  /** The step has completed: HEAD, head write-back, interrupts, then the next step. */
  done(epoch: number): void {
    if (epoch !== this.epoch) return;
    const step = this.step;
    this.apply(step);
    if (step.bits) this.raise(step.bits);
    this.run(epoch, true);
  }

  private apply(step: FetchStep): void {
    if (step.bytes > 0 && this.txPort !== null)
      this.traffic.sent(this.txPort.counters, step.bytes, step.packets, this.host.sched.nowNs);
    this.hwHead = step.end;
    this.descFetched = (this.descFetched + step.count) >>> 0;
    this.genCount = step.gen;
    this.progressCount = step.progress;
    this.editRemaining = step.edit;
    if (step.headDma >= 0 && !this.headWritebackStall) this.headDma = step.headDma;
  }

  /**
   * Complete every descriptor up to TAIL at once, as the chip does while a sender's CPU is stalled (fault
   * `lost-wakeup`); returns the interrupt bits the steps asked for. Nothing is raised: the caller runs the handler.
   */
  drainNow(): number {
    this.stop();
    let bits = 0;
    const step = this.step;
    while (this.hwHead !== this.hwTail && this.canFetch()) {
      if (computeStep(this.descq, this, this.host.cfg, this.host.sched.nowNs, step) === 0) break;
      this.apply(step);
      bits |= step.bits;
    }
    return bits;
  }

  /** DESC_CNT written by the interrupt handler (sdma_make_progress, sdma.c step 3); restarts the progress count. */
  writeDescCnt(n: number): void {
    this.descCnt = n & 0xffff;
    this.progressCount = 0;
  }
}
