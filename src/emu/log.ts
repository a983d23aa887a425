// The emulator's event log: fixed-width numeric records, hashed in the order written (sha256 of the records'
// bytes), so the same seed and scenario give the same hash, and a bounded tail of records kept for reading and for
// the tests. A full chunk is hashed when it leaves the retained tail or when a digest is asked for, not when it
// fills: a run that never asks for its digest hashes only what it drops.
import { createHash, type Hash } from 'node:crypto';

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
} as const;

export type LogKindName = keyof typeof LogKind;

const FIELDS = 6; // time, kind, engine, a, b, c
const CHUNK_RECORDS = 16384;

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

/** Append-only log; `retain` bounds the number of records kept in memory (all are hashed). */
export class EventLog {
  private hash: Hash = createHash('sha256');
  private chunk = new Float64Array(CHUNK_RECORDS * FIELDS);
  private used = 0;
  private kept: Float64Array<ArrayBuffer>[] = [];
  /** The leading `hashedChunks` of `kept` are already in `hash`. */
  private hashedChunks = 0;
  private keptRecords = 0;
  /** Records written since the start. */
  count = 0;

  constructor(private readonly retain = 1_000_000) {}

  /** Write one record. */
  write(timeNs: number, kind: number, engine: number, a: number, b: number, c: number): void {
    const ch = this.chunk;
    let i = this.used * FIELDS;
    ch[i++] = timeNs;
    ch[i++] = kind;
    ch[i++] = engine;
    ch[i++] = a;
    ch[i++] = b;
    ch[i] = c;
    this.count++;
    if (++this.used === CHUNK_RECORDS) this.flush();
  }

  private flush(): void {
    this.kept.push(this.chunk);
    this.keptRecords += this.used;
    let reuse: Float64Array<ArrayBuffer> | undefined;
    while (this.keptRecords > this.retain && this.kept.length > 0) {
      if (this.hashedChunks === 0) this.hashKept(1);
      reuse = this.kept.shift();
      this.hashedChunks--;
      this.keptRecords -= CHUNK_RECORDS;
    }
    // A chunk that fell out of the retained tail is reused rather than left to the collector.
    this.chunk = reuse ?? new Float64Array(CHUNK_RECORDS * FIELDS);
    this.used = 0;
  }

  /** Bring the first `upTo` kept chunks into the hash. */
  private hashKept(upTo: number): void {
    for (; this.hashedChunks < upTo; this.hashedChunks++) {
      const ch = this.kept[this.hashedChunks] as Float64Array<ArrayBuffer>;
      this.hash.update(new Uint8Array(ch.buffer, 0, CHUNK_RECORDS * FIELDS * 8));
    }
  }

  /** sha256 (hex) of every record written so far. */
  digest(): string {
    this.hashKept(this.kept.length);
    const h = this.hash.copy();
    h.update(new Uint8Array(this.chunk.buffer, 0, this.used * FIELDS * 8));
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
    for (const ch of this.kept) read(ch, CHUNK_RECORDS);
    read(this.chunk, this.used);
    return out;
  }
}
