// The unit's accelerated-IPoIB netdev as the kernel shows it: the netdev watchdog (dev_watchdog, sch_generic.c) that
// times out a transmit queue whose subqueue stayed stopped past watchdog_timeo (HZ, 1 s, for IPoIB: ipoib_setup_common,
// ipoib_main.c), the lines it and the driver's timeout handler log (the NETDEV WATCHDOG warning, then the block of
// hfi1_ipoib_tx_timeout, ipoib_tx.c), the per-queue `tx_timeout` count (net-sysfs.c) and the fault `ipoib-timeout`.
//
// The watchdog's wording is the one of the kernel the emulated host runs (5.14, EMU_CONTEXT.kernelRelease): dev_watchdog
// reports the first time through WARN_ONCE, `NETDEV WATCHDOG: <netdev> (<driver>): transmit queue <q> timed out` at
// KERN_INFO inside the WARNING block (its `cut here` line, the `WARNING: CPU: …` line, the module list and a call trace
// at the default level), and later timeouts only through the driver's block (6.0 added ` <ms> ms`; 6.11 made it a
// netdev_crit line each time; whether the el9_4 kernel took either back is not known: the 5.14 form is a choice).
// The WARNING's line number, offsets and call trace are stand-ins (a choice). The block's values are the queue's:
// `flow` is txq->flow.as_int (union hfi1_ipoib_flow, ipoib.h: the queue index in the low byte, the SC above it; 0xffff
// before the first packet), `tx_queue_len` ipoib_setup_common's ipoib_sendq_size × 2 (1024 with the default send
// queue), `max_items` roundup_pow_of_two(tx_queue_len + 1) (hfi1_ipoib_txreq_init, ipoib_tx.c), `head` the completions
// and `tail` the sends modulo max_items (hfi1_ipoib_poll_tx_ring, hfi1_ipoib_send_dma_single); the pointers print as
// the kernel's hashed %p (16 hex digits) made from the unit and queue.
import { usageError } from '../errors.js';
import { engineIdsText } from '../progress/engine-ids.js';
import { EMU_CONTEXT } from './context.js';
import type { FaultSpec } from './faults.js';
import { Ev, type Host, KERN_INFO, KERN_WARNING, kernelLogRaw } from './host.js';
import { emuNetdev } from './ipoib.js';
import type { Sender } from './sender.js';
import type { EmuUnit } from './unit.js';

/** The IPoIB netdev's watchdog_timeo (ipoib_setup_common, ipoib_main.c: HZ). */
export const WATCHDOG_TIMEO_MS = 1000;
/** The netdev's tx_queue_len (ipoib_setup_common, ipoib_main.c: ipoib_sendq_size × 2, the send queue 512 by default). */
export const IPOIB_TX_QUEUE_LEN = 1024;
/** The queue ring's max_items: roundup_pow_of_two(tx_queue_len + 1) (hfi1_ipoib_txreq_init, ipoib_tx.c). */
export const IPOIB_TX_RING_ITEMS = 2048;

/** The unit's IPoIB queues, in txq order. */
export function ipoibQueues(u: EmuUnit): Sender[] {
  return u.senders.filter((s) => s.ipoib !== null).sort((a, b) => (a.ipoib?.txq ?? 0) - (b.ipoib?.txq ?? 0));
}

/** The transmit queues the netdev has: one per SDMA engine of the unit (hfi1_ipoib_rn_get_params, ipoib_main.c: num_sdma). */
export function txQueueCount(u: EmuUnit): number {
  return u.engines.length;
}

/** Arm the watchdog: every watchdog_timeo while the unit has an IPoIB queue. */
export function startNetdevWatchdog(u: EmuUnit): void {
  if (ipoibQueues(u).length > 0) u.host.sched.at(WATCHDOG_TIMEO_MS * 1e6, Ev.netdevWatchdog, 0);
}

/** A hashed kernel pointer for the block (%p): 16 hex digits, stable per unit and object. */
function hashedPointer(unit: number, what: number): string {
  let h = (0x9e3779b9 ^ (unit * 0x85ebca6b) ^ (what * 0xc2b2ae35)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0;
  return `00000000${h.toString(16).padStart(8, '0')}`;
}

/** txq->flow.as_int (union hfi1_ipoib_flow, ipoib.h): tx_queue | sc5 << 8 once a packet went, 0xffff before. */
export function ipoibFlow(s: Sender): number {
  const q = s.ipoib;
  if (!q || q.placed === 0) return 0xffff;
  return (q.txq & 0xff) | ((s.spec.vl & 0x1f) << 8); // the SC is the SL, which maps to this VL (workload.ts)
}

/** The driver's timeout block for queue `s` (hfi1_ipoib_tx_timeout, ipoib_tx.c), one line each. */
export function timeoutBlock(u: EmuUnit, s: Sender): string[] {
  const q = s.ipoib;
  if (!q) return [];
  const used = s.outstanding;
  const completed = q.placed - used;
  const stopped = q.subqueueStopped ? 1 : 0;
  return [
    `timeout txq ${hashedPointer(u.info.unit, 0x100 + q.txq)} q ${q.txq} stopped ${stopped} stops ${stopped} no_desc ${stopped} ring_full 0`,
    `sde ${hashedPointer(u.info.unit, s.engine.idx)} engine ${s.engine.idx}`,
    `flow ${ipoibFlow(s).toString(16)}`,
    `sent ${q.placed} completed ${completed} used ${used}`,
    `tx_queue_len ${IPOIB_TX_QUEUE_LEN} max_items ${IPOIB_TX_RING_ITEMS}`,
    `head ${completed % IPOIB_TX_RING_ITEMS} tail ${q.placed % IPOIB_TX_RING_ITEMS}`,
    `wait queued ${s.wait.queuedOn !== null ? 1 : 0}`,
    `tx_list empty ${q.list.length === 0 ? 1 : 0}`,
  ];
}

/** The call trace of the watchdog's WARNING: a timer softirq's frames (stand-ins: offsets and trace id are a choice). */
const WARN_TRACE: readonly string[] = [
  'Call Trace:',
  ' <IRQ>',
  ' call_timer_fn+0x27/0x130',
  ' __run_timers.part.0+0x1e6/0x280',
  ' run_timer_softirq+0x26/0x50',
  ' __do_softirq+0xc7/0x2ac',
  ' </IRQ>',
  '---[ end trace 9e3779b97f4a7c15 ]---',
];

/**
 * The WARN_ONCE of dev_watchdog (sch_generic.c, 5.14) as the kernel logs it: `cut here` (KERN_WARNING), the
 * message at the KERN_INFO its format carries, then __warn's WARNING line, the module list, the CPU line and a call
 * trace (stand-ins, a choice) at the default level, each line without a device.
 */
function watchdogWarning(host: Host, u: EmuUnit, s: Sender, netdev: string): void {
  const q = s.ipoib;
  if (!q) return;
  const cpu = s.engine.cpu;
  const warn = (line: string) => kernelLogRaw(host, line, KERN_WARNING);
  warn('------------[ cut here ]------------');
  kernelLogRaw(host, `NETDEV WATCHDOG: ${netdev} (${u.flavour.module}): transmit queue ${q.txq} timed out`, KERN_INFO);
  warn(`WARNING: CPU: ${cpu} PID: 0 at net/sched/sch_generic.c:477 dev_watchdog+0x1f2/0x200`);
  warn(`Modules linked in: ${u.flavour.module} rdmavt ib_ipoib ib_umad rdma_ucm ib_uverbs ib_core`);
  warn(`CPU: ${cpu} PID: 0 Comm: swapper/${cpu} Not tainted ${EMU_CONTEXT.kernelRelease} #1`);
  for (const line of WARN_TRACE) warn(line);
}

/**
 * One pass of the watchdog (dev_watchdog, sch_generic.c): with the netdev registered and its port up, the first
 * queue whose subqueue is stopped and whose last transmit is older than watchdog_timeo times out: its tx_timeout
 * counts one, the WARNING is logged the first time only (WARN_ONCE) and the driver's block every time (dd_dev_info).
 * Then it is armed again.
 */
export function netdevWatchdog(u: EmuUnit): void {
  const host = u.host;
  const now = host.sched.nowNs;
  host.sched.after(WATCHDOG_TIMEO_MS * 1e6, Ev.netdevWatchdog, 0);
  if (!host.netdevRegistered || !host.ports.some((p) => p.state === 'ACTIVE')) return;
  const queues = ipoibQueues(u);
  for (const s of queues) {
    const q = s.ipoib;
    if (!q?.subqueueStopped) continue;
    const since = Math.max(q.lastXmitNs, q.stoppedAtNs);
    const waitedMs = Math.floor((now - since) / 1e6);
    if (waitedMs <= WATCHDOG_TIMEO_MS) continue;
    const firstTimeout = queues.every((o) => (o.ipoib?.timeouts ?? 0) === 0);
    q.timeouts++;
    q.lastTimeoutNs = now;
    if (firstTimeout) watchdogWarning(host, u, s, emuNetdev(u.info.unit, 1, host.ports.length));
    for (const line of timeoutBlock(u, s)) kernelLogRaw(host, `${host.logPrefix}${line}`, KERN_INFO);
    break; // dev_watchdog reports one queue per pass
  }
}

/** The IPoIB queue an `ipoib-timeout` fault takes on engine `engine`: the engine's first one, or null. */
export function ipoibTimeoutVictim(u: EmuUnit, engine: number): Sender | null {
  return ipoibQueues(u).find((s) => s.engine.idx === engine && s.spec.load > 0) ?? null;
}

/** Refuse an `ipoib-timeout` fault aimed at an engine without an IPoIB queue (a usage error naming the engines with one). */
export function checkIpoibTimeout(u: EmuUnit, f: FaultSpec): void {
  const which = f.engine === null ? u.info.engineIds : [f.engine];
  const missing = which.filter((e) => ipoibTimeoutVictim(u, e) === null);
  if (f.engine === null ? missing.length === which.length : missing.length > 0) {
    const where = f.engine === null ? 'no engine has' : `engine ${f.engine} has no`;
    const having = u.info.engineIds.filter((e) => ipoibTimeoutVictim(u, e) !== null);
    const hint =
      having.length > 0
        ? `the driver put its sending IPoIB queues on engine${having.length > 1 ? 's' : ''} ${engineIdsText(having)}: aim the fault there, or give the queues another SL (key sl=N sends on VL N's engines)`
        : 'use a workload with IPoIB queues (ipoib, or mixed:ipoib=1)';
    throw usageError(
      `--fault ${JSON.stringify(f.text)}: ${where} IPoIB queue in workload ${JSON.stringify(u.workload.name)}; ${hint}`,
    );
  }
}

/**
 * Apply `ipoib-timeout` to engine `engine`: its IPoIB queue is woken no more (sdma_desc_avail passes over its
 * iowait) and sends a burst that fills the ring, so it sleeps with its subqueue stopped and stays so.
 */
export function armIpoibTimeout(u: EmuUnit, engine: number): void {
  const s = ipoibTimeoutVictim(u, engine);
  if (!s) return;
  s.wait.stuck = true;
  s.burst = true;
  if (!s.asleep) s.start(u.host.sched.nowNs);
}
