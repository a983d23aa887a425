// The accelerated-IPoIB queues a live host shows evidence for (Unit.waiters, kind ipoib): the unit's netdevs from
// sysfs (sys/class/net/<if>/device links to the adapter's PCI device), each transmit queue's tx_timeout count
// (queues/tx-N/tx_timeout, net-sysfs.c), the driver's timeout blocks in the kernel log (hfi1_ipoib_tx_timeout,
// ipoib_tx.c; read from /dev/kmsg without clearing it, kmsg-tail.ts) and, when someone enabled them, the
// hfi1_txq_* trace events. Their wait is shown by no file: a queue is seen once the netdev watchdog timed it out
// (its subqueue stopped over 1 s), from its timeout block (which names its engine), or when its tx_timeout rose
// (engine unknown); a queue waiting less than that is not seen, so the kind is visible in part.
import { basename, join } from 'node:path';
import type { IpoibQueueEvidence, Waiter, WaiterVisibility } from '../backend.js';
import type { TimeoutRecord } from '../kmsg/ipoib.js';
import { parseTxTraceLine, type TxqEvent } from '../kmsg/trace-tx.js';
import type { FoundUnit } from './discover.js';
import { type HwFs, readdirOrNull } from './fsio.js';
import { KmsgTail } from './kmsg-tail.js';
import { boundedText } from './parse/text.js';
import { TRACE_CAP_BYTES } from './waiters-trace.js';

/** The netdevs of a unit are listed again this often (ms); their tx_timeout counts are read every time. */
const RESCAN_MS = 5000;
/** A timeout block at most this old (ms) is a queue still stopped: the watchdog re-fires every second. */
const RECENT_MS = 3000;
/** The most characters of a netdev's name shown (the kernel's are at most 15). */
export const NETDEV_NAME_CHARS = 32;

/** ARPHRD_INFINIBAND: the `type` of an IPoIB netdev. */
const ARPHRD_INFINIBAND = '32';

/** What is not seen of IPoIB queues even with the kernel log readable. */
export const IPOIB_PARTIAL =
  'a queue is seen only once the netdev watchdog timed it out (its subqueue stopped over 1 s): from its timeout block in the kernel log, or its tx_timeout count; one waiting less than that is not seen';

type IpoibWaiter = Extract<Waiter, { kind: 'ipoib' }>;

interface Netdev {
  /** Its name as shown (escaped and bounded: the host's text). */
  name: string;
  /** Its sysfs directory. */
  dir: string;
  queues: string[];
}

/** The IPoIB queue reader of one unit. */
export class IpoibQueues {
  private netdevs: Netdev[] | null = null;
  private scannedAtMs = Number.NEGATIVE_INFINITY;
  private readonly timeouts = new Map<string, number>();
  private readonly kmsg: KmsgTail;

  constructor(
    private readonly fs: HwFs,
    private readonly u: FoundUnit,
  ) {
    this.kmsg = new KmsgTail(fs, u.paths.root, u.pci);
  }

  /** Close the kernel log, if it was opened. */
  close(): void {
    this.kmsg.close();
  }

  /** The unit's IPoIB netdevs (their device link names the unit's PCI address), or null when sysfs cannot be listed. */
  private async scan(nowMs: number): Promise<Netdev[] | null> {
    if (this.netdevs !== null && nowMs - this.scannedAtMs < RESCAN_MS) return this.netdevs;
    this.scannedAtMs = nowMs;
    const dir = this.u.paths.netDir;
    const names = await readdirOrNull(this.fs, dir);
    if (names === null) {
      this.netdevs = null;
      return null;
    }
    const out: Netdev[] = [];
    for (const name of names.sort()) {
      if (!this.u.pci) break;
      const target = await this.fs.readlink(join(dir, name, 'device')).catch(() => null);
      if (target === null || basename(target) !== this.u.pci) continue;
      const type = await this.fs.readFile(join(dir, name, 'type'), 64).catch(() => null);
      if (type !== null && Buffer.from(type).toString('utf8').trim() !== ARPHRD_INFINIBAND) continue;
      const queues = ((await readdirOrNull(this.fs, join(dir, name, 'queues'))) ?? []).filter((q) => /^tx-\d{1,4}$/.test(q));
      out.push({
        name: boundedText(name, NETDEV_NAME_CHARS),
        dir: join(dir, name),
        queues: queues.sort((a, b) => Number(a.slice(3)) - Number(b.slice(3))),
      });
    }
    this.netdevs = out;
    return out;
  }

  /** The IPoIB queues with evidence now, and what of the kind is visible. */
  async read(nowMs: number): Promise<{ waiters: Waiter[]; visibility: WaiterVisibility }> {
    const netdevs = await this.scan(nowMs);
    if (netdevs === null) {
      return {
        waiters: [],
        visibility: {
          kind: 'ipoib',
          visible: false,
          reason: `${this.u.paths.netDir} cannot be listed: the unit's IPoIB netdevs are not known`,
        },
      };
    }
    if (netdevs.length === 0) {
      // No IPoIB netdev sends on this unit: no accelerated queue can wait on its engines.
      return { waiters: [], visibility: { kind: 'ipoib', visible: true, source: 'sysfs' } };
    }
    const rose = await this.readTimeouts(netdevs);
    const log = await this.kmsg.poll();
    const waiters: Waiter[] = [];
    const seen = new Set<string>();
    if (log.ok) {
      const offsetMs = log.uptimeMs === null ? null : nowMs - log.uptimeMs;
      for (const r of log.records) {
        const w = this.fromBlock(r, offsetMs, netdevs, nowMs);
        if (w) {
          waiters.push(w);
          seen.add(`${w.netdev}/${w.txq}`);
        }
      }
    }
    for (const w of await this.fromTrace(netdevs, nowMs)) {
      if (seen.has(`${w.netdev}/${w.txq}`)) continue;
      waiters.push(w);
      seen.add(`${w.netdev}/${w.txq}`);
    }
    for (const { netdev, txq, count } of rose) {
      if (seen.has(`${netdev}/${txq}`)) continue;
      waiters.push({
        kind: 'ipoib',
        netdev,
        txq,
        evidence: { ...emptyEvidence('sysfs'), timeouts: count, lastTimeoutMs: nowMs },
        waitsFor: 'unknown',
        descriptorsNeeded: null,
        engine: null,
        onList: null,
        ownPending: null,
        sinceMs: nowMs,
        source: 'sysfs',
      });
    }
    const visibility: WaiterVisibility = log.ok
      ? { kind: 'ipoib', visible: true, source: 'kmsg', partial: IPOIB_PARTIAL }
      : {
          kind: 'ipoib',
          visible: false,
          reason: `${log.reason}: the timeout blocks that name a stuck IPoIB queue's engine cannot be read (only its tx_timeout count can)`,
          fix: 'run as root, or allow unprivileged reads of the kernel log (sysctl kernel.dmesg_restrict=0)',
        };
    return { waiters, visibility };
  }

  /**
   * The queues the hfi1_txq_* (hfi2_txq_*) trace events show stopped with their engine, when someone enabled them
   * (`events/<m>_tx/<m>_txq_stop/enable` reads 1): the last event of each queue of this device, from the
   * non-consuming `trace` (never trace_pipe). The older wording names no engine: such a queue is left out.
   */
  private async fromTrace(netdevs: readonly Netdev[], nowMs: number): Promise<IpoibWaiter[]> {
    const m = this.u.paths.module;
    for (const dir of this.u.paths.tracingDirs) {
      const on = await this.fs.readFile(join(dir, `events/${m}_tx/${m}_txq_stop/enable`), 64).catch(() => null);
      if (on === null || Buffer.from(on).toString('latin1').trim() !== '1') continue;
      const text = await this.fs.readFile(join(dir, 'trace'), TRACE_CAP_BYTES).catch(() => null);
      if (text === null) return [];
      const last = new Map<number, TxqEvent>();
      for (const line of Buffer.from(text).toString('utf8').split('\n')) {
        if (!line.includes('_txq_') && !line.includes('_flow_')) continue;
        const e = parseTxTraceLine(line);
        if (e?.kind === 'txq' && e.device.toLowerCase() === this.u.pci) last.set(e.txq, e);
      }
      const netdev = netdevs.length === 1 ? (netdevs[0] as Netdev).name : null;
      return [...last.values()]
        .filter((e) => e.stopped && e.engine !== null)
        .map((e) => ({
          kind: 'ipoib' as const,
          netdev,
          txq: e.txq,
          evidence: { ...emptyEvidence('trace'), stopped: true, stops: e.stops, noDesc: e.noDesc, used: e.used },
          waitsFor: e.noDesc ? ('dma-desc' as const) : ('unknown' as const),
          descriptorsNeeded: null,
          engine: e.engine,
          onList: null,
          ownPending: e.used,
          sinceMs: nowMs,
          source: 'trace' as const,
        }));
    }
    return [];
  }

  /** Each queue's tx_timeout now; those that rose since the last read (a timeout now, engine unknown). */
  private async readTimeouts(netdevs: readonly Netdev[]): Promise<{ netdev: string; txq: number; count: number }[]> {
    const rose: { netdev: string; txq: number; count: number }[] = [];
    for (const n of netdevs) {
      for (const q of n.queues) {
        const file = join(n.dir, 'queues', q, 'tx_timeout');
        const t = await this.fs.readFile(file, 64).catch(() => null);
        const m = t === null ? null : /^(\d{1,19})\n?$/.exec(Buffer.from(t).toString('utf8'));
        if (!m) continue;
        const count = Number(m[1]);
        const key = `${n.name}/${q}`;
        const before = this.timeouts.get(key);
        this.timeouts.set(key, count);
        if (before !== undefined && count > before) rose.push({ netdev: n.name, txq: Number(q.slice(3)), count });
      }
    }
    return rose;
  }

  /** A waiter from a recent timeout block (null when it is older than RECENT_MS or its time is unknown). */
  private fromBlock(r: TimeoutRecord, offsetMs: number | null, netdevs: readonly Netdev[], nowMs: number): IpoibWaiter | null {
    if (offsetMs === null || r.usec === null) return null;
    const atMs = offsetMs + r.usec / 1000;
    if (nowMs - atMs > RECENT_MS) return null;
    const b = r.block;
    const netdev = r.netdev ?? (netdevs.length === 1 ? (netdevs[0] as Netdev).name : null);
    const txq = b.txq ?? null;
    const timeouts = netdev === null ? null : (this.timeouts.get(`${netdev}/tx-${txq}`) ?? null);
    const evidence: IpoibQueueEvidence = {
      stopped: b.stopped ?? null,
      stops: b.stops ?? null,
      noDesc: b.noDesc ?? null,
      ringFull: b.ringFull ?? null,
      sent: b.sent ?? null,
      completed: b.completed ?? null,
      used: b.used ?? null,
      waitQueued: b.waitQueued ?? null,
      timeouts: timeouts ?? r.count,
      lastTimeoutMs: atMs,
      source: 'kmsg',
    };
    return {
      kind: 'ipoib',
      netdev,
      txq,
      evidence,
      waitsFor: b.noDesc ? 'dma-desc' : 'unknown',
      descriptorsNeeded: null,
      engine: b.engine ?? null,
      onList: b.waitQueued ?? null,
      ownPending: b.used ?? null,
      sinceMs: r.episodeUsec === null ? atMs : offsetMs + r.episodeUsec / 1000,
      source: 'kmsg',
    };
  }
}

/** Evidence with nothing known but its source. */
function emptyEvidence(source: IpoibQueueEvidence['source']): IpoibQueueEvidence {
  return {
    stopped: null,
    stops: null,
    noDesc: null,
    ringFull: null,
    sent: null,
    completed: null,
    used: null,
    waitQueued: null,
    timeouts: null,
    lastTimeoutMs: null,
    source,
  };
}
