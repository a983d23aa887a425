// Driving the engine state machine (sdma.c): events through step() of src/progress/state.ts, the CTRL
// write on entry (the state names, sdma.c), the workers the transitions schedule (halt-wait, hw clean-up, sw
// clean-up), hw start-up (init_sdma_regs, sdma.c) and the engine-error interrupt (__sdma_process_event, sdma.c; SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h).
import { ENG_ERR_BITS, SDMA_ENG_ERR_HALT_BIT, SDMA_ENG_ERR_HALT_MASK } from '../progress/constants.js';
import { isLoggedError } from '../progress/csr.js';
import { emptyDescriptor, hex } from '../progress/descriptor.js';
import { inProcessFor } from '../progress/driver.js';
import { ctrlOnEntry, EVENT_NAMES, type EventName, STATE_NAMES, step } from '../progress/state.js';
import type { Engine } from './engine.js';
import { Ev, kernelLogLine } from './host.js';
import { LogKind } from './log.js';
import { descAvail, flush, makeProgress } from './retire.js';
import { decodeSlot, errorDumpLines, upstreamDumpLines } from './ring-lines.js';

export const HALT_WAIT_LIMIT_NS = 10_000_000; // the event names, sdma.c: halt-wait gives up after 10 ms
const HW_CLEAN_POLL_NS = 10_000; // the event names, sdma.c: 10 µs steps
const SW_CLEAN_DELAY_NS = 3_000;
const ENG_ERR_COR_MASK = 0xf8_0000; // SEND_DMA_ENG_ERR_STATUS bits 19-23, the correctable (…CorErr) ones
const ENG_ERR_HALT_BIT = 1 << SDMA_ENG_ERR_HALT_BIT; // SDmaHaltErr, the chip reporting its own halt
const CLEAN_POLLS = 100; // sdma_hw_clean_up_worker (Cornelis hfi1, hfi2): gives up when ++count exceeds 100

/**
 * The engine-error state dump (dump_sdma_state, sdma.c), every descriptor from the head to the tail. Upstream:
 * `SDMA (%u) descq_head: %u descq_tail: %u freecnt: %u FLE %d`, then three-line descriptor records. The Cornelis
 * hfi1 and hfi2: `SDMA (%u) descq_head %u, descq_tail %u, used %u, avail %u, FLE %d%s` with `used` their
 * sdma_descq_inprocess (the real in-flight count) and, when it is not 0, the suffix `, descriptor print prefix
 * "[desc T]"` naming the device's next print tag, which every descriptor line of the dump then carries.
 */
export function errorDump(e: Engine): string[] {
  const f = e.host.cfg.flavour;
  const head = e.descqHead & e.mask;
  const tail = e.descqTail & e.mask;
  const fle = e.flushlist.length > 0 ? 1 : 0;
  const scratch = emptyDescriptor();
  const n = (e.descqTail - e.descqHead) >>> 0;
  const jkr = e.host.cfg.jkr;
  if (f.driver === 'upstream') {
    const out = [`SDMA (${e.idx}) descq_head: ${head} descq_tail: ${tail} freecnt: ${e.freecnt()} FLE ${fle}`];
    for (let k = 0; k < n; k++) {
      const s = (e.descqHead + k) & e.mask;
      out.push(...upstreamDumpLines(e.descq, s, decodeSlot(jkr, e.descq, s, scratch)));
    }
    return out;
  }
  const used = inProcessFor(f.driver, e.descqCnt, e.descqHead, e.descqTail);
  const tag = used === 0 ? 0 : e.host.sdmaPrintTag++;
  const suffix = used === 0 ? '' : `, descriptor print prefix "[desc ${tag}]"`;
  const out = [`SDMA (${e.idx}) descq_head ${head}, descq_tail ${tail}, used ${used}, avail ${e.freecnt()}, FLE ${fle}${suffix}`];
  for (let k = 0; used !== 0 && k < n; k++) {
    const s = (e.descqHead + k) & e.mask;
    out.push(...errorDumpLines(tag, e.descq, s, decodeSlot(jkr, e.descq, s, scratch)));
  }
  return out;
}

/** Index of a state or event name, for the event log. */
export function stateIndex(name: string): number {
  return (STATE_NAMES as readonly string[]).indexOf(name);
}

/** hw start-up (init_sdma_regs, sdma.c): LEN_GEN again, TAIL 0, *head_dma 0, clear ENG_ERR bit 18. */
export function hwStartUp(e: Engine): void {
  const c = e.chip;
  c.writeLenGen(e.descqCnt);
  c.hwTail = 0;
  c.hwHead = 0;
  c.headDma = 0;
  c.errStatus &= ~(1 << 18);
}

/**
 * sdma_process_event (__sdma_process_event, sdma.c): one event under tail_lock + head_lock. `locked` when the caller is
 * already inside a head_lock write section (the engine-error handler).
 */
export function processEvent(e: Engine, event: EventName, locked = false): void {
  if (!locked) e.lockHead();
  const r = step(e.state, event, e.go);
  const s = e.host.sched;
  e.host.log.write(
    s.nowNs,
    LogKind.event,
    e.idx,
    EVENT_NAMES.indexOf(event),
    stateIndex(r.from),
    r.listed ? stateIndex(r.to) : -1,
  );
  if (r.listed) {
    for (const a of r.actions) {
      if (a === 'hw-start-up') hwStartUp(e);
      else if (a === 'schedule-halt-wait') {
        e.haltWaitStartNs = s.nowNs;
        s.after(e.rng.int(80_000, 120_000), Ev.haltWait, e.idx, 0, e.pos);
      } else if (a === 'start-hw-clean-up') s.after(HW_CLEAN_POLL_NS, Ev.hwCleanPoll, e.idx, 0, e.pos);
      else if (a === 'schedule-sw-clean-up') s.after(SW_CLEAN_DELAY_NS, Ev.swCleanUp, e.idx, 0, e.pos);
    }
    e.go = r.go;
    if (r.to !== r.from) {
      if (r.actions.includes('flush-before-running')) flush(e);
      e.previousState = e.state;
      e.state = r.to;
      const ctrl = ctrlOnEntry(r.to);
      const extra = e.host.cfg.extraCtrl; // JKR threshold / single-descriptor bits (0 on WFR)
      e.pSendDmaCtrl = Number(ctrl.shadow) | extra;
      e.chip.writeCtrl(Number(ctrl.written) | extra);
    }
    if (r.actions.includes('progress-after')) makeProgress(e, 0, false);
  }
  if (e.state === 's99_Running') descAvail(e, e.freecnt());
  if (!locked) e.lockHead();
}

/**
 * The halt-wait worker (sdma_err_halt_wait, sdma.c): poll STATUS.ENG_HALTED, e15 when halted or after 10 ms. Under
 * the fault `halt-stuck` the work never runs (as on a wedged workqueue): the engine stays in s50_HwHaltWait.
 */
export function haltWait(e: Engine): void {
  if (e.chip.haltStuck) return;
  const s = e.host.sched;
  if (e.chip.halted || e.host.gone) {
    processEvent(e, 'e15_HwHaltDone');
    return;
  }
  if (s.nowNs - e.haltWaitStartNs >= HALT_WAIT_LIMIT_NS) {
    e.host.log.write(s.nowNs, LogKind.haltWaitTimeout, e.idx, 0, 0, 0);
    kernelLog(e, `SDMA engine ${e.idx} - timeout waiting for engine to halt`);
    processEvent(e, 'e15_HwHaltDone');
    return;
  }
  s.after(e.rng.int(80_000, 120_000), Ev.haltWait, e.idx, 0, e.pos);
}

/**
 * The hw clean-up (sdma_hw_clean_up_task / _worker, sdma.c): busy-poll STATUS.ENG_CLEANED_UP, then e25. Upstream
 * polls in a tasklet with no limit; the Cornelis hfi1 and hfi2 poll from a work item and give up after 100 polls of
 * 10 µs, logging the timeout, then go on as if cleaned.
 */
export function hwCleanPoll(e: Engine): void {
  if (e.chip.cleanedUp || e.host.gone) {
    e.cleanPolls = 0;
    processEvent(e, 'e25_HwCleanUpDone');
  } else if (e.host.cfg.flavour.driver !== 'upstream' && ++e.cleanPolls > CLEAN_POLLS) {
    e.cleanPolls = 0;
    kernelLog(e, `SDMA engine ${e.idx} - timeout waiting for engine to clean`);
    processEvent(e, 'e25_HwCleanUpDone');
  } else e.host.sched.after(HW_CLEAN_POLL_NS, Ev.hwCleanPoll, e.idx, 0, e.pos);
}

/** The engine-error interrupt (__sdma_process_event, sdma.c): count, e60 for a halt-class bit, log unless only SDmaHaltErr. */
export function engineError(e: Engine, status: number): void {
  if (status === 0) return;
  e.lockHead();
  e.errCnt++;
  const halts = (BigInt(status) & SDMA_ENG_ERR_HALT_MASK) !== 0n;
  e.host.log.write(e.host.sched.nowNs, LogKind.engineError, e.idx, status, halts ? 1 : 0, 0);
  if (halts) processEvent(e, 'e60_HwHalted', true);
  // The Cornelis hfi1 and hfi2 also stay silent when nothing but SDmaHaltErr and the correctable bits is set
  // (sdma_engine_error, sdma.c: status & ~(SDmaHaltErr | ALL_SDMA_ENG_COR_ERRS), bits 6 and 19-23).
  const quiet = e.host.cfg.flavour.driver !== 'upstream' && (status & ~(ENG_ERR_COR_MASK | ENG_ERR_HALT_BIT)) === 0;
  if (isLoggedError(BigInt(status)) && !quiet) {
    kernelLog(e, `SDMA (${e.idx}) engine error: ${hex(status)} state ${e.state}`);
    for (const line of errorDump(e)) kernelLog(e, line);
  }
  e.lockHead();
}

/** Per-bit error counters summed over engines (the debugfs counters, debugfs.c) are kept by the unit; this names a bit. */
export function errorBitName(bit: number): string {
  return ENG_ERR_BITS[bit]?.name ?? `bit${bit}`;
}

/** Append a kernel log line (the driver log lines, sdma.c text) at printk `level` (dd_dev_err unless told). */
export function kernelLog(e: Engine, text: string, level?: number): void {
  kernelLogLine(e.host, text, level);
}
