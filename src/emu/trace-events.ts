// The emulator's trace switch (`--trace-events`): as if someone had enabled, in tracefs, the events that show
// senders going to sleep on an engine's dmawait and being woken: for a QP hfi1_qpsleep and hfi1_iowait_set (its
// IOWAIT_PENDING_IB bit set as it leaves the send engine, hfi1_qp_unbusy), then hfi1_qpwakeup and hfi1_iowait_clear
// (hfi1_qp_wakeup, hfi1_qp_schedule, qp.c); for a PSM queue hfi1_usdma_defer and hfi1_usdma_activate (user_sdma.c);
// hfi2_* on an hfi2 unit. They are made from the model's event log records of kinds sleep and wakeup, kept in a
// bounded buffer as tracefs keeps its ring (the oldest overwritten), and rendered in the kernel's formats
// (trace_tx.h, trace_iowait.h) as the default `trace` output, with the files that say they are enabled. The unit
// runs the stepped model then: every sleep and wake-up is an event of its own.
// IPoIB queues trace other events (hfi1_txq_*): not made here. A PSM queue's defers that end in -EAGAIN are not in
// the model's log: only those that slept are traced.

import { SleepKind } from './iowait.js';
import { LogKind } from './log.js';
import type { EmuUnit } from './unit.js';
import { RVT_S_WAIT_DMA_DESC } from './waiter-files.js';
import { emuPid, emuQpn } from './waiters.js';

/** Events the buffer keeps (tracefs overwrites its oldest). */
export const TRACE_BUFFER_EVENTS = 4096;
const FIELDS = 5; // timeNs, kind, engine, iowait id, sleep kind
/** RVT_S_BUSY (rdmavt_qp.h): set while the send engine runs the QP, cleared by hfi1_qp_unbusy after the sleep. */
const RVT_S_BUSY = 0x2;
/** IOWAIT_PENDING_IB as the iowait events print it (1 << 0, iowait.h). */
const PENDING_IB = 0x1;

/** The sleep and wake-up records of one unit, as tracefs would hold their events. */
export class EmuTraceBuffer {
  private readonly ring = new Float64Array(TRACE_BUFFER_EVENTS * FIELDS);
  private next = 0;
  /** Records taken since tracing began, and the trace events they make (two for a QP, one for a PSM queue). */
  written = 0;
  events = 0;
  private keptEvents = 0;

  /** Take one record of the event log of a sender of `sleepKind` (kinds sleep and wakeup of QPs and PSM queues). */
  record(timeNs: number, kind: number, engine: number, id: number, sleepKind: number): void {
    if (kind !== LogKind.sleep && kind !== LogKind.wakeup) return;
    const weight = sleepKind === SleepKind.qp ? 2 : sleepKind === SleepKind.psm ? 1 : 0;
    if (weight === 0) return;
    const o = this.next * FIELDS;
    if (this.written >= TRACE_BUFFER_EVENTS) this.keptEvents -= this.ring[o + 4] === SleepKind.qp ? 2 : 1;
    this.ring[o] = timeNs;
    this.ring[o + 1] = kind;
    this.ring[o + 2] = engine;
    this.ring[o + 3] = id;
    this.ring[o + 4] = sleepKind;
    this.next = (this.next + 1) % TRACE_BUFFER_EVENTS;
    this.written++;
    this.events += weight;
    this.keptEvents += weight;
  }

  /** The records kept, oldest first. */
  private *kept(): Generator<[timeNs: number, kind: number, engine: number, id: number, sleepKind: number]> {
    const n = Math.min(this.written, TRACE_BUFFER_EVENTS);
    const start = this.written > TRACE_BUFFER_EVENTS ? this.next : 0;
    for (let k = 0; k < n; k++) {
      const o = ((start + k) % TRACE_BUFFER_EVENTS) * FIELDS;
      const r = this.ring;
      yield [r[o] as number, r[o + 1] as number, r[o + 2] as number, r[o + 3] as number, r[o + 4] as number];
    }
  }

  /** The `trace` file of `u`: the header, then one line per event, oldest first. */
  text(u: EmuUnit): string {
    const m = u.flavour.module;
    const pci = u.info.pci;
    const lines: string[] = [];
    for (const [timeNs, kind, engine, id, sleepKind] of this.kept()) {
      const sender = u.senders[id];
      const cpu = u.engineById(engine)?.cpu ?? 0;
      const ts = stamp(timeNs);
      const asleep = kind === LogKind.sleep;
      if (sleepKind === SleepKind.qp) {
        const qpn = emuQpn(id);
        const iowait = kernelAddress(0x100000000n, u.info.unit, id);
        const task = asleep ? taskColumn(`kworker/${cpu}:1H`, 400 + cpu, cpu, 'd..2.') : taskColumn('<idle>', 0, cpu, 'd.h1.');
        const flags = `flags 0x${RVT_S_WAIT_DMA_DESC.toString(16)}`;
        if (asleep) {
          const sFlags = (RVT_S_WAIT_DMA_DESC | RVT_S_BUSY).toString(16);
          lines.push(
            `${task}${ts}: ${m}_qpsleep: [${pci}] qpn 0x${qpn.toString(16)} ${flags} s_flags 0x${sFlags} ps_flags 0x0 iow_flags 0x0`,
          );
          lines.push(`${task}${ts}: ${m}_iowait_set: iowait 0x${iowait} qp ${qpn} flags 0x0 flag 0x${PENDING_IB.toString(16)}`);
        } else {
          lines.push(
            `${task}${ts}: ${m}_qpwakeup: [${pci}] qpn 0x${qpn.toString(16)} ${flags} s_flags 0x0 ps_flags 0x0 iow_flags 0x${PENDING_IB.toString(16)}`,
          );
          lines.push(
            `${task}${ts}: ${m}_iowait_clear: iowait 0x${iowait} qp ${qpn} flags 0x${PENDING_IB.toString(16)} flag 0x${PENDING_IB.toString(16)}`,
          );
        }
      } else if (sleepKind === SleepKind.psm) {
        const pq = kernelAddress(0x200000000n, u.info.unit, id);
        const wait = kernelAddress(0x200000040n, u.info.unit, id);
        if (asleep) {
          const sde = kernelAddress(0x300000000n, u.info.unit, engine);
          const task = taskColumn(`mpi_rank_${sender?.rank ?? id}`, emuPid(id, u.info.unit), cpu, 'd..2.');
          lines.push(`${task}${ts}: ${m}_usdma_defer: [${pci}] pq ${pq} sde ${sde} wait ${wait} engine ${engine} empty 1`);
        } else {
          lines.push(
            `${taskColumn('<idle>', 0, cpu, 'd.h1.')}${ts}: ${m}_usdma_activate: [${pci}] pq ${pq} wait ${wait} reason 0`,
          );
        }
      }
    }
    return `${HEADER.replace('%N', `${this.keptEvents}/${this.events}`)}${lines.map((l) => `${l}\n`).join('')}`;
  }
}

const HEADER = `# tracer: nop
#
# entries-in-buffer/entries-written: %N   #P:16
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
`;

/** The default output's context columns: `%16s-%-7d [%03d] flags `. */
function taskColumn(comm: string, pid: number, cpu: number, flags: string): string {
  return `${comm.padStart(16)}-${String(pid).padEnd(7)} [${String(cpu).padStart(3, '0')}] ${flags} `;
}

/** The trace clock (the emulator's virtual seconds since boot, as /proc/uptime gives them): `%5lu.%06lu`. */
function stamp(timeNs: number): string {
  const us = Math.floor(timeNs / 1000);
  return `${String(Math.floor(us / 1e6)).padStart(5)}.${String(us % 1e6).padStart(6, '0')}`;
}

/** A made-up kernel address, stable per unit and object: ffff8881_… (the direct map). */
function kernelAddress(base: bigint, unit: number, n: number): string {
  return (0xffff888000000000n + base + BigInt(unit) * 0x10000000n + BigInt(n) * 0x1000n).toString(16);
}

const buffers = new WeakMap<EmuUnit, EmuTraceBuffer>();

/**
 * Turn the unit's trace switch on (idempotent): its sleep and wake-up records are traced from now on. The unit must
 * run the stepped model: the fast one skips periodic stretches whole, their records never written one by one.
 */
export function enableTraceEvents(u: EmuUnit): EmuTraceBuffer {
  let b = buffers.get(u);
  if (b) return b;
  if (u.model !== 'stepped') throw new Error("the trace switch needs the stepped model: build the unit with model: 'stepped'");
  const buffer = new EmuTraceBuffer();
  u.host.log.tap = (timeNs, kind, engine, a) => {
    const sender = u.senders[a];
    buffer.record(timeNs, kind, engine, a, sender?.wait.id === a ? sender.wait.sleepKind : SleepKind.none);
  };
  buffers.set(u, buffer);
  b = buffer;
  return b;
}

/** The tracefs files of the unit (paths under the sysroot, and their text); none when its trace switch is off. */
export function traceEventFiles(u: EmuUnit): [path: string, text: string][] {
  const b = buffers.get(u);
  if (!b) return [];
  const m = u.flavour.module;
  const on = '1\n';
  const root = 'sys/kernel/tracing';
  return [
    [`${root}/tracing_on`, on],
    ...['qpsleep', 'qpwakeup', 'usdma_defer', 'usdma_activate'].map((e): [string, string] => [
      `${root}/events/${m}_tx/${m}_${e}/enable`,
      on,
    ]),
    ...['iowait_set', 'iowait_clear'].map((e): [string, string] => [`${root}/events/${m}_iowait/${m}_${e}/enable`, on]),
    [`${root}/trace`, b.text(u)],
  ];
}
