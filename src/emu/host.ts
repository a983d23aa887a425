// What the parts of the emulated unit share: the clock and scheduler, the event log, the seeded
// generator, the configuration, the totals, and the scheduler's event kinds.

import type { TxReq } from '../progress/txreq.js';
import type { EmuFlavour } from './flavour.js';
import type { IoWait } from './iowait.js';
import type { EventLog } from './log.js';
import type { EmuPort } from './ports.js';
import type { Sfc32 } from './prng.js';
import type { Scheduler } from './scheduler.js';

/** Scheduler event kinds; `a` is the engine (or sender, or fault) index unless noted. */
export const Ev = {
  chipRun: 1, // b = chip epoch
  chipDone: 2, // b = chip epoch
  interrupt: 3,
  idleTimer: 4, // b = idle epoch
  engineErrorInterrupt: 5,
  haltWait: 6,
  hwCleanPoll: 7,
  swCleanUp: 8,
  flushWorker: 9,
  chipHaltDone: 10, // b = chip epoch
  chipCleanUpDone: 11,
  senderRun: 12, // a = sender
  senderTimeout: 13, // a = sender, b = token
  fault: 14, // a = fault index
  freezeStep: 15, // b = step
  portActive: 16,
  check: 17,
  netdevWatchdog: 18, // the netdev watchdog of the unit's IPoIB netdev (netdev.ts)
  linkFlapUp: 19, // a = port index (from 0): the end of a link flap
} as const;

/** Timing and behaviour of the chip model. Times in ns, rates per engine. */
export interface ChipConfig {
  /** Descriptors per second one engine can fetch and complete. */
  descPerSec: number;
  /** Bytes per second one engine can move (its share of the link). */
  bytesPerSec: number;
  /** From a raised interrupt source to the handler running. */
  irqLatencyNs: number;
  /** From CTRL.HALT (or a halting error) to STATUS.ENG_HALTED. */
  haltLatencyNs: number;
  /** From the CTRL clean-up pulse to STATUS.ENG_CLEANED_UP. */
  cleanUpLatencyNs: number;
  /** Most descriptors the chip completes in one step before HEAD is updated. */
  maxBatch: number;
}

/** Configuration of one emulated unit. */
export interface EmuConfig {
  engines: number;
  /** The sdma_descq_cnt module parameter as given (sdma_get_descq_cnt, sdma.c); the ring size is derived from it. */
  descqCntParam: number;
  descqCnt: number;
  /** sdma_idle_cnt in ns (sdma_get_descq_cnt, sdma.c); 0 means no idle timeout (LAST descriptors get INT_REQ, sdma_txadd_page/kvaddr/daddr, sdma.h). */
  idleCntNs: number;
  /** desct_intr (sdma_get_descq_cnt, sdma.c). */
  desctIntr: number;
  /** num_vls (sdma_get_descq_cnt, sdma.c), capped at the engine count (num_sdma, chip.c). */
  numVls: number;
  /** cap_mask as the module parameter shows it (EMU_CAP_MASK by default): USE_SDMA_HEAD is bit 6, SDMA_HEAD_CHECK bit 17. */
  capMask: number;
  /** Virtual time at which the port becomes ACTIVE (e30 to every engine, __sdma_process_event, sdma.c). */
  portActiveNs: number;
  /** Emulated online CPUs (engine i's IRQ is affined to CPU i mod cpus). */
  cpus: number;
  chip: ChipConfig;
  /** The chip, driver build, ports and engine window modelled (flavour.ts). */
  flavour: EmuFlavour;
  /** The ring holds JKR-layout descriptors (FIRST/LAST/BYTE_COUNT in qw1). */
  jkr: boolean;
  /** CTRL bits added to every CTRL write (JKR threshold / single-descriptor bits; 0 elsewhere). */
  extraCtrl: number;
  /** sdma_check_progress samples head_lock before it recomputes the free count (EmuUnitOptions.variant). */
  sampleFirst: boolean;
}

/** Running totals of a unit (`emu run --json`, docs/json.md). */
export class EmuStats {
  txSubmitted = 0;
  txCompleted = 0;
  txAborted = 0;
  /** Descriptors retired by software with status OK. */
  descriptors = 0;
  /** Submissions that were not placed: the independent count behind descq_full_count. */
  failedPlacements = 0;
  /** Txreqs a QP sleep callback dropped because the QP could not send (the sleep callbacks: iowait_sleep, qp.c; defer_packet_queue, user_sdma.c). */
  dropped = 0;
  /**
   * Txreqs an IPoIB queue dropped once its netdev was unregistered (hfi1_ipoib_sdma_sleep, ipoib_tx.c, returns
   * -EINVAL; or parked on the queue's list): never placed, so outside `txSubmitted`.
   */
  ipoibDropped = 0;
  lostWakeups = 0;
  genMismatches = 0;
  violations: string[] = [];

  /** Record an invariant violation (kept to the first 100). */
  violate(text: string): void {
    if (this.violations.length < 100) this.violations.push(text);
  }
}

/** Everything an engine, a chip or a sender reaches through its unit. */
export interface Host {
  readonly sched: Scheduler;
  readonly log: EventLog;
  readonly rng: Sfc32;
  readonly cfg: EmuConfig;
  readonly stats: EmuStats;
  /** The device reads all-ones (fault `device-gone`). */
  gone: boolean;
  /** The port's IPoIB netdev is registered (until fault `netdev-unregister`): hfi1_ipoib_sdma_sleep (ipoib_tx.c) checks it. */
  netdevRegistered: boolean;
  /** The bulk service owns engines (`--param use_bulksvc=Y`): a QP's large packets leave SDMA (params.ts). */
  readonly bulkService: boolean;
  /**
   * The adapter's ports (ports.ts), port 1 first: a port in use is INIT until it goes ACTIVE, DOWN after `link-down`
   * until `link-up`; a port not in use (`--active-ports`) stays DOWN.
   */
  readonly ports: EmuPort[];
  /**
   * Runs in sdma_check_progress (sdma.c) after the free count was found short and before the head_lock sequence is
   * sampled: where the fault `lost-wakeup` stalls the sender's CPU.
   */
  beforeSeqSample: ((engine: number, wait: IoWait) => void) | null;
  /** Test hook: runs between the sequence sample and the sleep callback (sdma_check_progress vs sdma_desc_avail, sdma.c step 4–5). */
  afterSeqSample: ((engine: number) => void) | null;
  /** `hfi1 <bdf>: hfi1_<u>: ` (hfi2 for the hfi2 build), the prefix of the unit's kernel log lines (the driver log lines, sdma.c). */
  readonly logPrefix: string;
  /** Kernel log lines (dmesg text of the driver's log lines, sdma.c), bounded (KERNEL_LOG_LINES). */
  kernelLog: string[];
  /** Virtual time of each kept kernel log line, in µs (what /dev/kmsg stamps a record with). */
  kernelLogUs: number[];
  /** The printk level of each kept kernel log line (KERN_ERR for dd_dev_err, KERN_INFO for dd_dev_info, …). */
  kernelLogPri: number[];
  /** Kernel log lines ever written: the sequence number of the next one. */
  kernelLogSeq: number;
  /** dd->sdma_print_tag: the next tag an engine-error dump of the Cornelis builds prints its descriptors under. */
  sdmaPrintTag: number;
  /**
   * The senders' packet templates, shared by every sender whose packets have the same header, fragment, first size
   * and size step (sender.ts): one copy of each request's words for the whole unit, not one per sender.
   */
  readonly templates: Map<string, PacketTemplates>;
}

/** Templates by size step, (bytes − sizeLo) / step, and their words in the JKR layout (JKR only, else null). */
export interface PacketTemplates {
  readonly reqs: (TxReq | undefined)[];
  readonly chipWords: (Uint32Array | null)[];
  /** The unit-wide number of this family of templates (a template is `family × 65536 + size step`). */
  readonly family: number;
}

/** Kernel log lines kept: about a 1 MiB printk ring of these lines (a full ring's error dump fits; older lines go). */
export const KERNEL_LOG_LINES = 8192;

/** printk levels (include/linux/kern_levels.h): dd_dev_err; dd_dev_warn and a WARN's lines; dd_dev_info and pr_info. */
export const KERN_ERR = 3;
export const KERN_WARNING = 4;
export const KERN_INFO = 6;

/**
 * Append a kernel log line (the driver log lines, sdma.c text) with the unit's prefix, keeping the last
 * KERNEL_LOG_LINES; `level` is the printk level it is logged at (dd_dev_err by default, as the SDMA lines are).
 */
export function kernelLogLine(host: Host, text: string, level = KERN_ERR): void {
  kernelLogRaw(host, `${host.logPrefix}${text}`, level);
}

/** Append a kernel log line as printed, prefix and all (a port's or a netdev's lines), keeping the last KERNEL_LOG_LINES. */
export function kernelLogRaw(host: Host, line: string, level = KERN_ERR): void {
  host.kernelLog.push(line);
  host.kernelLogUs.push(Math.floor(host.sched.nowNs / 1000));
  host.kernelLogPri.push(level);
  host.kernelLogSeq++;
  // Trimmed in chunks, so a long dump does not move the whole array once per line.
  if (host.kernelLog.length > KERNEL_LOG_LINES + 1024) {
    host.kernelLog.splice(0, host.kernelLog.length - KERNEL_LOG_LINES);
    host.kernelLogUs.splice(0, host.kernelLogUs.length - KERNEL_LOG_LINES);
    host.kernelLogPri.splice(0, host.kernelLogPri.length - KERNEL_LOG_LINES);
  }
}
