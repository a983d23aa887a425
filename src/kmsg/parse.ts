// Reading the SDMA lines of a kernel log (dmesg or journalctl text, the driver log lines, sdma.c) of the three
// driver builds: upstream hfi1, the Cornelis hfi1 and hfi2 (`hfi1_N:` and `hfi2_N:` device prefixes). Pure: text
// in, records out. Lines of other drivers are passed over; an SDMA line of a known form that does not parse is kept
// as an `unrecognised` event with its line number rather than dropped. Descriptor qwords are decoded as the chip
// the caller names: a line does not say which chip wrote it.

import { escapeControls } from '../hw/parse/text.js';
import type { ChipName } from '../progress/chip.js';
import { TXE_NUM_SDMA_ENGINES } from '../progress/constants.js';
import { decodeEngErr, type EngErrBit, isHaltClassError } from '../progress/csr.js';
import { type ChipDescriptor, decodeFor } from '../progress/descriptor-chip.js';
import { CORNELIS_RULES } from './cornelis.js';
import { IPOIB_RULES, LINK_RULES, parseWatchdogLine } from './ipoib.js';
import type { Ctx, Rule } from './rule.js';
import { parseTxTraceLine } from './trace-tx.js';
import { parseWaitTraceLine } from './trace-wait.js';
import { unescapeKmsgText } from './unescape.js';

/** What the log says about one unit. */
export interface LogUnit {
  name: string;
  /** The module the prefix names: `hfi1` (upstream or the Cornelis build) or `hfi2`. */
  module: 'hfi1' | 'hfi2';
  pci: string;
  /** Engines in use (`SDMA engines %zu` or `SDMA num_sdma: %u`); null when not logged. */
  engines: number | null;
  descqCnt: number | null;
  /** IRQ CPU of each engine (`IRQ: %u, type SDMA engine %u -> cpu: %d`); null where not logged. */
  engineCpu: (number | null)[];
  chipEngines: number | null;
  memSize: number | null;
}

export type LogEventKind =
  | 'engine-error'
  | 'ring-dump'
  | 'descriptor'
  | 'halt-timeout'
  | 'clean-timeout'
  | 'check-scheduled'
  | 'progress-check'
  | 'bad-head'
  | 'dmawait-not-empty'
  | 'spurious-interrupt'
  | 'invalid-interrupt'
  | 'state-change'
  | 'trace-descriptor'
  | 'pad'
  | 'ipoib-timeout'
  | 'netdev-watchdog'
  | 'txq-event'
  | 'link-up'
  | 'link-down'
  | 'link-down-reason'
  | 'link-training-failed'
  | 'link-error'
  | 'link-state'
  | 'qp-sleep'
  | 'qp-wakeup'
  | 'iowait-set'
  | 'iowait-clear'
  | 'psm-defer'
  | 'psm-activate'
  | 'unrecognised';

/** One SDMA event of the log. Fields beyond `line`, `unit` and `kind` depend on the kind. */
export interface LogEvent {
  line: number;
  /** The line's kernel timestamp as printed (dmesg `[  123.456789]` gives `123.456789`; journalctl its time); null when the line has none. */
  ts: string | null;
  unit: string;
  kind: LogEventKind;
  engine?: number;
  value?: string;
  state?: string;
  /** state-change (a `*_sdma_state` trace event): the state left; `state` is the one entered. */
  fromState?: string;
  /** pad (an hfi2_sdma_pad trace event): packets of the request, its descriptors, the pad added, pad_sdma_desc. */
  packets?: number;
  packetDescriptors?: number;
  padDescriptors?: number;
  padSdmaDesc?: number;
  errors?: EngErrBit[];
  halts?: boolean;
  head?: number;
  tail?: number;
  freecnt?: number;
  /** The newer dump's `used`: sdma_descq_inprocess, the in-flight count on the builds that print it. */
  used?: number;
  inFlight?: number;
  /** Ring size implied by the newer dump: used + avail + 1. */
  descqCnt?: number;
  /** The `[desc N]` tag linking a newer dump to its descriptor lines (printed later, maybe interleaved). */
  tag?: number;
  flushListNonEmpty?: boolean;
  slot?: number;
  flags?: string;
  addr?: string;
  gen?: number;
  len?: number;
  qw0?: string;
  qw1?: string;
  decoded?: ChipDescriptor;
  ahgIdx?: number;
  ahgMode?: number;
  ahgLen?: number;
  source?: string;
  hwHead?: number;
  swHead?: number;
  swTail?: number;
  cnt?: number;
  text?: string;
  /** A link line's port (from its prefix), or the port a netdev sends on. */
  port?: number;
  /** link-state: the physical state entered (`PHYS_POLL`, `PHYS_LINKUP`, …). */
  physState?: string;
  /** ipoib-timeout, netdev-watchdog, txq-event: the transmit queue, its netdev and the watchdog's CPU and time out. */
  txq?: number;
  netdev?: string;
  cpu?: number;
  timedOutMs?: number;
  /** ipoib-timeout (the driver's block) and txq-event: the queue's state when it was printed. */
  stopped?: boolean;
  stops?: number;
  noDesc?: number;
  ringFull?: number;
  flow?: string;
  sent?: number;
  completed?: number;
  txQueueLen?: number;
  maxItems?: number;
  waitQueued?: boolean;
  txListEmpty?: boolean;
  /** txq-event: the event (`stop`, `wake`, `xmit_stopped`, …). */
  event?: string;
  /** The sleep and wake-up trace events (trace-wait.ts): the task that printed the line (`kworker/3:1H-412`). */
  task?: string;
  /** qp-sleep, qp-wakeup, iowait-set, iowait-clear: the QP; its flags as printed (hex strings). */
  qpn?: number;
  waitFlag?: string;
  sFlags?: string;
  psFlags?: string;
  iowFlags?: string;
  /** iowait-set, iowait-clear: the iowait's address, its flags before the change and the flag changed. */
  iowait?: string;
  iowaitFlags?: string;
  iowaitFlag?: string;
  /** psm-defer, psm-activate: the packet queue's address; defer: whether it was on no list yet; activate: why. */
  pq?: string;
  empty?: boolean;
  reason?: number;
}

/** The parse of a whole log. */
export interface KernelLog {
  units: LogUnit[];
  events: LogEvent[];
  linesRead: number;
  /** Lines that carried an hfi1 or hfi2 device prefix (of any kind). */
  hfi1Lines: number;
  /** The input's first line begins as a kernel log line does (a dmesg, /dev/kmsg or journalctl timestamp). */
  looksLikeLog: boolean;
  /** The chip whose layout decoded the descriptor qwords. */
  chip: ChipName;
}

/** How to read a log: the chip that lays out descriptor qwords (default wfr). */
export interface ParseOptions {
  chip?: ChipName;
}

/**
 * The timestamp a log line starts with, as printed: dmesg `[  123.456789]` (also with -T, a date
 * in brackets), /dev/kmsg's `PRI,SEQ,USEC,FLAGS;` (the microseconds), journalctl's short
 * (`Nov 30 22:00:00`, with fractions in short-precise) and short-iso (`2026-11-30T22:00:00+0000`)
 * forms; null when there is none.
 */
export function lineTimestamp(prefix: string): string | null {
  const p = prefix.trimStart();
  // Found by indexOf, not a pattern: spaces inside an unclosed bracket made the pattern's backtracking cubic.
  const close = p.startsWith('[') ? p.indexOf(']') : -1;
  if (close > 0) {
    const inner = p.slice(1, close).trim();
    if (inner !== '') return inner;
  }
  const kmsg = /^\d+,\d+,(\d+),[^;]*;/.exec(p);
  if (kmsg) return kmsg[1] ?? null;
  const iso = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s/.exec(p);
  if (iso) return iso[1] ?? null;
  const short = /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?)\s/.exec(p);
  if (short) return short[1] ?? null;
  return null;
}

// `hfi1 0000:05:00.0: hfi1_0: message` (or hfi2 … hfi2_0:) after any timestamp or journal prefix; a port's line has
// the port's hardware index after the name (`hfi2_0.1:`, hfi2's ppd_dev_info).
const PREFIX = /hfi[12] ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): (hfi([12])_\d+)(?:\.([0-9]))?: ?(.*)$/;
const N = '(\\d+)';
const HEX = '0x([0-9a-fA-F]+)';

const RULES: Rule[] = [
  {
    re: new RegExp(`^SDMA \\(${N}\\) engine error: ${HEX} state (\\S+)$`),
    apply: (m, c) => {
      const v = BigInt(`0x${m[2]}`);
      c.emit({
        kind: 'engine-error',
        engine: Number(m[1]),
        value: `0x${v.toString(16)}`,
        state: m[3],
        errors: decodeEngErr(v),
        halts: isHaltClassError(v),
      });
    },
  },
  {
    re: new RegExp(`^SDMA \\(${N}\\) descq_head: ${N} descq_tail: ${N} freecnt: ${N} FLE (-?\\d+)$`),
    apply: (m, c) => {
      c.engine = Number(m[1]);
      c.emit({
        kind: 'ring-dump',
        engine: c.engine,
        head: Number(m[2]),
        tail: Number(m[3]),
        freecnt: Number(m[4]),
        flushListNonEmpty: Number(m[5]) !== 0,
      });
    },
  },
  {
    re: new RegExp(`^SDMA sdmadesc\\[${N}\\]: flags:([IH\\-][IH\\-][F\\-][L\\-]) addr:${HEX} gen:${N} len:${N} bytes$`),
    apply: (m, c) => {
      c.desc = c.emit({
        kind: 'descriptor',
        ...(c.engine === undefined ? {} : { engine: c.engine }),
        slot: Number(m[1]),
        flags: m[2],
        addr: `0x${(m[3] ?? '').toLowerCase().padStart(16, '0')}`,
        gen: Number(m[4]),
        len: Number(m[5]),
      });
    },
  },
  {
    re: new RegExp(`^\\s*desc0:${HEX} desc1 ${HEX}$`),
    apply: (m, c) => {
      const qw0 = BigInt(`0x${m[1]}`);
      const qw1 = BigInt(`0x${m[2]}`);
      const target = c.desc ?? c.emit({ kind: 'descriptor', ...(c.engine === undefined ? {} : { engine: c.engine }) });
      target.qw0 = `0x${qw0.toString(16).padStart(16, '0')}`;
      target.qw1 = `0x${qw1.toString(16).padStart(16, '0')}`;
      target.decoded = decodeFor(c.chip, qw0, qw1);
    },
  },
  {
    re: new RegExp(`^\\s*aidx: ${N} amode: ${N} alen: ${N}$`),
    apply: (m, c) => {
      const target = c.desc ?? c.emit({ kind: 'descriptor', ...(c.engine === undefined ? {} : { engine: c.engine }) });
      target.ahgIdx = Number(m[1]);
      target.ahgMode = Number(m[2]);
      target.ahgLen = Number(m[3]);
    },
  },
  {
    re: new RegExp(`^SDMA engine ${N} - timeout waiting for engine to halt$`),
    apply: (m, c) => c.emit({ kind: 'halt-timeout', engine: Number(m[1]) }),
  },
  ...CORNELIS_RULES,
  ...IPOIB_RULES,
  ...LINK_RULES,
  {
    re: new RegExp(`^SDMA engine ${N} - check scheduled$`),
    apply: (m, c) => c.emit({ kind: 'check-scheduled', engine: Number(m[1]) }),
  },
  { re: /^SDE progress check event$/, apply: (_m, c) => c.emit({ kind: 'progress-check' }) },
  {
    re: new RegExp(`^SDMA\\(${N}\\) bad head \\((dma|kreg)\\) hwhd=${N} swhd=${N} swtl=${N} cnt=${N}$`),
    apply: (m, c) =>
      c.emit({
        kind: 'bad-head',
        engine: Number(m[1]),
        source: m[2],
        hwHead: Number(m[3]),
        swHead: Number(m[4]),
        swTail: Number(m[5]),
        cnt: Number(m[6]),
      }),
  },
  {
    re: new RegExp(`^sde ${N}: dmawait list not empty!$`),
    apply: (m, c) => c.emit({ kind: 'dmawait-not-empty', engine: Number(m[1]) }),
  },
  {
    re: new RegExp(`^SDMA engine ${N} interrupt, but no status bits set$`),
    apply: (m, c) => c.emit({ kind: 'spurious-interrupt', engine: Number(m[1]) }),
  },
  {
    re: new RegExp(`^Invalid SDMA interrupt ${HEX}$`),
    apply: (m, c) => c.emit({ kind: 'invalid-interrupt', value: `0x${BigInt(`0x${m[1]}`).toString(16)}` }),
  },
  {
    re: new RegExp(`^SDMA engines ${N} descq_cnt ${N}$`),
    apply: (m, c) => Object.assign(c.unit, { engines: Number(m[1]), descqCnt: Number(m[2]) }),
  },
  { re: new RegExp(`^SDMA num_sdma: ${N}$`), apply: (m, c) => Object.assign(c.unit, { engines: Number(m[1]) }) },
  { re: new RegExp(`^SDMA chip_sdma_engines: ${N}$`), apply: (m, c) => Object.assign(c.unit, { chipEngines: Number(m[1]) }) },
  { re: new RegExp(`^SDMA chip_sdma_mem_size: ${N}$`), apply: (m, c) => Object.assign(c.unit, { memSize: Number(m[1]) }) },
  { re: new RegExp(`^SDMA mod_num_sdma: ${N}$`), apply: () => {} },
  {
    re: new RegExp(`^IRQ: ${N}, type SDMA engine ${N} -> cpu: (-?\\d+)$`),
    apply: (m, c) => {
      const e = Number(m[2]);
      // No chip has more engines: a larger number is not the driver's line (and would grow the list without bound).
      if (e >= TXE_NUM_SDMA_ENGINES) return void c.emit({ kind: 'unrecognised', text: m[0] });
      while (c.unit.engineCpu.length <= e) c.unit.engineCpu.push(null);
      c.unit.engineCpu[e] = Number(m[3]);
    },
  },
];

/** At most this many events are kept; later ones are counted (a log is read in bounded memory). */
export const MAX_EVENTS = 100_000;
/** At most this many units are kept (a real host has a handful). */
export const MAX_UNITS = 64;

/**
 * The most of a line kept, in characters. printk prints at most 1 KiB of message; with a dmesg or journal prefix a
 * driver line is well under this, so a longer line is not the driver's and is cut: every kept event stays small.
 */
export const MAX_KEPT_LINE_CHARS = 2048;

/** A line of a /dev/kmsg record's dictionary: one space, then KEY=value (msg_add_dict_text, printk.c). */
const KMSG_DICTIONARY = /^ [A-Z][A-Z0-9_]*=/;

/** At most this many pieces of one wrapped line are joined (a wrapped driver line of under 200 characters has 2 or 3). */
const MAX_WRAP_PIECES = 4;

/** A driver line no rule read, kept in case the lines after it are its wrapped rest (KernelLogParser.continueWrapped). */
interface Wrapped {
  /** The line up to its message (timestamp and device prefix), and the message so far. */
  head: string;
  msg: string;
  line: number;
  /** The event the head made (unrecognised, or a rule's from a head cut at a soft break), taken back once the whole line is read. */
  event: LogEvent | null;
  pieces: number;
  /** A quoted-printable soft break joined a piece: `=XX` escapes are decoded. */
  soft?: boolean;
}

/** Reads a kernel log line by line, keeping only what the report needs (units, SDMA events). */
export class KernelLogParser {
  private readonly units = new Map<string, LogUnit>();
  private readonly engineOf = new Map<string, number | undefined>();
  private readonly descOf = new Map<string, LogEvent | undefined>();
  /** Per unit: the `[desc N]` tags of the newer dumps, each with its engine and its last descriptor. */
  private readonly tagsOf = new Map<string, Map<number, { engine: number; desc: LogEvent | undefined }>>();
  /** Per unit: its last IPoIB timeout block. */
  private readonly blockOf = new Map<string, LogEvent | undefined>();
  private readonly chip: ChipName;
  private readonly events: LogEvent[] = [];
  private hfi1Lines = 0;
  /** The first line's start, when it has been seen: whether the input looks like a kernel log. */
  private looksLikeLog: boolean | null = null;
  /** Events (and lines of units beyond MAX_UNITS) not kept. */
  eventsDropped = 0;
  /** The last line, when it was a driver line no rule read: the head of a line a mail client may have wrapped. */
  private wrapped: Wrapped | null = null;

  constructor(opts: ParseOptions = {}) {
    this.chip = opts.chip ?? 'wfr';
  }

  /**
   * Tell the parser how the input begins (its first lines), which decides whether it looks like a kernel log: the
   * first line that is not empty nor a journalctl header (`-- Logs begin at …`) carries a timestamp.
   */
  beginning(text: string): void {
    if (this.looksLikeLog !== null) return;
    const first = text.split(/\r?\n/).find((l) => l.trim() !== '' && !l.startsWith('-- '));
    if (first !== undefined) this.looksLikeLog = lineTimestamp(first.slice(0, 64)) !== null;
  }

  /** Take one line (without its newline); `line` counts from 1. */
  push(text: string, line: number): void {
    // A line read from /dev/kmsg as it is (or stored so) carries its tabs as `\x09`: turned back before any rule.
    const raw = escapeControls(unescapeKmsgText(text)).slice(0, MAX_KEPT_LINE_CHARS);
    const m = PREFIX.exec(raw);
    if (!m) {
      // A /dev/kmsg record's dictionary (` SUBSYSTEM=pci`, ` DEVICE=+pci:…`, printk.c): metadata, not text.
      if (KMSG_DICTIONARY.test(raw)) return;
      if (this.continueWrapped(raw)) return;
      this.wrapped = null;
      if (!this.pushWatchdog(raw, line)) this.pushTrace(raw, line);
      return;
    }
    this.wrapped = null;
    this.hfi1Lines += 1;
    const [, bdf = '', name = '', module = '1', pidx, msg = ''] = m;
    const pci = bdf.toLowerCase();
    const ts = lineTimestamp(raw.slice(0, m.index));
    let unit = this.units.get(name);
    if (!unit) {
      if (this.units.size >= MAX_UNITS) {
        this.eventsDropped += 1;
        return;
      }
      unit = {
        name,
        module: module === '2' ? 'hfi2' : 'hfi1',
        pci,
        engines: null,
        descqCnt: null,
        engineCpu: [],
        chipEngines: null,
        memSize: null,
      };
      this.units.set(name, unit);
    }
    const events = this.events;
    const self = this;
    let tags = this.tagsOf.get(name);
    if (!tags) {
      tags = new Map();
      this.tagsOf.set(name, tags);
    }
    const ctx: Ctx = {
      unit,
      chip: this.chip,
      tags,
      engine: this.engineOf.get(name),
      desc: this.descOf.get(name),
      block: this.blockOf.get(name),
      port: pidx === undefined ? 1 : Number(pidx) + 1,
      emit(e) {
        // No chip has an engine past 15: a line that names one is not the driver's, and is shown as it is.
        const foreign = e.engine !== undefined && !(Number.isSafeInteger(e.engine) && e.engine < TXE_NUM_SDMA_ENGINES);
        const ev: LogEvent = foreign ? { line, ts, unit: name, kind: 'unrecognised', text: msg } : { line, ts, unit: name, ...e };
        if (events.length < MAX_EVENTS) events.push(ev);
        else self.eventsDropped += 1;
        return ev;
      },
    };
    const rule = RULES.find((r) => r.re.test(msg));
    // A descriptor's later lines (and an empty message: the head of such a line wrapped after the prefix) keep it.
    const continuation = /^\s*(desc0:|aidx:)|^\[desc \d+\]|^\s*$/.test(msg);
    if (!continuation) ctx.desc = undefined;
    const before = this.events.length;
    if (rule) {
      const mm = rule.re.exec(msg);
      if (mm) rule.apply(mm, ctx);
    } else if (/SDMA|sdma|sde /.test(msg)) {
      ctx.emit({ kind: 'unrecognised', text: msg });
    }
    // A line no rule reads, or one ending in `=` (a quoted-printable soft break a rule may have read as text), may
    // go on in the lines after it (continueWrapped).
    if (!rule || msg.endsWith('=')) {
      const made = this.events.length > before ? (this.events.at(-1) ?? null) : null;
      this.wrapped = { head: raw.slice(0, raw.length - msg.length), msg, line, event: made, pieces: 1 };
    }
    this.engineOf.set(name, ctx.engine);
    this.descOf.set(name, ctx.desc);
    this.blockOf.set(name, ctx.block);
  }

  /**
   * A line without a timestamp after a driver line no rule read: the rest of that line as a mail client wrapped it
   * (at a space, which it took) or as quoted-printable soft breaks split it (`=` at the end of a piece; `=XX` escapes
   * then decoded). When the pieces joined make a line a rule reads, the head's unrecognised event is taken back and
   * the whole line read in its place, under the head's line number; a piece that still makes none is held, up to
   * MAX_WRAP_PIECES. False when `raw` is not such a piece (it is then read as a line of its own).
   */
  private continueWrapped(raw: string): boolean {
    const w = this.wrapped;
    const piece = raw.trimEnd();
    // Only in a log whose lines carry timestamps can a line without one be told for a piece of the one before.
    if (!w || piece.trim() === '' || lineTimestamp(raw.slice(0, 64)) !== null || lineTimestamp(w.head) === null) return false;
    const soft = w.msg.endsWith('=');
    const head = w.msg.trimEnd();
    const joined = soft ? `${w.msg.slice(0, -1)}${piece}` : head === '' ? piece : `${head} ${piece.trimStart()}`;
    const whole =
      soft || w.soft ? joined.replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))) : joined;
    if (!whole.endsWith('=') && RULES.some((r) => r.re.test(whole))) {
      if (w.event && this.events.at(-1) === w.event) this.events.pop();
      this.hfi1Lines -= 1;
      this.wrapped = null;
      this.push(`${w.head}${whole}`, w.line);
      return true;
    }
    if (w.pieces >= MAX_WRAP_PIECES || raw.includes('NETDEV WATCHDOG') || parseTxTraceLine(raw) !== null) return false;
    this.wrapped = { ...w, msg: joined, pieces: w.pieces + 1, soft: soft || w.soft === true };
    if (w.event?.kind === 'unrecognised') w.event.text = whole;
    return true;
  }

  /**
   * The netdev watchdog's line (ipoib.ts) of an hfi1 or hfi2 netdev: filed under the unit of its PCI address when the
   * log named one, else under `<driver> <address>`, else under the driver. False for any other line.
   */
  private pushWatchdog(raw: string, line: number): boolean {
    const w = raw.includes('NETDEV WATCHDOG') ? parseWatchdogLine(raw) : null;
    if (!w) return false;
    this.hfi1Lines += 1;
    const byPci = w.pci === null ? undefined : [...this.units.values()].find((u) => u.pci === w.pci)?.name;
    const unit = byPci ?? (w.pci === null ? (w.driver ?? 'hfi1') : `${w.driver} ${w.pci}`);
    const at = raw.indexOf(w.pci === null ? 'NETDEV WATCHDOG' : (w.driver as string));
    const ev: LogEvent = {
      line,
      ts: lineTimestamp(raw.slice(0, Math.max(0, at))),
      unit,
      kind: 'netdev-watchdog',
      netdev: w.netdev,
      txq: w.txq,
      ...(w.cpu === null ? {} : { cpu: w.cpu }),
      ...(w.timedOutMs === null ? {} : { timedOutMs: w.timedOutMs }),
    };
    if (this.events.length < MAX_EVENTS) this.events.push(ev);
    else this.eventsDropped += 1;
    return true;
  }

  /**
   * A line of tracefs `trace` text: the engine state-change event in either wording (hfi1_sdma_state names no
   * engine; hfi2_sdma_state does), a descriptor written to a ring (*_sdma_descriptor, its d0/d1 decoded as the chosen
   * chip) or the pads added to a request or batch (hfi1_sdma_pad of the Cornelis hfi1, hfi2_sdma_pad). An event names
   * its device by PCI address: it is filed under the unit of that address when the log named one, else under
   * `<module> <address>`; the pad event names no device: under the log's one unit of the event's module when it names
   * exactly one, else under the module (`hfi1` or `hfi2`).
   */
  private pushTrace(raw: string, line: number): void {
    const t = parseTxTraceLine(raw);
    if (!t) {
      this.pushWaitTrace(raw, line);
      return;
    }
    this.hfi1Lines += 1;
    let unit: string;
    if (t.kind === 'pad') {
      const same = [...this.units.values()].filter((u) => u.module === t.module);
      unit = same.length === 1 ? (same[0] as LogUnit).name : t.module;
    } else {
      const pci = t.device.toLowerCase();
      unit = [...this.units.values()].find((u) => u.pci === pci)?.name ?? `${t.module} ${pci}`;
    }
    const at = { line, ts: t.ts, unit };
    let ev: LogEvent;
    if (t.kind === 'txq') {
      ev = {
        ...at,
        kind: 'txq-event',
        event: t.event,
        txq: t.txq,
        ...(t.engine === null ? {} : { engine: t.engine }),
        head: t.head,
        tail: t.tail,
        used: t.used,
        stops: t.stops,
        noDesc: t.noDesc,
        stopped: t.stopped,
      };
    } else if (t.kind === 'state') {
      ev = { ...at, kind: 'state-change', ...(t.engine === null ? {} : { engine: t.engine }), state: t.to, fromState: t.from };
    } else if (t.kind === 'pad') {
      ev = {
        ...at,
        kind: 'pad',
        engine: t.engine,
        packets: t.packets,
        packetDescriptors: t.packetDescriptors,
        padDescriptors: t.padDescriptors,
        padSdmaDesc: t.padSdmaDesc,
      };
    } else {
      ev = {
        ...at,
        kind: 'trace-descriptor',
        engine: t.engine,
        slot: t.slot,
        flags: t.flags,
        addr: `0x${t.addr.toString(16).padStart(16, '0')}`,
        gen: t.gen,
        len: t.len,
        qw0: `0x${t.d0.toString(16).padStart(16, '0')}`,
        qw1: `0x${t.d1.toString(16).padStart(16, '0')}`,
        decoded: decodeFor(this.chip, t.d0, t.d1),
        ...(t.ahg ? { ahgIdx: t.ahg.idx, ahgMode: t.ahg.mode, ahgLen: t.ahg.len } : {}),
      };
    }
    if (this.events.length < MAX_EVENTS) this.events.push(ev);
    else this.eventsDropped += 1;
  }

  /**
   * A sleep or wake-up trace event (trace-wait.ts): filed under the unit of the PCI address it names, else under
   * `<module> <address>`; the iowait events name no device: under the log's one unit of their module when it names
   * exactly one, else under the module.
   */
  private pushWaitTrace(raw: string, line: number): void {
    const t = parseWaitTraceLine(raw);
    if (!t) return;
    this.hfi1Lines += 1;
    let unit: string;
    const module = t.module;
    if ('device' in t) {
      const pci = t.device.toLowerCase();
      unit = [...this.units.values()].find((u) => u.pci === pci)?.name ?? `${module} ${pci}`;
    } else {
      const same = [...this.units.values()].filter((u) => u.module === module);
      unit = same.length === 1 ? (same[0] as LogUnit).name : module;
    }
    const hex = (n: number) => `0x${n.toString(16)}`;
    const ev: LogEvent = {
      line,
      ts: t.ts,
      unit,
      kind: t.kind,
      ...(t.comm === null ? {} : { task: `${t.comm}-${t.pid}` }),
      ...(t.cpu === null ? {} : { cpu: t.cpu }),
    };
    if ('sFlags' in t) {
      Object.assign(ev, { qpn: t.qpn, waitFlag: hex(t.flags), sFlags: hex(t.sFlags) });
      if (t.psFlags !== null) ev.psFlags = hex(t.psFlags);
      if (t.iowFlags !== null) ev.iowFlags = hex(t.iowFlags);
    } else if (!('device' in t)) {
      Object.assign(ev, { qpn: t.qpn, iowait: `0x${t.iowait}`, iowaitFlags: hex(t.flags), iowaitFlag: hex(t.flag) });
    } else {
      ev.pq = `0x${t.pq}`;
      if (t.engine !== null) ev.engine = t.engine;
      if (t.empty !== null) ev.empty = t.empty;
      if (t.reason !== null) ev.reason = t.reason;
    }
    if (this.events.length < MAX_EVENTS) this.events.push(ev);
    else this.eventsDropped += 1;
  }

  /** The parse so far, given how many lines were read. */
  result(linesRead: number): KernelLog {
    // A watchdog line printed before any line of its unit was filed under `<driver> <pci>`: file it under the unit.
    const byPci = new Map([...this.units.values()].map((u) => [`${u.module} ${u.pci}`, u.name]));
    for (const e of this.events) if (e.kind === 'netdev-watchdog') e.unit = byPci.get(e.unit) ?? e.unit;
    return {
      units: [...this.units.values()],
      events: this.events,
      linesRead,
      hfi1Lines: this.hfi1Lines,
      looksLikeLog: this.looksLikeLog === true,
      chip: this.chip,
    };
  }
}

/** Parse kernel-log text into units and SDMA events. */
export function parseKernelLog(text: string, opts: ParseOptions = {}): KernelLog {
  const parser = new KernelLogParser(opts);
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  parser.beginning(lines.slice(0, 8).join('\n'));
  lines.forEach((raw, i) => {
    parser.push(raw, i + 1);
  });
  return parser.result(lines.length);
}
