// The ports of the emulated adapter (struct hfi1_pportdata / hfi2_pportdata): each with its link as the RDMA core
// shows it and its own VL-to-engine map (ppd->sdma_map, built by sdma_map_init for every port over the same engine
// window). The engines are the device's, shared by the ports (one dd->per_sdma serves both ports of a CN5000).
//
// What an engine does when one of two ports goes down is not settled by the public sources: on a CN5000 a port's
// link down goes through the per-port link-down handling of the cport build (hfi2_cport_handle_linkup_change calls
// hfi2_start_linkdown_handling, intr.c of hfi2), not the device-wide SPC freeze that WFR takes
// (handle_linkup_change: start_freeze_handling with FREEZE_LINK_DOWN), and that handler's body is not public.
// The choice here: an engine takes the link-down path (e85 → s80 → s82 → s20_Idle) only when every port whose VL
// map maps it is down, and the first of those ports to come back brings it to s99_Running again (e30). With one
// port that is the driver's behaviour on WFR.
//
// Which port an engine's traffic leaves by is not something the driver fixes (a QP is bound to its port; an engine
// serves both): the emulator sends each engine's traffic through one ACTIVE port that maps it, the engines taking
// the ACTIVE ports in turn by their place in the window (a choice), and moves it when a port goes down or comes up.
import type { PortLink } from '../backend.js';
import { usageError } from '../errors.js';
import type { VlMap } from '../progress/select.js';
import { PortCounterState } from './port-counters.js';

/** A port's logical state as the emulator moves it (enum ib_port_state names). */
export type PortStateName = 'INIT' | 'ACTIVE' | 'DOWN';
/** A port's physical state as the emulator moves it (enum ib_port_phys_state names). */
export type PhysStateName = 'Polling' | 'LinkUp' | 'Disabled';

/** One port. */
export interface EmuPort {
  /** RDMA port number, from 1. */
  readonly port: number;
  /**
   * In use (`--active-ports`): it comes up at driver load. A port not in use stays DOWN with its physical state
   * Disabled (a choice: an unused port of a CN5000 reads as administratively disabled, so it is told apart from a
   * port that lost its link, which polls).
   */
  readonly used: boolean;
  state: PortStateName;
  physState: PhysStateName;
  /** ppd->sdma_map: the port's VL-to-engine map (engine positions in the unit's window). */
  readonly vlMap: VlMap;
  /** Its counters and credit state (port-counters.ts). */
  readonly counters: PortCounterState;
}

/** The RDMA core's numbers of the states the emulator uses (enum ib_port_state, enum ib_port_phys_state). */
const STATE_NUMBER: Readonly<Record<PortStateName, number>> = { DOWN: 1, INIT: 2, ACTIVE: 4 };
const PHYS_NUMBER: Readonly<Record<PhysStateName, number>> = { Polling: 2, Disabled: 3, LinkUp: 5 };

/**
 * The ports of a unit: `count` ports, those in `active` (every port when null) coming up at driver load (INIT,
 * LinkUp until the port goes ACTIVE), the others DOWN and Disabled. Every port maps the engines with `vlMap`;
 * `rateBytesPerNs` is the link rate the port's counters measure load against.
 */
export function makePorts(count: number, active: readonly number[] | null, vlMap: VlMap, rateBytesPerNs = 12.5): EmuPort[] {
  return Array.from({ length: count }, (_, i) => {
    const port = i + 1;
    const used = active === null || active.includes(port);
    return {
      port,
      used,
      state: used ? 'INIT' : 'DOWN',
      physState: used ? 'LinkUp' : 'Disabled',
      vlMap,
      counters: new PortCounterState(rateBytesPerNs),
    };
  });
}

/**
 * The port each engine (by window position) transmits on now: among the ACTIVE ports that map it, the one its
 * position picks in turn; null when none is ACTIVE.
 */
export function transmitPorts(ports: readonly EmuPort[], engines: number): (EmuPort | null)[] {
  return Array.from({ length: engines }, (_, pos) => {
    const up = ports.filter((p) => p.state === 'ACTIVE' && mapsEngine(p, pos));
    return up.length === 0 ? null : (up[pos % up.length] as EmuPort);
  });
}

/** The port numbers `1-2` or `1` as text, for messages. */
export function portsText(count: number): string {
  return count === 1 ? 'port 1' : `ports 1-${count}`;
}

/**
 * Check `--active-ports` against the adapter: every number a port of it (1..count), none twice, at least one.
 * A usage error names the ports the adapter has.
 */
export function checkActivePorts(active: readonly number[], count: number): number[] {
  const where = `the adapter has ${portsText(count)}${count === 1 ? '' : ' (--ports 2)'}`;
  if (active.length === 0) throw usageError(`--active-ports names no port; ${where}`);
  const seen = new Set<number>();
  for (const p of active) {
    if (!Number.isInteger(p) || p < 1 || p > count) throw usageError(`--active-ports: there is no port ${p}; ${where}`);
    if (seen.has(p)) throw usageError(`--active-ports names port ${p} twice`);
    seen.add(p);
  }
  return [...seen].sort((a, b) => a - b);
}

/** The port's link now, with the rate of the chip's port. */
export function portLink(p: EmuPort, rate: string): PortLink {
  return { port: p.port, state: p.state, physState: p.physState, rate };
}

/** The three port files as the RDMA core prints them (`4: ACTIVE\n`, `5: LinkUp\n`, the rate line). */
export function portFileTexts(p: EmuPort, rate: string): { state: string; phys_state: string; rate: string } {
  return {
    state: `${STATE_NUMBER[p.state]}: ${p.state}\n`,
    phys_state: `${PHYS_NUMBER[p.physState]}: ${p.physState}\n`,
    rate: `${rate}\n`,
  };
}

/** Whether port `p`'s VL map maps the engine at window position `pos`. */
export function mapsEngine(p: EmuPort, pos: number): boolean {
  return (p.vlMap.engineToVl[pos] ?? -1) >= 0;
}

/** The engine at `pos` has lost every port that maps it: it takes the link-down path (the choice above). */
export function cutOff(ports: readonly EmuPort[], pos: number): boolean {
  return ports.every((p) => p.state === 'DOWN' || !mapsEngine(p, pos));
}

/** The port the unit's single-port view shows (the contract's link()): the first ACTIVE port, else the first in use. */
export function shownPort(ports: readonly EmuPort[]): EmuPort {
  return ports.find((p) => p.state === 'ACTIVE') ?? ports.find((p) => p.used) ?? (ports[0] as EmuPort);
}
