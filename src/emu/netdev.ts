// The unit's accelerated-IPoIB netdev as the kernel shows it: the netdev watchdog (dev_watchdog, sch_generic.c) that
// times out a transmit queue whose subqueue stayed stopped past watchdog_timeo (HZ, 1 s, for IPoIB: ipoib_setup_common,
// ipoib_main.c), the lines it and the driver's timeout handler log (the NETDEV WATCHDOG line, then the block of
// hfi1_ipoib_tx_timeout, ipoib_tx.c), the per-queue `tx_timeout` count (net-sysfs.c) and the fault `ipoib-timeout`.
//
// Choices where the kernel's behaviour depends on its version: the watchdog line is printed in the netdev_crit form
// of current kernels (`<driver> <pci> <netdev>: NETDEV WATCHDOG: CPU: <cpu>: transmit queue <q> timed out <ms> ms`,
// every time; older kernels printed `NETDEV WATCHDOG: <netdev> (<driver>): transmit queue <q> timed out` once, with a
// WARNING); the pointers of the block print as the kernel's hashed %p (16 hex digits) made from the unit and queue;
// `flow` prints 0; the queue's ring holds 256 items, as does tx_queue_len.
import { usageError } from '../errors.js';
import type { FaultSpec } from './faults.js';
import { Ev, kernelLogRaw } from './host.js';
import { emuNetdev } from './ipoib.js';
import type { Sender } from './sender.js';
import type { EmuUnit } from './unit.js';

/** The IPoIB netdev's watchdog_timeo (ipoib_setup_common, ipoib_main.c: HZ). */
export const WATCHDOG_TIMEO_MS = 1000;
/** tx_queue_len and the queue ring's max_items the block prints (a choice). */
const TX_RING_ITEMS = 256;

/** The unit's IPoIB queues, in txq order. */
export function ipoibQueues(u: EmuUnit): Sender[] {
  return u.senders.filter((s) => s.ipoib !== null).sort((a, b) => (a.ipoib?.txq ?? 0) - (b.ipoib?.txq ?? 0));
}

/** The transmit queues the netdev has: one per SDMA engine of the unit (the driver sizes them by num_sdma), or its IPoIB queues if more. */
export function txQueueCount(u: EmuUnit): number {
  return Math.max(u.engines.length, ipoibQueues(u).length);
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
    'flow 0',
    `sent ${q.placed} completed ${completed} used ${used}`,
    `tx_queue_len ${TX_RING_ITEMS} max_items ${TX_RING_ITEMS}`,
    `head ${q.placed % TX_RING_ITEMS} tail ${completed % TX_RING_ITEMS}`,
    `wait queued ${s.wait.queuedOn !== null ? 1 : 0}`,
    `tx_list empty ${q.list.length === 0 ? 1 : 0}`,
  ];
}

/**
 * One pass of the watchdog (dev_watchdog, sch_generic.c): with the netdev registered and its port up, the first
 * queue whose subqueue is stopped and whose last transmit is older than watchdog_timeo times out: its tx_timeout
 * counts one, the watchdog line and the driver's block are logged. Then it is armed again.
 */
export function netdevWatchdog(u: EmuUnit): void {
  const host = u.host;
  const now = host.sched.nowNs;
  host.sched.after(WATCHDOG_TIMEO_MS * 1e6, Ev.netdevWatchdog, 0);
  if (!host.netdevRegistered || !host.ports.some((p) => p.state === 'ACTIVE')) return;
  for (const s of ipoibQueues(u)) {
    const q = s.ipoib;
    if (!q?.subqueueStopped) continue;
    const since = Math.max(q.lastXmitNs, q.stoppedAtNs);
    const waitedMs = Math.floor((now - since) / 1e6);
    if (waitedMs <= WATCHDOG_TIMEO_MS) continue;
    q.timeouts++;
    q.lastTimeoutNs = now;
    const module = u.flavour.module;
    const netdev = emuNetdev(u.info.unit);
    kernelLogRaw(
      host,
      `${module} ${u.info.pci} ${netdev}: NETDEV WATCHDOG: CPU: ${s.engine.cpu}: transmit queue ${q.txq} timed out ${waitedMs} ms`,
    );
    for (const line of timeoutBlock(u, s)) kernelLogRaw(host, `${host.logPrefix}${line}`);
    break; // dev_watchdog reports one queue per pass
  }
}

/** The IPoIB queue an `ipoib-timeout` fault takes on engine `engine`: the engine's first one, or null. */
export function ipoibTimeoutVictim(u: EmuUnit, engine: number): Sender | null {
  return ipoibQueues(u).find((s) => s.engine.idx === engine && s.spec.load > 0) ?? null;
}

/** Refuse an `ipoib-timeout` fault aimed at an engine without an IPoIB queue (a usage error). */
export function checkIpoibTimeout(u: EmuUnit, f: FaultSpec): void {
  const which = f.engine === null ? u.info.engineIds : [f.engine];
  const missing = which.filter((e) => ipoibTimeoutVictim(u, e) === null);
  if (f.engine === null ? missing.length === which.length : missing.length > 0) {
    const where = f.engine === null ? 'no engine has' : `engine ${f.engine} has no`;
    throw usageError(
      `--fault ${JSON.stringify(f.text)}: ${where} IPoIB queue in workload ${JSON.stringify(u.workload.name)}; use a workload with IPoIB queues (ipoib, or mixed:ipoib=1)`,
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
