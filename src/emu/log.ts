// The emulator's event log: fixed-width numeric records (time, kind, engine, a, b, c), a bounded tail of them kept
// for reading and for the tests, and a digest of every record written.
//
// The digest is made so that a run skipped over by the fast model (fast-forward.ts) digests exactly as the same run
// stepped: each engine's records (and the unit's) form a stream, and a stream is digested as a polynomial (Horner's
// rule modulo two primes) over its records with each field written as its difference from the same field of the
// stream's previous record of that kind (the time as the difference from the previous record's time), in two lanes
// of Horner's rule modulo 2^32 with different odd bases. A periodic stretch then repeats the same words, and k
// repetitions of a block digest in closed form (a geometric sum, by doubling), whatever their number. The published
// digest is the sha256 of every stream's two lanes and record count.
import { createHash } from 'node:crypto';
import { doubleFields } from './double-fields.js';

/** Record kinds. Fields a, b, c are described per kind. */
export const LogKind = {
  /** A fault took effect: a = fault kind index (FAULT_NAMES), b = parameter; engine −1 and c = its port for a link fault that reached no engine. */
  fault: 1,
  /** A state event: a = event index (EVENT_NAMES), b = state before, c = state after (−1 unlisted). */
  event: 2,
  /** sdma_engine_interrupt: a = status bits (1 int, 2 progress, 4 idle), b = hardware head, c = txreqs completed. */
  interrupt: 3,
  /** Engine-error interrupt: a = SEND_DMA_ENG_ERR_STATUS, b = 1 when halt-class. */
  engineError: 4,
  /** A sender went to dmawait: a = iowait id, b = num_desc of its txreq, c = the sleep callback's return. */
  sleep: 5,
  /** A waiter was woken by sdma_desc_avail or a flush: a = iowait id, b = 0 avail / 1 flush. */
  wakeup: 6,
  /** A placement failed (descq_full_count + 1): a = return code, b = num_desc. */
  descqFull: 7,
  /** A txreq completed ABORTED: a = tx serial (low 32 bits), b = 1 flush list / 0 ring. */
  aborted: 8,
  /** The chip halted: a = error bit that halted it. */
  chipHalt: 9,
  /** Software clean-up ran: a = descq_head before, b = descq_tail before. */
  swCleanUp: 10,
  /** A PSM writer gave up waiting after 1000 ms: a = iowait id. */
  waitTimeout: 11,
  /** Halt-wait gave up after 10 ms. */
  haltWaitTimeout: 12,
  /** The forced progress interrupt of sdma_engine_progress_schedule fired. */
  progressForced: 13,
  /** An interrupt the chip raised was lost (fault): a = status bits. */
  interruptLost: 14,
  /** An invariant was violated: a = violation index. */
  violation: 15,
  /** An IPoIB queue's netdev subqueue: a = iowait id, b = 1 stopped (hfi1_ipoib_sdma_sleep) / 0 restarted (its wake-up). */
  subqueue: 16,
  /** An IPoIB txreq dropped, its netdev unregistered: a = iowait id, b = num_desc, c = 1 the sleep callback's -EINVAL / 0 parked on the queue's list. */
  ipoibDrop: 17,
  /**
   * The fast model skipped a periodic stretch of the engine (kept in the retained tail only, not digested): a =
   * periods skipped, b = the period (ns), c = records the stretch held (they are digested, not kept).
   */
  repeat: 18,
} as const;

export type LogKindName = keyof typeof LogKind;

/**
 * Which records the log keeps in memory (every one is digested and counted either way): `all`, or `rare` (the
 * default): only the kinds that mark a change in an engine's life (faults, state events, engine errors, halts,
 * clean-ups, timeouts, lost interrupts, violations), which a run writes a few of. The per-packet kinds (interrupts, sleeps, wake-ups,
 * failed placements, aborts, forced progress, subqueue stops, IPoIB drops, skips) are most of a busy unit's records;
 * no command, library call or twin reads them back (the invariant check reads the state events), and keeping them
 * costs memory (the last million records, about 50 MB) and the page faults of touching it; a test of them asks for
 * `all`.
 */
export type LogRetention = 'all' | 'rare';

/** The kinds `rare` keeps. */
export const RARE_KINDS: readonly LogKindName[] = [
  'fault',
  'event',
  'engineError',
  'chipHalt',
  'swCleanUp',
  'waitTimeout',
  'haltWaitTimeout',
  'interruptLost',
  'violation',
];

const FIELDS = 6; // time, kind, engine, a, b, c
/** Records per chunk of the retained log once it has grown; the first holds FIRST_CHUNK_RECORDS, each next twice the last. */
const CHUNK_RECORDS = 16384;
/** A short run (most of a command's) keeps its few records without zeroing a full chunk first. */
const FIRST_CHUNK_RECORDS = 256;
/** Kinds a stream remembers the last fields of (LogKind values are below this). */
const KINDS = 20;
/**
 * The two bases of the polynomial digest (odd, so that multiplying by them is a bijection modulo 2^32): each lane is
 * Horner's rule modulo 2^32, which Math.imul computes exactly.
 */
const BASE1 = 0x01000193;
const BASE2 = 0x5bd1e995;
/** Words each record adds to a lane: the time's difference (low and high 32 bits), the kind, and a, b, c's differences. */
const WORDS = 6;

/** One decoded record. */
export interface LogRecord {
  timeNs: number;
  kind: LogKindName;
  engine: number;
  a: number;
  b: number;
  c: number;
}

const KIND_NAMES: LogKindName[] = [];
for (const [k, v] of Object.entries(LogKind)) KIND_NAMES[v] = k as LogKindName;

/** The digest state of one stream: where it stands, and what the next record's fields are written against. */
export interface StreamState {
  h1: number;
  h2: number;
  /** Records digested. */
  n: number;
  /** The previous record's time. */
  lastNs: number;
  /** Per kind, the previous record's a, b, c (3 × KINDS). */
  last: Float64Array;
}

function newStream(): StreamState {
  const s = { h1: 0, h2: 0, n: 0, lastNs: 0, last: new Float64Array(3 * KINDS) };
  doubleFields(s, 'h1', 'h2', 'lastNs');
  return s;
}

/**
 * A stream's state as the fast model keeps it at each point it may repeat from: the same fields, the per-kind
 * fields in a plain array (V8 allocates a small plain array on its heap in a tenth of the time a typed array's
 * backing store takes, and the fast model keeps a thousand of these a virtual second).
 */
export interface StreamCopy {
  h1: number;
  h2: number;
  n: number;
  lastNs: number;
  last: number[];
}

/** A copy of a stream's state (or of a copy). */
export function copyStream(s: StreamState | StreamCopy): StreamCopy {
  const n = s.last.length;
  const last = new Array<number>(n);
  for (let i = 0; i < n; i++) last[i] = s.last[i] as number;
  return { h1: s.h1, h2: s.h2, n: s.n, lastNs: s.lastNs, last };
}

/** Write `s` over `into` (a copy kept earlier, its storage reused). */
export function copyStreamInto(s: StreamState, into: StreamCopy): void {
  into.h1 = s.h1;
  into.h2 = s.h2;
  into.n = s.n;
  into.lastNs = s.lastNs;
  const last = into.last;
  for (let i = 0; i < last.length; i++) last[i] = s.last[i] as number;
}

const U32 = 4_294_967_296;

/** A field as an integer (a fraction, which only a fault's parameter can be, in 1/65536ths). */
function whole(v: number): number {
  return Number.isInteger(v) ? v : Math.round(v * 65_536);
}

/**
 * The difference of two field values modulo 2^32: a free-running 32-bit counter (a descq_head) that wraps still
 * differs by the same amount from one period to the next.
 */
function fieldDelta(v: number, before: number): number {
  const d = (whole(v) - whole(before)) % U32;
  return d < 0 ? d + U32 : d;
}

/** (x · y) mod 2^32 and (x + y) mod 2^32, as unsigned. */
const mul = (x: number, y: number): number => Math.imul(x, y) >>> 0;
const add = (x: number, y: number): number => (x + y) >>> 0;

/** base^e mod 2^32 (e a non-negative integer, possibly beyond 2^32). */
function pow32(base: number, e: number): number {
  let r = 1;
  let x = base >>> 0;
  let n = e;
  while (n > 0) {
    if (n % 2 === 1) r = mul(r, x);
    x = mul(x, x);
    n = Math.floor(n / 2);
  }
  return r;
}

/** [R^k, 1 + R + … + R^(k−1)] mod 2^32, by doubling (no division: 2^32 is not prime). */
function powAndSum(R: number, k: number): [number, number] {
  if (k === 0) return [1, 0];
  if (k % 2 === 1) {
    const [p, s] = powAndSum(R, k - 1);
    return [mul(p, R), add(1, mul(R, s))];
  }
  const [p, s] = powAndSum(R, k / 2);
  return [mul(p, p), add(s, mul(p, s))];
}

/**
 * A lane after the block that took it from `h0` to `h1` (`words` Horner steps) repeats `k` more times: each
 * repetition maps h to h·R + c with R = base^words and c = h1 − h0·R, so k of them give h1·R^k + c·(1 + … + R^(k−1)).
 */
function repeatLane(h0: number, h1: number, words: number, k: number, base: number): number {
  const R = pow32(base, words);
  const c = (h1 - mul(h0, R)) >>> 0;
  const [Rk, sum] = powAndSum(R, k);
  return add(mul(h1, Rk), mul(c, sum));
}

/**
 * A stream's state `at` (a copy taken at an instant φ of a period that runs from `from` to `to`) moved on `k` periods,
 * in place: the state the stream would have at φ + k periods had the periods after `to` been stepped. Up to φ + k
 * periods the stream takes the records to `to`, k − 1 more periods of them, then those from `from` to φ again: each a
 * block of Horner steps, so a lane is the block repeated (repeatLane) and then the partial block, an affine map h ↦ h·R
 * + c with R = base^words and c = h(φ) − h(from)·R. Each field's last value moves on by k times what one period adds to
 * it, as repeat() moves the stream's own.
 */
export function carryStream(from: StreamCopy, to: StreamCopy, at: StreamCopy, k: number, periodNs: number): void {
  const records = to.n - from.n;
  if (k <= 0 || records <= 0) return;
  const words = records * WORDS;
  const partial = (at.n - from.n) * WORDS;
  const lane = (h0: number, h1: number, hAt: number, base: number): number => {
    const before = repeatLane(h0, h1, words, k - 1, base);
    const R = pow32(base, partial);
    return add(mul(before, R), (hAt - mul(h0, R)) >>> 0);
  };
  at.h1 = lane(from.h1, to.h1, at.h1, BASE1);
  at.h2 = lane(from.h2, to.h2, at.h2, BASE2);
  at.n += records * k;
  at.lastNs += k * periodNs;
  const last = at.last;
  for (let i = 0; i < last.length; i++) last[i] = (last[i] as number) + k * ((to.last[i] as number) - (from.last[i] as number));
}

/** Append-only log; `retain` bounds the number of records kept in memory (all are digested). */
export class EventLog {
  private chunk = new Float64Array(FIRST_CHUNK_RECORDS * FIELDS);
  /** Records the current chunk holds. */
  private capacity = FIRST_CHUNK_RECORDS;
  private used = 0;
  private kept: Float64Array<ArrayBuffer>[] = [];
  private keptRecords = 0;
  /** Digest streams: [0] the unit's (engine −1), [1 + i] engine i's (absolute index). */
  private readonly streams: StreamState[] = [];
  /** Records written since the start, those the fast model skipped included. */
  count = 0;
  /**
   * Given every record as it is written, when set (the emulator's trace events, trace-events.ts, which need the
   * stepped model: the records of a stretch the fast model skips are never written one by one).
   */
  tap: ((timeNs: number, kind: number, engine: number, a: number, b: number, c: number) => void) | null = null;

  /** Whether records of each kind are kept (LogRetention). */
  private readonly keepKind = new Uint8Array(KINDS);

  constructor(
    retention: LogRetention = 'rare',
    private readonly retain = 1_000_000,
  ) {
    for (const [name, kind] of Object.entries(LogKind)) {
      this.keepKind[kind] = retention === 'all' || RARE_KINDS.includes(name as LogKindName) ? 1 : 0;
    }
  }

  /** Whether records of `kind` are kept in memory (all are digested). */
  keeps(kind: LogKindName): boolean {
    return this.keepKind[LogKind[kind]] === 1;
  }

  /** The digest stream of records of `engine` (−1: the unit's). */
  stream(engine: number): StreamState {
    const i = engine < 0 ? 0 : engine + 1;
    let s = this.streams[i];
    if (s === undefined) {
      for (let j = this.streams.length; j <= i; j++) this.streams[j] = newStream();
      s = this.streams[i] as StreamState;
    }
    return s;
  }

  /** Write one record. */
  write(timeNs: number, kind: number, engine: number, a: number, b: number, c: number): void {
    this.digestRecord(this.stream(engine), timeNs, kind, a, b, c);
    if (this.keepKind[kind] === 1) this.keep(timeNs, kind, engine, a, b, c);
    this.count++;
    if (this.tap !== null) this.tap(timeNs, kind, engine, a, b, c);
  }

  private digestRecord(s: StreamState, timeNs: number, kind: number, a: number, b: number, c: number): void {
    const last = s.last;
    const k = 3 * kind;
    const da = fieldDelta(a, last[k] as number);
    const db = fieldDelta(b, last[k + 1] as number);
    const dc = fieldDelta(c, last[k + 2] as number);
    const dt = whole(timeNs - s.lastNs);
    last[k] = a;
    last[k + 1] = b;
    last[k + 2] = c;
    s.lastNs = timeNs;
    const lo = dt >>> 0;
    const hi = Math.floor(dt / U32) >>> 0;
    let h = s.h1;
    h = (Math.imul(h, BASE1) + lo) >>> 0;
    h = (Math.imul(h, BASE1) + hi) >>> 0;
    h = (Math.imul(h, BASE1) + kind) >>> 0;
    h = (Math.imul(h, BASE1) + da) >>> 0;
    h = (Math.imul(h, BASE1) + db) >>> 0;
    s.h1 = (Math.imul(h, BASE1) + dc) >>> 0;
    h = s.h2;
    h = (Math.imul(h, BASE2) + lo) >>> 0;
    h = (Math.imul(h, BASE2) + hi) >>> 0;
    h = (Math.imul(h, BASE2) + kind) >>> 0;
    h = (Math.imul(h, BASE2) + da) >>> 0;
    h = (Math.imul(h, BASE2) + db) >>> 0;
    s.h2 = (Math.imul(h, BASE2) + dc) >>> 0;
    s.n++;
  }

  private keep(timeNs: number, kind: number, engine: number, a: number, b: number, c: number): void {
    const ch = this.chunk;
    let i = this.used * FIELDS;
    ch[i++] = timeNs;
    ch[i++] = kind;
    ch[i++] = engine;
    ch[i++] = a;
    ch[i++] = b;
    ch[i] = c;
    if (++this.used === this.capacity) this.flush();
  }

  /**
   * The records of `engine`'s stream from state `from` to its state now repeat `k` more times, `periodNs` apart (the
   * fast model skipped them): digest them in closed form, count them, and keep one `repeat` record in their place.
   */
  repeat(engine: number, from: StreamCopy, k: number, periodNs: number, nowNs: number): void {
    const s = this.stream(engine);
    const records = s.n - from.n;
    if (k <= 0) return;
    if (records > 0) {
      const words = records * WORDS;
      s.h1 = repeatLane(from.h1, s.h1, words, k, BASE1);
      s.h2 = repeatLane(from.h2, s.h2, words, k, BASE2);
      s.n += records * k;
      s.lastNs += k * periodNs;
      for (let i = 0; i < s.last.length; i++) {
        s.last[i] = (s.last[i] as number) + k * ((s.last[i] as number) - (from.last[i] as number));
      }
      this.count += records * k;
    }
    if (this.keepKind[LogKind.repeat] === 1) this.keep(nowNs, LogKind.repeat, engine, k, periodNs, records * k);
  }

  /**
   * `engine`'s stream set to `to` (a state kept within a period, carried on: carryStream), the fast model having put
   * the engine there (snapshot.ts); the records between count as written, and one `repeat` record is kept.
   */
  jump(engine: number, to: StreamCopy, periods: number, periodNs: number, nowNs: number): void {
    const s = this.stream(engine);
    const records = to.n - s.n;
    s.h1 = to.h1;
    s.h2 = to.h2;
    s.n = to.n;
    s.lastNs = to.lastNs;
    for (let i = 0; i < s.last.length; i++) s.last[i] = to.last[i] as number;
    this.count += records;
    if (this.keepKind[LogKind.repeat] === 1) this.keep(nowNs, LogKind.repeat, engine, periods, periodNs, records);
  }

  private flush(): void {
    this.kept.push(this.chunk);
    this.keptRecords += this.used;
    const next = Math.min(CHUNK_RECORDS, 2 * this.capacity);
    let reuse: Float64Array<ArrayBuffer> | undefined;
    while (this.keptRecords > this.retain && this.kept.length > 0) {
      reuse = this.kept.shift();
      this.keptRecords -= (reuse as Float64Array).length / FIELDS;
    }
    // A full-sized chunk that fell out of the retained tail is reused rather than left to the collector.
    this.chunk = reuse !== undefined && reuse.length === next * FIELDS ? reuse : new Float64Array(next * FIELDS);
    this.capacity = next;
    this.used = 0;
  }

  /** sha256 (hex) of every stream's residues and record count: the same for a run however it was stepped or skipped. */
  digest(): string {
    const h = createHash('sha256');
    const words = new Float64Array(3 * this.streams.length);
    this.streams.forEach((s, i) => {
      words[3 * i] = s.h1;
      words[3 * i + 1] = s.h2;
      words[3 * i + 2] = s.n;
    });
    h.update(new Uint8Array(words.buffer));
    return h.digest('hex');
  }

  /** The retained records, oldest first, optionally only those of some kinds. */
  records(kinds?: readonly LogKindName[]): LogRecord[] {
    const want = kinds ? new Set(kinds.map((k) => LogKind[k])) : null;
    const out: LogRecord[] = [];
    const read = (ch: Float64Array, n: number) => {
      for (let r = 0; r < n; r++) {
        const i = r * FIELDS;
        const kind = ch[i + 1] as number;
        if (want && !want.has(kind as never)) continue;
        out.push({
          timeNs: ch[i] as number,
          kind: KIND_NAMES[kind] ?? 'violation',
          engine: ch[i + 2] as number,
          a: ch[i + 3] as number,
          b: ch[i + 4] as number,
          c: ch[i + 5] as number,
        });
      }
    };
    for (const ch of this.kept) read(ch, ch.length / FIELDS);
    read(this.chunk, this.used);
    return out;
  }
}
