// Reading the hfi1 SDMA lines of a kernel log (dmesg or journalctl text, the driver log lines, sdma.c). Pure: text in,
// records out. Lines of other drivers are passed over; an hfi1 SDMA line of a known form that
// does not parse is kept as an `unrecognised` event with its line number rather than dropped.

import { decodeEngErr, type EngErrBit, isHaltClassError } from '../progress/csr.js';
import { type DescriptorFields, decode } from '../progress/descriptor.js';

/** What the log says about one unit. */
export interface LogUnit {
  name: string;
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
  | 'check-scheduled'
  | 'progress-check'
  | 'bad-head'
  | 'dmawait-not-empty'
  | 'spurious-interrupt'
  | 'invalid-interrupt'
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
  errors?: EngErrBit[];
  halts?: boolean;
  head?: number;
  tail?: number;
  freecnt?: number;
  flushListNonEmpty?: boolean;
  slot?: number;
  flags?: string;
  addr?: string;
  gen?: number;
  len?: number;
  qw0?: string;
  qw1?: string;
  decoded?: DescriptorFields;
  ahgIdx?: number;
  ahgMode?: number;
  ahgLen?: number;
  source?: string;
  hwHead?: number;
  swHead?: number;
  swTail?: number;
  cnt?: number;
  text?: string;
}

/** The parse of a whole log. */
export interface KernelLog {
  units: LogUnit[];
  events: LogEvent[];
  linesRead: number;
  /** Lines that carried the hfi1 prefix (of any kind). */
  hfi1Lines: number;
}

/**
 * The timestamp a log line starts with, as printed: dmesg `[  123.456789]` (also with -T, a date
 * in brackets), /dev/kmsg's `PRI,SEQ,USEC,FLAGS;` (the microseconds), journalctl's short
 * (`Nov 30 22:00:00`, with fractions in short-precise) and short-iso (`2026-11-30T22:00:00+0000`)
 * forms; null when there is none.
 */
export function lineTimestamp(prefix: string): string | null {
  const p = prefix.trimStart();
  const bracket = /^\[\s*([^\]]+?)\s*\]/.exec(p);
  if (bracket) return bracket[1] ?? null;
  const kmsg = /^\d+,\d+,(\d+),[^;]*;/.exec(p);
  if (kmsg) return kmsg[1] ?? null;
  const iso = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s/.exec(p);
  if (iso) return iso[1] ?? null;
  const short = /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?)\s/.exec(p);
  if (short) return short[1] ?? null;
  return null;
}

// `hfi1 0000:05:00.0: hfi1_0: message` after any timestamp or journal prefix.
const PREFIX = /hfi1 ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): (hfi1_\d+): ?(.*)$/;
const N = '(\\d+)';
const HEX = '0x([0-9a-fA-F]+)';

const RULES: { re: RegExp; apply: (m: RegExpExecArray, ctx: Ctx) => void }[] = [
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
      target.decoded = decode(qw0, qw1);
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
      while (c.unit.engineCpu.length <= e) c.unit.engineCpu.push(null);
      c.unit.engineCpu[e] = Number(m[3]);
    },
  },
];

interface Ctx {
  unit: LogUnit;
  engine: number | undefined;
  desc: LogEvent | undefined;
  emit(e: Omit<LogEvent, 'line' | 'unit' | 'ts'>): LogEvent;
}

/** At most this many events are kept; later ones are counted (a log is read in bounded memory). */
export const MAX_EVENTS = 100_000;
/** At most this many units are kept (a real host has a handful). */
export const MAX_UNITS = 64;

/** Reads a kernel log line by line, keeping only what the report needs (units, SDMA events). */
export class KernelLogParser {
  private readonly units = new Map<string, LogUnit>();
  private readonly engineOf = new Map<string, number | undefined>();
  private readonly descOf = new Map<string, LogEvent | undefined>();
  private readonly events: LogEvent[] = [];
  private hfi1Lines = 0;
  /** Events (and lines of units beyond MAX_UNITS) not kept. */
  eventsDropped = 0;

  /** Take one line (without its newline); `line` counts from 1. */
  push(raw: string, line: number): void {
    const m = PREFIX.exec(raw);
    if (!m) return;
    this.hfi1Lines += 1;
    const [, bdf = '', name = '', msg = ''] = m;
    const pci = bdf.toLowerCase();
    const ts = lineTimestamp(raw.slice(0, m.index));
    let unit = this.units.get(name);
    if (!unit) {
      if (this.units.size >= MAX_UNITS) {
        this.eventsDropped += 1;
        return;
      }
      unit = { name, pci, engines: null, descqCnt: null, engineCpu: [], chipEngines: null, memSize: null };
      this.units.set(name, unit);
    }
    const events = this.events;
    const self = this;
    const ctx: Ctx = {
      unit,
      engine: this.engineOf.get(name),
      desc: this.descOf.get(name),
      emit(e) {
        const ev: LogEvent = { line, ts, unit: name, ...e };
        if (events.length < MAX_EVENTS) events.push(ev);
        else self.eventsDropped += 1;
        return ev;
      },
    };
    const rule = RULES.find((r) => r.re.test(msg));
    const continuation = /^\s*(desc0:|aidx:)/.test(msg);
    if (!continuation) ctx.desc = undefined;
    if (rule) {
      const mm = rule.re.exec(msg);
      if (mm) rule.apply(mm, ctx);
    } else if (/SDMA|sdma|sde /.test(msg)) {
      ctx.emit({ kind: 'unrecognised', text: msg });
    }
    this.engineOf.set(name, ctx.engine);
    this.descOf.set(name, ctx.desc);
  }

  /** The parse so far, given how many lines were read. */
  result(linesRead: number): KernelLog {
    return { units: [...this.units.values()], events: this.events, linesRead, hfi1Lines: this.hfi1Lines };
  }
}

/** Parse kernel-log text into units and SDMA events. */
export function parseKernelLog(text: string): KernelLog {
  const parser = new KernelLogParser();
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((raw, i) => {
    parser.push(raw, i + 1);
  });
  return parser.result(lines.length);
}
