// The Chrome trace-event format (the "JSON Object Format" chrome://tracing and Perfetto open): the document, the
// events hfi1-sdma writes, and one constructor per phase. Timestamps are microseconds (fractions allowed); a
// document written here says which clock they count in (otherData.clock): epoch microseconds for a live host or
// a snapshot stamped with its capture time, so that two hosts' files merge on one axis; the emulator's virtual
// time; or steps of a race trace. Types and pure constructors only.

/** The clock a trace's timestamps count in. */
export type TraceClock = 'epoch' | 'virtual' | 'relative' | 'steps';

/** Metadata naming a process or a thread (track), or ordering them. */
export interface MetadataEvent {
  ph: 'M';
  name: 'process_name' | 'process_labels' | 'process_sort_index' | 'thread_name' | 'thread_sort_index';
  pid: number;
  tid?: number;
  ts?: number;
  args: { name: string } | { labels: string } | { sort_index: number };
}

/** A complete slice on a thread track: a span of `dur` µs from `ts` (engine states, race steps). */
export interface CompleteEvent {
  ph: 'X';
  name: string;
  cat: string;
  ts: number;
  dur: number;
  pid: number;
  tid: number;
  args: Record<string, unknown>;
}

/** A nestable async span's begin, end or instant: spans of one `cat` and `id` form one track and may overlap others. */
export interface AsyncEvent {
  ph: 'b' | 'e' | 'n';
  name: string;
  cat: string;
  id: string;
  ts: number;
  pid: number;
  tid: number;
  args: Record<string, unknown>;
}

/** An instant on a thread (`s: 't'`), its process (`'p'`) or the whole trace (`'g'`). */
export interface InstantEvent {
  ph: 'i';
  name: string;
  cat: string;
  ts: number;
  pid: number;
  tid: number;
  s: 't' | 'p' | 'g';
  args: Record<string, unknown>;
}

/** A counter: each numeric arg is a series of the counter track named `name` in the process. */
export interface CounterEvent {
  ph: 'C';
  name: string;
  ts: number;
  pid: number;
  args: Record<string, number>;
}

export type TraceEvent = MetadataEvent | CompleteEvent | AsyncEvent | InstantEvent | CounterEvent;

/** Who the document speaks for, when, and which hfi1-sdma wrote it: the fields every JSON document opens with. */
export interface TraceStamp {
  host: string | null;
  /** When the numbers were taken (ISO 8601, UTC). */
  time: string;
  toolVersion: string;
}

/** What a document says of itself (otherData). */
export interface TraceHeader {
  /** hfi1-sdma and its version. */
  tool: string;
  /** What the timestamps count (epoch µs, the emulator's virtual µs, µs from the first instant, or race steps). */
  clock: TraceClock;
  /** What was traced, in words (the host or snapshot, the emulator, a race variant). */
  source: string;
}

/** Round a time in µs to nanoseconds (displayTimeUnit ns): stable text, no binary fractions. */
export function micros(ms: number): number {
  return Math.round(ms * 1e6) / 1e3;
}

/** Name a process (pid) and place it among others. */
export function processMeta(pid: number, name: string, labels: string, sortIndex: number): MetadataEvent[] {
  return [
    { ph: 'M', name: 'process_name', pid, args: { name } },
    { ph: 'M', name: 'process_labels', pid, args: { labels } },
    { ph: 'M', name: 'process_sort_index', pid, args: { sort_index: sortIndex } },
  ];
}

/** Name a thread track and place it within its process. */
export function threadMeta(pid: number, tid: number, name: string, sortIndex: number): MetadataEvent[] {
  return [
    { ph: 'M', name: 'thread_name', pid, tid, args: { name } },
    { ph: 'M', name: 'thread_sort_index', pid, tid, args: { sort_index: sortIndex } },
  ];
}

/** A complete slice from `startUs` to `endUs` (a zero span when they are equal). */
export function slice(
  pid: number,
  tid: number,
  name: string,
  cat: string,
  startUs: number,
  endUs: number,
  args: Record<string, unknown>,
): CompleteEvent {
  return { ph: 'X', name, cat, ts: startUs, dur: Math.max(0, Math.round((endUs - startUs) * 1e3) / 1e3), pid, tid, args };
}

/** An instant on a thread track. */
export function instant(
  pid: number,
  tid: number,
  name: string,
  cat: string,
  ts: number,
  args: Record<string, unknown>,
  scope: 't' | 'p' | 'g' = 't',
): InstantEvent {
  return { ph: 'i', name, cat, ts, pid, tid, s: scope, args };
}

/** One point of a counter track. */
export function counter(pid: number, name: string, ts: number, args: Record<string, number>): CounterEvent {
  return { ph: 'C', name, ts, pid, args };
}

/** A nestable async begin, end or instant. */
export function asyncEvent(
  ph: 'b' | 'e' | 'n',
  pid: number,
  tid: number,
  cat: string,
  id: string,
  name: string,
  ts: number,
  args: Record<string, unknown> = {},
): AsyncEvent {
  return { ph, name, cat, id, ts, pid, tid, args };
}
