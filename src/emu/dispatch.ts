// Dispatching scheduler events to the parts of a unit, applying faults (__sdma_process_event, sdma.c life cycles), and the
// periodic check for lost wake-ups.

import { SDMA_ENG_ERR_HALT_BIT } from '../progress/constants.js';
import type { Engine } from './engine.js';
import { FAULT_NAMES, type FaultSpec } from './faults.js';
import { Ev, KERN_INFO } from './host.js';
import { harvestNeed, type IoWait } from './iowait.js';
import { assignTransmitPorts, LINK_FLAP_DOWN_MS, setPortLinks } from './link.js';
import { LogKind } from './log.js';
import { armLostWakeup, lostWakeupFaultOn } from './lost-wakeup.js';
import { armIpoibTimeout, netdevWatchdog } from './netdev.js';
import type { EmuPort } from './ports.js';
import { engineInterrupt, flushWorker, swCleanUp } from './retire.js';
import { engineError, haltWait, hwCleanPoll, kernelLog, processEvent } from './statemachine.js';
import type { EmuUnit } from './unit.js';
import { modelWaiter } from './waiters.js';

const FREEZE_TO_FROZEN_NS = 50_000; // e80/e85 → sdma_freeze (e81)
const FROZEN_TO_UNFREEZE_NS = 1_000_000; // e81 → sdma_unfreeze (e82)
const CHECK_INTERVAL_NS = 1_000_000;

/** Run the event the scheduler is dispatching. */
export function dispatch(u: EmuUnit): void {
  const s = u.host.sched;
  const a = s.a;
  switch (s.kind) {
    case Ev.chipRun:
      u.engineById(a)?.chip.run(s.b);
      break;
    case Ev.chipDone:
      u.engineById(a)?.chip.done(s.b);
      break;
    case Ev.interrupt: {
      const e = u.engineById(a) as Engine;
      const bits = e.chip.takeStatus();
      if (u.host.gone) break;
      u.vectorCounts[e.pos] = (u.vectorCounts[e.pos] ?? 0) + 1;
      if (bits === 0)
        kernelLog(e, `SDMA engine ${a} interrupt, but no status bits set`, KERN_INFO); // dd_dev_info_ratelimited, chip.c
      else engineInterrupt(e, bits);
      break;
    }
    case Ev.idleTimer:
      u.engineById(a)?.chip.idleTimer(s.b);
      break;
    case Ev.engineErrorInterrupt: {
      const e = u.engineById(a) as Engine;
      const status = e.chip.takeErrors();
      for (let bit = 0; bit < 24; bit++) if (status & (1 << bit)) u.errBitCounts[bit] = (u.errBitCounts[bit] ?? 0) + 1;
      engineError(e, status);
      break;
    }
    case Ev.haltWait:
      haltWait(u.engineById(a) as Engine);
      break;
    case Ev.hwCleanPoll:
      hwCleanPoll(u.engineById(a) as Engine);
      break;
    case Ev.swCleanUp: {
      const e = u.engineById(a) as Engine;
      swCleanUp(e, () => processEvent(e, 'e40_SwCleaned', true));
      break;
    }
    case Ev.flushWorker:
      flushWorker(u.engineById(a) as Engine);
      break;
    case Ev.chipHaltDone:
      u.engineById(a)?.chip.haltDone();
      break;
    case Ev.chipCleanUpDone:
      u.engineById(a)?.chip.cleanUpDone();
      break;
    case Ev.senderRun:
      u.senders[a]?.run();
      break;
    case Ev.senderTimeout:
      u.senders[a]?.timeout(s.b);
      break;
    case Ev.fault:
      applyFault(u, u.faults[a] as FaultSpec);
      break;
    case Ev.freezeStep:
      freezeStep(u, u.engineById(a) as Engine, s.b);
      break;
    case Ev.portActive:
      if (a < 0) for (const e of u.engines) processEvent(e, 'e10_GoHwStart');
      else {
        // The ports in use come up (the others stay down); the engines go running (sdma_all_running, sdma.c).
        for (const p of u.host.ports) if (p.state === 'INIT') p.state = 'ACTIVE';
        assignTransmitPorts(u);
        for (const e of u.engines) processEvent(e, 'e30_GoRunning');
        for (const snd of u.senders) snd.start(s.nowNs + u.host.rng.int(0, 10_000));
      }
      break;
    case Ev.check:
      checkLostWakeups(u);
      s.after(CHECK_INTERVAL_NS, Ev.check, 0);
      break;
    case Ev.netdevWatchdog:
      netdevWatchdog(u);
      break;
    case Ev.linkFlapUp: {
      const p = u.host.ports[a];
      if (p) for (const e of setPortLinks(u, [p], true)) processEvent(e, 'e30_GoRunning');
      break;
    }
  }
}

function targets(u: EmuUnit, f: FaultSpec): Engine[] {
  if (f.name === 'link-down' || f.name === 'link-up' || f.name === 'link-flap') return linkTargets(u, f);
  if (f.name === 'fabric-stall') return fabricTargets(u, f);
  return f.engine === null ? u.engines : [u.engineAt(f.engine)];
}

/** The ports a port fault names: its port, or every port. */
function faultPorts(u: EmuUnit, f: FaultSpec): EmuPort[] {
  const ports = u.host.ports;
  return f.port === null ? ports : [ports[f.port - 1] as EmuPort];
}

/**
 * A link fault moves its port (every port when it names none); the engines it reaches are those whose ports it
 * changed as a whole: link-down and link-flap, the engines left with no port up; link-up, those that had none
 * (ports.ts). A flap schedules its port's return.
 */
function linkTargets(u: EmuUnit, f: FaultSpec): Engine[] {
  const ports = faultPorts(u, f);
  const up = f.name === 'link-up';
  const reached = setPortLinks(u, ports, up, f.name === 'link-flap');
  if (f.name === 'link-flap') {
    for (const p of ports) u.host.sched.after(LINK_FLAP_DOWN_MS * 1e6, Ev.linkFlapUp, p.port - 1);
  }
  return reached;
}

/** `fabric-stall`: the port's credits stop; the engines transmitting on it are reached (their chips stop fetching). */
function fabricTargets(u: EmuUnit, f: FaultSpec): Engine[] {
  const ports = faultPorts(u, f);
  for (const p of ports) p.counters.stopCredits(u.host.sched.nowNs);
  return u.engines.filter((e) => e.chip.txPort !== null && ports.includes(e.chip.txPort));
}

/** Apply a fault when its time comes. */
export function applyFault(u: EmuUnit, f: FaultSpec): void {
  const s = u.host.sched;
  if (f.name === 'netdev-unregister' && u.host.netdevRegistered) {
    u.host.netdevRegistered = false;
    for (const snd of u.senders) snd.netdevUnregistered();
  }
  const reached = targets(u, f);
  // A link fault that reaches no engine (one of two ports, the other up) is still a fault that took effect.
  if (reached.length === 0) u.host.log.write(s.nowNs, LogKind.fault, -1, FAULT_NAMES.indexOf(f.name), f.param, f.port ?? 0);
  for (const e of reached) {
    u.host.log.write(s.nowNs, LogKind.fault, e.idx, FAULT_NAMES.indexOf(f.name), f.param, 0);
    const c = e.chip;
    switch (f.name) {
      case 'stop-fetch':
        c.stopFetch = true;
        break;
      case 'lost-interrupt':
        c.lostInterrupt = true;
        break;
      case 'head-writeback-stall':
        c.headWritebackStall = true;
        break;
      case 'engine-error':
        c.raiseError(1 << f.param);
        break;
      case 'slow':
        c.slow = f.param;
        c.kick();
        break;
      case 'freeze':
      case 'link-down':
      case 'link-flap': {
        // A flap goes down as link-down does; its end brings the engine back (Ev.linkFlapUp).
        // The SPC freeze is one chip state: a freeze while frozen joins the handling already
        // under way (one sdma_freeze, one unfreeze) rather than starting a second one that would
        // unfreeze, and reset, a chip the driver has already restarted.
        const already = c.frozen;
        c.frozen = true;
        c.stop();
        processEvent(e, f.name === 'freeze' ? 'e80_HwFreeze' : 'e85_LinkDown');
        if (!already) s.after(FREEZE_TO_FROZEN_NS, Ev.freezeStep, e.idx, 1, e.pos);
        break;
      }
      case 'link-up':
        processEvent(e, 'e30_GoRunning');
        break;
      case 'fabric-stall':
        c.stop();
        break;
      case 'ipoib-timeout':
        armIpoibTimeout(u, e.idx);
        break;
      case 'device-gone':
        u.host.gone = true;
        c.stop();
        break;
      case 'lost-wakeup':
        armLostWakeup(u.host, e, u.senders, f, u.vectorCounts);
        break;
      case 'halt-stuck':
        // The chip halts and reports it; the handler's e60 takes the engine to s50_HwHaltWait, whose halt-wait work
        // never runs (statemachine.ts haltWait), and the error bit stays latched.
        c.haltStuck = true;
        c.raiseError(1 << SDMA_ENG_ERR_HALT_BIT);
        break;
    }
  }
}

/** SPC freeze handling (__sdma_process_event, sdma.c): sdma_freeze (e81), then the chip unfreezes (e82). */
function freezeStep(u: EmuUnit, e: Engine, step: number): void {
  if (step === 1) {
    processEvent(e, 'e81_HwFrozen');
    u.host.sched.after(FROZEN_TO_UNFREEZE_NS, Ev.freezeStep, e.idx, 2, e.pos);
    return;
  }
  const c = e.chip;
  c.frozen = false;
  c.stop();
  c.hwHead = 0;
  c.halted = false;
  processEvent(e, 'e82_HwUnfreeze');
}

/**
 * Whether the check below would look at a waiter of `e` now: the engine runs with its ring retired and its chip
 * quiet, and a waiter with a wake-up is on dmawait. Reads only (the fast model asks it after every event of the
 * engine: a stretch in which it held at some moment is never skipped).
 */
export function lostWakeupPossible(u: EmuUnit, e: Engine): boolean {
  if (e.dmawait.length === 0 || e.descqHead !== e.descqTail || !e.running() || !e.chip.quiescent() || u.host.gone) return false;
  return e.dmawait.some((w) => w.hasWakeup && !w.stuck);
}

/**
 * A lost wake-up: the engine runs, the chip has nothing left to do (so no interrupt will come),
 * software has retired everything, and a waiter that would fit is still on dmawait.
 */
export function checkLostWakeups(u: EmuUnit): number {
  let lost = 0;
  for (const e of u.engines) {
    if (!e.running() || !e.chip.quiescent() || e.descqHead !== e.descqTail || u.host.gone) continue;
    const free = e.freecnt();
    for (const w of e.dmawait) {
      // A waiter whose wake-up the fault `ipoib-timeout` took is that fault's, not a lost wake-up of the protocol.
      if (!w.hasWakeup || w.stuck) continue;
      // A sender woken by the last retirement and not yet run takes the room first (sdma_desc_avail hands out the
      // free count in list order: with pad descriptors one request may take all of it); the next retirement wakes w.
      if (harvestNeed(w) <= free && !w.lostReported && !u.senders.some((s) => s.wokenPending && s.engine === e)) {
        w.lostReported = true;
        lost++;
        u.host.stats.lostWakeups++;
        u.host.stats.violate(lostWakeupText(u, e, w, free));
        u.host.log.write(u.host.sched.nowNs, LogKind.violation, e.idx, w.id, free, 0);
      }
      break;
    }
  }
  return lost;
}

/** The sentence of one lost wake-up: who sleeps, on what, why nothing will wake it, and the fault that made it. */
function lostWakeupText(u: EmuUnit, e: Engine, w: IoWait, free: number): string {
  const m = modelWaiter(u, e, w);
  const who =
    m.kind === 'qp'
      ? `QP 0x${m.qpn.toString(16)}`
      : m.kind === 'psm'
        ? `PSM writer ${m.pid} (${m.command})`
        : `IPoIB queue ${m.netdev} txq ${m.txq ?? '?'}`;
  const until = m.kind === 'psm' ? ' until its 1 s timeout' : '';
  const fault = lostWakeupFaultOn(u.host, e.idx);
  const seeded = u.senders[w.id]?.seeded === true;
  return (
    `lost wake-up on engine ${e.idx}: ${who} sleeps on dmawait needing ${m.descriptorsNeeded} descriptor(s) while ${free} are free, ` +
    `and the engine is running with an empty ring and no interrupt to come, so nothing wakes it${until}` +
    (fault ? ` (expected: --fault ${fault} opens this window on purpose)` : '') +
    (seeded ? ' (expected: the unit started from a state with it asleep there)' : '')
  );
}
