// The kernel-log lines of an accelerated-IPoIB queue timed out by the netdev watchdog and of a port's link, in the
// hfi1 and hfi2 wordings (the same text under each driver's prefix). Pure rules over one line's message.
//
//   the driver's block (hfi1_ipoib_tx_timeout / hfi2_ipoib_tx_timeout, ipoib_tx.c), one line each:
//     timeout txq %p q %u stopped %u stops %d no_desc %d ring_full %d   (%llx before v5.15: the raw pointer)
//     sde %p engine %u | flow %x | sent %llu completed %llu used %llu | tx_queue_len %u max_items %u
//     head %u tail %u | wait queued %u | tx_list empty %u
//   the watchdog (dev_watchdog, sch_generic.c), by kernel version:
//     <drv> <pci> <netdev>: NETDEV WATCHDOG: CPU: %d: transmit queue %u timed out %u ms   (netdev_crit, v6.8 on)
//     NETDEV WATCHDOG: <netdev> (<drv>): transmit queue %u timed out %u ms                 (WARN_ONCE, v6.0-v6.7)
//     NETDEV WATCHDOG: <netdev> (<drv>): transmit queue %u timed out                      (WARN_ONCE, before)
//   a port's link (chip.c: handle_8051_interrupt, handle_link_down, log_state_transition, the logical-state line,
//   the LNI failures), under the unit's prefix (`hfi1_0: `, port 1) or a port's (`hfi2_0.1: `, the port's hardware
//   index from 0, as hfi2's ppd_dev_info prints it):
//     8051: Link up | 8051: Link down[ (ignoring downgrade)] | Link down reason: … | Link error: Failed LNI(…)
//     physical state changed to %s (0x%x), phy 0x%x | logical state changed to %s (0x%x)
//     %s: physical state did not change to LINK-UP
import { boundedText } from '../hw/parse/text.js';
import { TXE_NUM_SDMA_ENGINES } from '../progress/constants.js';
import type { LogEvent } from './parse.js';
import type { Ctx, Rule } from './rule.js';

const N = '(\\d+)';
const X = '([0-9a-fA-F]+)';
const P = '(?:0x)?[0-9a-fA-F]+|\\(_*ptrval_*\\)';

/** Complete the unit's last timeout block with a later line of it (nothing when the log holds no block before it). */
function fill(c: Ctx, fields: Partial<LogEvent>): void {
  if (c.block) Object.assign(c.block, fields);
}

/** The rules of the driver's timeout block. */
export const IPOIB_RULES: readonly Rule[] = [
  {
    re: new RegExp(`^timeout txq (?:${P}) q ${N} stopped ${N} stops (-?\\d+) no_desc (-?\\d+) ring_full (-?\\d+)$`),
    apply: (m, c) => {
      c.block = c.emit({
        kind: 'ipoib-timeout',
        txq: Number(m[1]),
        stopped: Number(m[2]) !== 0,
        stops: Number(m[3]),
        noDesc: Number(m[4]),
        ringFull: Number(m[5]),
      });
    },
  },
  {
    re: new RegExp(`^sde (?:${P}) engine ${N}$`),
    apply: (m, c) => {
      // No chip has an engine past 15 (TXE_NUM_SDMA_ENGINES): such a line is not the driver's, shown as it is,
      // and the block's engine stays unknown.
      const engine = Number(m[1]);
      if (Number.isSafeInteger(engine) && engine < TXE_NUM_SDMA_ENGINES) fill(c, { engine });
      else c.emit({ kind: 'unrecognised', text: m[0] });
    },
  },
  { re: new RegExp(`^flow ${X}$`), apply: (m, c) => fill(c, { flow: `0x${(m[1] ?? '').toLowerCase()}` }) },
  {
    re: new RegExp(`^sent ${N} completed ${N} used ${N}$`),
    apply: (m, c) => fill(c, { sent: Number(m[1]), completed: Number(m[2]), used: Number(m[3]) }),
  },
  {
    re: new RegExp(`^tx_queue_len ${N} max_items ${N}$`),
    apply: (m, c) => fill(c, { txQueueLen: Number(m[1]), maxItems: Number(m[2]) }),
  },
  { re: new RegExp(`^head ${N} tail ${N}$`), apply: (m, c) => fill(c, { head: Number(m[1]), tail: Number(m[2]) }) },
  { re: new RegExp(`^wait queued ${N}$`), apply: (m, c) => fill(c, { waitQueued: Number(m[1]) !== 0 }) },
  { re: new RegExp(`^tx_list empty ${N}$`), apply: (m, c) => fill(c, { txListEmpty: Number(m[1]) !== 0 }) },
];

/** The rules of a port's link lines; the port comes from the line's prefix (ctx.port). */
export const LINK_RULES: readonly Rule[] = [
  { re: /^8051: Link up$/, apply: (_m, c) => void c.emit({ kind: 'link-up', port: c.port }) },
  {
    re: /^8051: Link down( \(ignoring downgrade\))?$/,
    apply: (_m, c) => void c.emit({ kind: 'link-down', port: c.port }),
  },
  {
    re: /^Link down reason: (.+)$/,
    apply: (m, c) => void c.emit({ kind: 'link-down-reason', port: c.port, text: m[1] ?? '' }),
  },
  {
    re: /^Link error: (.+)$/,
    apply: (m, c) => {
      const text = m[1] ?? '';
      c.emit({ kind: /Failed LNI/.test(text) ? 'link-training-failed' : 'link-error', port: c.port, text });
    },
  },
  {
    re: /^\S+: physical state did not change to LINK-UP$/,
    apply: (m, c) => void c.emit({ kind: 'link-training-failed', port: c.port, text: m[0] }),
  },
  {
    re: /^physical state changed to (\S+) \(0x[0-9a-fA-F]+\), phy 0x[0-9a-fA-F]+$/,
    apply: (m, c) => void c.emit({ kind: 'link-state', port: c.port, physState: m[1] ?? '' }),
  },
  {
    re: /^logical state changed to (\S+) \(0x[0-9a-fA-F]+\)$/,
    apply: (m, c) => void c.emit({ kind: 'link-state', port: c.port, state: m[1] ?? '' }),
  },
];

/** The watchdog line: netdev, driver (when printed), PCI address (netdev_crit form), CPU, queue, time out. */
export interface WatchdogLine {
  netdev: string;
  driver: string | null;
  pci: string | null;
  cpu: number | null;
  txq: number;
  timedOutMs: number | null;
}

const CRIT =
  /(hfi[12]) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) (\S+?)(?: \([^)]*\))?: NETDEV WATCHDOG: CPU: (\d+): transmit queue (\d+) timed out (\d+) ms$/;
const WARN = /NETDEV WATCHDOG: (\S+) \((hfi[12])\): transmit queue (\d+) timed out(?: (\d+) ms)?$/;

/** The netdev watchdog line of an hfi1 or hfi2 netdev, in any of its wordings; null for any other line. */
export function parseWatchdogLine(line: string): WatchdogLine | null {
  const c = CRIT.exec(line);
  if (c) {
    return {
      netdev: boundedText(c[3] as string, 32),
      driver: c[1] as string,
      pci: (c[2] as string).toLowerCase(),
      cpu: Number(c[4]),
      txq: Number(c[5]),
      timedOutMs: Number(c[6]),
    };
  }
  const w = WARN.exec(line);
  if (!w) return null;
  return {
    netdev: boundedText(w[1] as string, 32),
    driver: w[2] as string,
    pci: null,
    cpu: null,
    txq: Number(w[3]),
    timedOutMs: w[4] === undefined ? null : Number(w[4]),
  };
}

/** The link events of one port of one unit, counted. */
export interface PortLinkEvents {
  unit: string;
  port: number;
  down: number;
  up: number;
  trainingFailures: number;
  errors: number;
}

/** The link events of a parsed log, counted per unit and port, in the order first seen. */
export function linkEventsByPort(events: readonly LogEvent[]): PortLinkEvents[] {
  const out = new Map<string, PortLinkEvents>();
  for (const e of events) {
    const k =
      e.kind === 'link-down'
        ? 'down'
        : e.kind === 'link-up'
          ? 'up'
          : e.kind === 'link-training-failed'
            ? 'trainingFailures'
            : e.kind === 'link-error'
              ? 'errors'
              : null;
    if (k === null) continue;
    const port = e.port ?? 1;
    const key = `${e.unit}/${port}`;
    let c = out.get(key);
    if (!c) {
      c = { unit: e.unit, port, down: 0, up: 0, trainingFailures: 0, errors: 0 };
      out.set(key, c);
    }
    c[k] += 1;
  }
  return [...out.values()];
}

/** A timeout block as a reader of one unit's log keeps it: the block, when it was logged, how many there were. */
export interface TimeoutRecord {
  block: LogEvent;
  /** The netdev of the watchdog line just before it that named the same queue (null when none did). */
  netdev: string | null;
  /** When it was logged (the record's microseconds since boot), or null when the line gave none. */
  usec: number | null;
  /** Blocks of this queue seen so far, and when the first of the latest run of them was logged. */
  count: number;
  episodeUsec: number | null;
}

/** Blocks of one queue more than this far apart (µs) are two episodes (the watchdog re-fires every second). */
const EPISODE_GAP_US = 3_000_000;

const UNIT_LINE = /hfi[12] ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): hfi[12]_\d+(?:\.[0-9])?: ?(.*)$/;

/**
 * The IPoIB timeout blocks of one unit (by its PCI address) from its kernel log, line by line, with the watchdog
 * lines that name each queue's netdev; the latest block per queue is kept. Bounded: one record per queue.
 */
export class TimeoutBlocks {
  private readonly byTxq = new Map<number, TimeoutRecord>();
  private last: LogEvent | undefined;
  private lastUsec: number | null = null;
  private watchdog: { netdev: string; txq: number } | null = null;
  private readonly pci: string;

  constructor(pci: string) {
    this.pci = pci.toLowerCase();
  }

  /** Take one line of the log (its text after the record's prefix) logged at `usec` (null when unknown). */
  push(line: string, usec: number | null): void {
    if (line.includes('NETDEV WATCHDOG')) {
      const w = parseWatchdogLine(line);
      if (w && (w.pci === null || w.pci === this.pci)) this.watchdog = { netdev: w.netdev, txq: w.txq };
      return;
    }
    const m = UNIT_LINE.exec(line);
    if (!m || (m[1] as string).toLowerCase() !== this.pci) return;
    const msg = m[2] as string;
    const rule = IPOIB_RULES.find((r) => r.re.test(msg));
    if (!rule) return;
    const mm = rule.re.exec(msg);
    if (!mm) return;
    let made: LogEvent | undefined;
    const ctx = {
      block: this.last,
      port: 1,
      emit: (e: Omit<LogEvent, 'line' | 'unit' | 'ts'>) => {
        made = { line: 0, ts: null, unit: '', ...e };
        return made;
      },
    } as unknown as Ctx;
    rule.apply(mm, ctx);
    this.last = ctx.block;
    if (made?.kind !== 'ipoib-timeout' || made.txq === undefined) return;
    const prev = this.byTxq.get(made.txq);
    const named = this.watchdog?.txq === made.txq ? this.watchdog.netdev : null;
    const sameEpisode = prev?.usec != null && usec !== null && usec - prev.usec <= EPISODE_GAP_US;
    this.byTxq.set(made.txq, {
      block: made,
      netdev: named ?? prev?.netdev ?? null,
      usec,
      count: (prev?.count ?? 0) + 1,
      episodeUsec: sameEpisode ? (prev?.episodeUsec ?? usec) : usec,
    });
    this.watchdog = null;
    this.lastUsec = usec;
  }

  /** The latest block of every queue that had one. */
  records(): TimeoutRecord[] {
    return [...this.byTxq.values()];
  }

  /** When the last block was logged (µs), or null. */
  lastAt(): number | null {
    return this.lastUsec;
  }
}
