// Faults scheduled by time and engine: `NAME@MS[:ENGINE]` (the README's fault table), all engines when ENGINE
// is left out; the port faults take a port instead: `link-down@MS[:PORT]`, `fabric-stall@MS[:PORT]`, every port when
// PORT is left out.
// Parsing is pure; the unit applies a fault when its time comes.
import { usageError } from '../errors.js';
import { ENG_ERR_BITS } from '../progress/constants.js';
import { engErrBitByName } from '../progress/csr.js';

/** Fault names, with what each does to the model. */
export const FAULTS = {
  'stop-fetch': 'the chip stops fetching descriptors (HEAD freezes, software keeps submitting)',
  'lost-interrupt': "from then on the engine's interrupts are lost: HEAD advances, no handler runs",
  'head-writeback-stall': 'the chip stops writing HEAD to head_dma (H(D) freezes; HEAD CSR still moves)',
  'engine-error':
    'engine-error:<bit> sets a SEND_DMA_ENG_ERR_STATUS bit (0-23 or its name); halt-class bits run the error life cycle',
  'link-down':
    'the port (every port when PORT is left out) loses its link, DOWN and Polling; an engine whose every port is down freezes with the link-down flag, e85 → s80 → s82 → s20_Idle until link-up',
  'link-up': 'the port (every port when PORT is left out) is ACTIVE again; its engines go e30 → s99_Running',
  freeze: 'an SPC freeze (hardware error): e80 → s80 → e81 → s82 → e82 → s99_Running',
  slow: 'slow:<factor> divides the chip rate by factor (1 restores it)',
  'device-gone': 'the device falls off the bus: every register reads all-ones, no more interrupts',
  'lost-wakeup':
    "lost-wakeup[:qp|psm|ipoib] opens sdma_check_progress's window once: the engine's other senders end, one sender fills the ring and its CPU stalls between the free-count load and the head_lock sample while a whole retirement runs; a QP or IPoIB queue is left stranded on the idle engine, a PSM writer stalls 1 s",
  'netdev-unregister':
    "the port's IPoIB netdev is unregistered (no ENGINE): the IPoIB sleep callback answers -EINVAL and the txreq is dropped; queues take no more packets, parked txreqs are dropped on their next attempt",
  'halt-stuck':
    'the engine halts (SDmaHaltErr) and its halt-wait work never runs, as on a wedged workqueue: s50_HwHaltWait, STATUS halted, ENG_ERR_STATUS bit 6 latched, for good',
  'link-flap':
    'the port (every port when PORT is left out) loses its link and gets it back 200 ms later: DOWN and Polling, LinkDowned +1, the link lines in the kernel log, then ACTIVE and LinkUp; an engine whose every port is down takes the link-down path meanwhile',
  'fabric-stall':
    'the far end of the port (every port when PORT is left out) returns no more credits: the engines transmitting on it stop fetching (HEAD freezes while software keeps submitting) and XmitWait counts every flit time; the port stays ACTIVE',
  'ipoib-timeout':
    "the engine's IPoIB queue fills the ring, sleeps on dmawait and is woken no more (sdma_desc_avail passes it over): its netdev subqueue stays stopped, and each second past the netdev watchdog timeout (1 s) the kernel logs the driver's timeout block (the first time after its NETDEV WATCHDOG warning) and the queue's tx_timeout counts one more",
} as const;

/** The sender kind a `lost-wakeup` fault picks (its param): a QP if the engine has one, else a PSM writer, else an IPoIB queue; or as named. */
export const LOST_WAKEUP_KIND = ['auto', 'qp', 'psm', 'ipoib'] as const;

export type FaultName = keyof typeof FAULTS;

/** Fault kinds in log order (LogKind.fault's `a`). */
export const FAULT_NAMES = Object.keys(FAULTS) as FaultName[];

/** One scheduled fault. */
export interface FaultSpec {
  name: FaultName;
  /** engine-error: the bit; slow: the factor; lost-wakeup: the index in LOST_WAKEUP_KIND; 0 otherwise. */
  param: number;
  atMs: number;
  /** One engine, or null for all (null for the link faults, which name a port). */
  engine: number | null;
  /** The port faults (link-down, link-up, link-flap, fabric-stall): one port (from 1), or null for every port; null for the others. */
  port: number | null;
  /** The text it was parsed from. */
  text: string;
}

function bad(text: string, why: string): never {
  const shown: Partial<Record<FaultName, string>> = {
    'engine-error': 'engine-error:<bit>',
    slow: 'slow:<factor>',
    'lost-wakeup': 'lost-wakeup[:qp|psm|ipoib]',
  };
  const list = FAULT_NAMES.map((n) => shown[n] ?? n).join(', ');
  throw usageError(
    `--fault ${JSON.stringify(text)}: ${why}. Use NAME@MS[:ENGINE] (${PORT_FAULTS.join(', ')}: NAME@MS[:PORT]) with NAME one of ${list}`,
  );
}

/** The engines a fault may name: a count from engine 0, or a window of absolute indexes (and the ports, default 1). */
export type FaultEngines = number | { firstEngine: number; count: number; ports?: number };

/** The faults that name a port, not an engine. */
export const PORT_FAULTS: readonly FaultName[] = ['link-down', 'link-up', 'link-flap', 'fabric-stall'];

/**
 * Parse `NAME@MS[:ENGINE]` (ENGINE an absolute index inside the unit's window); a bad spec is a usage error listing
 * the valid names, or naming the window.
 */
export function parseFault(text: string, engines: FaultEngines): FaultSpec {
  const first = typeof engines === 'number' ? 0 : engines.firstEngine;
  const count = typeof engines === 'number' ? engines : engines.count;
  const ports = typeof engines === 'number' ? 1 : (engines.ports ?? 1);
  const m = /^([a-z-]+)(?::([A-Za-z0-9_.]+))?@(\d+(?:\.\d+)?)(?::(\d+))?$/.exec(text.trim());
  if (!m) bad(text, `not of the form NAME@MS[:ENGINE] (or NAME@MS[:PORT] for ${PORT_FAULTS.join(', ')})`);
  const name = m[1] as string;
  if (!(name in FAULTS)) bad(text, `unknown fault ${JSON.stringify(name)}`);
  const arg = m[2];
  let param = 0;
  if (name === 'engine-error') {
    if (arg === undefined) bad(text, 'engine-error needs a bit: engine-error:<bit>@MS (bit 0-23 or a name such as GenMismatch)');
    const bit = /^\d+$/.test(arg) ? Number(arg) : (engErrBitByName(arg)?.bit ?? -1);
    if (bit < 0 || bit > 23) {
      bad(
        text,
        `no SEND_DMA_ENG_ERR_STATUS bit ${JSON.stringify(arg)} (0-23 or one of ${ENG_ERR_BITS.map((b) => b.name).join(', ')})`,
      );
    }
    param = bit;
  } else if (name === 'slow') {
    const f = Number(arg);
    if (arg === undefined || !(f > 0) || f > 1e6) bad(text, 'slow needs a factor greater than 0: slow:<factor>@MS');
    param = f;
  } else if (name === 'lost-wakeup') {
    const k = LOST_WAKEUP_KIND.indexOf((arg ?? 'auto') as (typeof LOST_WAKEUP_KIND)[number]);
    if (k <= 0 && arg !== undefined) {
      bad(text, 'lost-wakeup takes the sender kind qp, psm or ipoib: lost-wakeup[:qp|psm|ipoib]@MS:ENGINE');
    }
    param = Math.max(0, k);
  } else if (arg !== undefined) bad(text, `${name} takes no argument`);
  const atMs = Number(m[3]);
  if (PORT_FAULTS.includes(name as FaultName)) {
    const port = m[4] === undefined ? null : Number(m[4]);
    if (port !== null && (port < 1 || port > ports)) {
      const have = ports === 1 ? 'port 1' : `ports 1-${ports}`;
      bad(text, `port ${port} does not exist (the adapter has ${have}; ${name} takes a PORT, not an engine)`);
    }
    return { name: name as FaultName, param, atMs, engine: null, port, text };
  }
  const engine = m[4] === undefined ? null : Number(m[4]);
  if (name === 'netdev-unregister' && engine !== null) {
    bad(text, "netdev-unregister takes no engine: the netdev is the port's, use netdev-unregister@MS");
  }
  if (engine !== null && (engine < first || engine >= first + count)) {
    bad(text, `engine ${engine} does not exist (the unit has engines ${first}-${first + count - 1})`);
  }
  return { name: name as FaultName, param, atMs, engine, port: null, text };
}
