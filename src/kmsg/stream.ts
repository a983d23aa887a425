// Reading a kernel log as a stream in bounded memory: only lines that carry an hfi1 or hfi2 prefix are
// decoded and parsed; every other line is only counted. A line longer than MAX_LINE_BYTES is
// not a kernel message (printk lines are at most 1 KiB): it is skipped and counted.
import { type KernelLog, KernelLogParser, type ParseOptions } from './parse.js';

/** Longest line kept for parsing, in bytes. */
export const MAX_LINE_BYTES = 64 * 1024;

/** A parsed log plus what had to be left out to stay in bounded memory. */
export interface StreamedLog extends KernelLog {
  /** Lines longer than MAX_LINE_BYTES, skipped. */
  overlongLines: number;
  /** Events beyond the parser's cap, counted but not kept. */
  eventsDropped: number;
}

const NL = 10;
const CR = 13;
const MARK = Buffer.from('hfi');
const ONE = 0x31;
const TWO = 0x32;
const SPACE = 0x20;
const TRACE_EVENTS = [
  '_sdma_state: ',
  '_sdma_descriptor: ',
  '_sdma_pad: ',
  '_txq_',
  '_flow_flush: ',
  '_flow_switch: ',
  // The sleep and wake-up events (trace-wait.ts).
  '_qpsleep: ',
  '_qpwakeup: ',
  '_iowait_set: ',
  '_iowait_clear: ',
  '_usdma_defer: ',
  '_usdma_activate: ',
].map((e) => Buffer.from(e));
/** `)`: the driver in the older netdev watchdog line (`NETDEV WATCHDOG: ib0 (hfi1): transmit queue 0 timed out`). */
const CLOSE = 0x29;

/**
 * The next `hfi1 ` or `hfi2 ` at or after `from` (the driver's name in a device prefix), `(hfi1)` (the older netdev
 * watchdog line), or `hfi[12]_sdma_state: `, `_sdma_descriptor: `, `_sdma_pad: `, the IPoIB queue events
 * (tracefs `trace` text, trace-tx.ts) and the sleep and wake-up events (trace-wait.ts); -1 when none.
 */
function findMark(b: Buffer, from: number): number {
  for (let at = b.indexOf(MARK, from); at >= 0; at = b.indexOf(MARK, at + 1)) {
    const digit = b[at + 3];
    if (digit !== ONE && digit !== TWO) continue;
    if (b[at + 4] === SPACE || (b[at + 4] === CLOSE && b[at - 1] === 0x28)) return at;
    for (const ev of TRACE_EVENTS) {
      const end = at + 4 + ev.length;
      if (end <= b.length && b.compare(ev, 0, ev.length, at + 4, end) === 0) return at;
    }
  }
  return -1;
}

function countNewlines(b: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (b[i] === NL) n++;
  return n;
}

/** Parse a kernel log from a stream of chunks (a file, standard input). */
export async function readKernelLog(chunks: AsyncIterable<Uint8Array | string>, opts: ParseOptions = {}): Promise<StreamedLog> {
  const parser = new KernelLogParser(opts);
  let lines = 0; // complete lines before `carry`
  let carry: Buffer = Buffer.alloc(0); // the start of an unfinished line
  let skipping = false; // inside an overlong line: drop bytes up to its newline
  let overlongLines = 0;
  // The first bytes, to tell a kernel log without a single driver line from text that is no log at all.
  let head = Buffer.alloc(0);

  const take = (line: Buffer) => {
    let end = line.length;
    if (end > 0 && line[end - 1] === CR) end -= 1;
    parser.push(line.toString('utf8', 0, end), lines + 1);
  };

  for await (const chunk of chunks) {
    let data: Buffer =
      typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (head.length < 1024) head = Buffer.concat([head, data.subarray(0, 1024 - head.length)]);
    if (skipping) {
      const nl = data.indexOf(NL);
      if (nl < 0) continue;
      skipping = false;
      lines += 1;
      data = data.subarray(nl + 1);
    }
    if (carry.length > 0) data = Buffer.concat([carry, data]);
    let pos = 0; // start of the current line
    for (;;) {
      const hit = findMark(data, pos);
      if (hit < 0) break;
      const start = data.lastIndexOf(NL, hit) + 1;
      const at = Math.max(start, pos);
      lines += countNewlines(data, pos, at);
      const end = data.indexOf(NL, hit);
      if (end < 0) {
        pos = at;
        break;
      }
      if (end - at <= MAX_LINE_BYTES) take(data.subarray(at, end));
      else overlongLines += 1;
      lines += 1;
      pos = end + 1;
    }
    const last = data.lastIndexOf(NL);
    if (last >= pos) {
      lines += countNewlines(data, pos, last + 1);
      pos = last + 1;
    }
    carry = Buffer.from(data.subarray(pos));
    if (carry.length > MAX_LINE_BYTES) {
      overlongLines += 1;
      carry = Buffer.alloc(0);
      skipping = true;
    }
  }
  if (skipping) lines += 1;
  else if (carry.length > 0) {
    take(carry);
    lines += 1;
  }
  parser.beginning(head.toString('utf8'));
  return { ...parser.result(lines), overlongLines, eventsDropped: parser.eventsDropped };
}
