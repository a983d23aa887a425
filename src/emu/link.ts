// A port's link going down and coming back as the emulated host shows it: the port's state, its counters (LinkDowned,
// SwLinkUp, the packets the engines lose), the ports the engines transmit on, and the driver's link lines in the
// kernel log, in the order chip.c prints them (all dd_dev_info, KERN_INFO):
//   down: `8051: Link down` (handle_8051_interrupt), then handle_link_down takes the link offline (goto_offline:
//   `physical state changed to PHYS_OFFLINE (0x9), phy 0x90` from wait_phys_link_offline_substates, then
//   `logical state changed to PORT_DOWN (0x1)` from update_statusp), reads the reason (`Link down reason: Unexpected
//   link down`) and starts polling (`physical state changed to PHYS_POLL (0x2), phy 0x20`); a link that does not
//   train back adds `Link error: Failed LNI(Polling)`.
//   up: `8051: Link up`, then set_link_state's HLS_UP_INIT (`physical state changed to PHYS_LINKUP (0x5), phy 0x50`,
//   `logical state changed to PORT_INIT (0x2)`), HLS_UP_ARMED (`PORT_ARMED (0x3)`) and HLS_UP_ACTIVE (`PORT_ACTIVE
//   (0x4)`). The fabric manager's ARMED and ACTIVE requests follow at once here (a choice: the emulator has no SM).
//
// The lines name no port: hfi1 prints them with its device prefix (`hfi1_0: `), which on a one-port adapter is the
// port. How the CN5000 builds word a port's link events is not public; the emulator prints the same lines with the
// per-port prefix of hfi2's ppd_dev_info (`hfi1_0.1: `, the unit's name, a dot and the port's hardware index from 0)
// on a two-port adapter (a choice).
import type { Engine } from './engine.js';
import { KERN_INFO, kernelLogRaw } from './host.js';
import { cutOff, type EmuPort, transmitPorts } from './ports.js';
import type { EmuUnit } from './unit.js';

/** How long a `link-flap` keeps the link down before it trains back (ms of virtual time). */
export const LINK_FLAP_DOWN_MS = 200;

/** The kernel log prefix of a port's lines: the unit's on a one-port adapter, `<unit>.<pidx>: ` on two. */
export function portLogPrefix(u: EmuUnit, p: EmuPort): string {
  const prefix = u.host.logPrefix;
  return u.host.ports.length === 1 ? prefix : `${prefix.slice(0, -2)}.${p.port - 1}: `;
}

/** Point each chip at the port its engine transmits on now. */
export function assignTransmitPorts(u: EmuUnit): void {
  const tx = transmitPorts(u.host.ports, u.engines.length);
  u.engines.forEach((e, pos) => {
    e.chip.txPort = tx[pos] ?? null;
  });
}

function logDown(u: EmuUnit, p: EmuPort, trainsBack: boolean): void {
  const at = portLogPrefix(u, p);
  const lines = [
    '8051: Link down',
    'physical state changed to PHYS_OFFLINE (0x9), phy 0x90',
    'logical state changed to PORT_DOWN (0x1)',
    'Link down reason: Unexpected link down',
    'physical state changed to PHYS_POLL (0x2), phy 0x20',
  ];
  if (!trainsBack) lines.push('Link error: Failed LNI(Polling)');
  for (const line of lines) kernelLogRaw(u.host, `${at}${line}`, KERN_INFO);
}

function logUp(u: EmuUnit, p: EmuPort): void {
  const at = portLogPrefix(u, p);
  const lines = [
    '8051: Link up',
    'physical state changed to PHYS_LINKUP (0x5), phy 0x50',
    'logical state changed to PORT_INIT (0x2)',
    'logical state changed to PORT_ARMED (0x3)',
    'logical state changed to PORT_ACTIVE (0x4)',
  ];
  for (const line of lines) kernelLogRaw(u.host, `${at}${line}`, KERN_INFO);
}

/**
 * Move `ports` down (DOWN, Polling) or up (ACTIVE, LinkUp). A port that was ACTIVE counts LinkDowned (SwLinkDown,
 * ppd->link_downed) and its engines' txreqs in flight as discards; one that comes back counts SwLinkUp. `trainsBack`:
 * a down link that will train again (a flap) logs no link-training failure. Returns the engines whose every port is
 * now down (going down) or that have a port again (going up): those take the link-down path or run again.
 */
export function setPortLinks(u: EmuUnit, ports: readonly EmuPort[], up: boolean, trainsBack = false): Engine[] {
  const all = u.host.ports;
  const before = u.engines.map((e) => cutOff(all, e.pos));
  for (const p of ports) {
    const wasActive = p.state === 'ACTIVE';
    if (up) {
      if (wasActive) continue;
      p.state = 'ACTIVE';
      p.physState = 'LinkUp';
      p.counters.linkUp++;
      logUp(u, p);
    } else {
      if (p.state === 'DOWN' && p.physState === 'Polling') continue;
      if (wasActive) {
        p.counters.linkDowned++;
        for (const e of u.engines) {
          if (e.chip.txPort === p) p.counters.xmitDiscards += (e.txTail - e.txHead) & 0xffff;
        }
      }
      p.state = 'DOWN';
      p.physState = 'Polling';
      if (p.used) logDown(u, p, trainsBack);
    }
  }
  assignTransmitPorts(u);
  return u.engines.filter((e, i) => before[i] !== cutOff(all, e.pos));
}
