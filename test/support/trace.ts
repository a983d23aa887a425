// Checking a trace file: valid against docs/schema/trace.schema.json, and sound as a viewer reads it: every tid
// belongs to one pid, every process and thread used is named, every async begin has its end (same cat and id)
// and no end comes without a begin, slices on one track never overlap.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { TraceEvent, TraceHeader } from '../../src/trace/format.js';
import { ROOT } from './child.js';

/** A trace document as read back. */
export interface TraceDoc {
  host: string | null;
  time: string;
  toolVersion: string;
  displayTimeUnit: string;
  traceEvents: TraceEvent[];
  otherData: TraceHeader;
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
ajv.addSchema(JSON.parse(readFileSync(join(ROOT, 'docs', 'schema', 'defs.schema.json'), 'utf8')));
const validate = ajv.compile(JSON.parse(readFileSync(join(ROOT, 'docs', 'schema', 'trace.schema.json'), 'utf8')));

/** Read a trace file. */
export function readTrace(file: string): TraceDoc {
  return JSON.parse(readFileSync(file, 'utf8')) as TraceDoc;
}

/** What is wrong with a trace (empty when nothing). */
export function traceProblems(doc: unknown): string[] {
  if (!validate(doc)) return (validate.errors ?? []).map((e) => `schema: ${e.instancePath} ${e.message}`);
  const events = (doc as TraceDoc).traceEvents;
  const out: string[] = [];
  const pidOfTid = new Map<number, number>();
  const namedPids = new Set<number>();
  const namedTids = new Set<number>();
  for (const e of events) {
    if (e.ph === 'M' && e.name === 'process_name') namedPids.add(e.pid);
    if (e.ph === 'M' && e.name === 'thread_name' && e.tid !== undefined) namedTids.add(e.tid);
    if ('tid' in e && e.tid !== undefined) {
      const had = pidOfTid.get(e.tid);
      if (had !== undefined && had !== e.pid) out.push(`tid ${e.tid} is in pids ${had} and ${e.pid}`);
      pidOfTid.set(e.tid, e.pid);
    }
  }
  for (const e of events) {
    if (!namedPids.has(e.pid)) out.push(`pid ${e.pid} has no process_name`);
    if (e.ph !== 'M' && e.ph !== 'C' && !namedTids.has(e.tid)) out.push(`tid ${e.tid} has no thread_name`);
  }
  const sorted = events
    .map((e, i) => ({ e, i }))
    .sort((a, b) => ('ts' in a.e ? (a.e.ts ?? 0) : 0) - ('ts' in b.e ? (b.e.ts ?? 0) : 0) || a.i - b.i);
  const open = new Map<string, number>();
  for (const { e } of sorted) {
    if (e.ph !== 'b' && e.ph !== 'e') continue;
    const key = `${e.pid} ${e.cat} ${e.id}`;
    const depth = open.get(key) ?? 0;
    if (e.ph === 'b') open.set(key, depth + 1);
    else if (depth === 0) out.push(`an end of ${key} at ${e.ts} without a begin`);
    else open.set(key, depth - 1);
  }
  for (const [key, depth] of open) if (depth > 0) out.push(`${key} begun and never ended`);
  const slices = new Map<number, { ts: number; end: number }[]>();
  for (const e of events) if (e.ph === 'X') slices.set(e.tid, [...(slices.get(e.tid) ?? []), { ts: e.ts, end: e.ts + e.dur }]);
  for (const [tid, list] of slices) {
    list.sort((a, b) => a.ts - b.ts);
    for (let k = 1; k < list.length; k++) {
      const prev = list[k - 1] as { end: number };
      const cur = list[k] as { ts: number };
      if (cur.ts < prev.end - 1e-6) out.push(`slices overlap on tid ${tid} at ${cur.ts}`);
    }
  }
  return [...new Set(out)];
}

/** The events of one track named `thread` (its thread_name, or that name with a parenthesis after it: `sdma3 (cpu 2)`). */
export function onTrack(doc: TraceDoc, thread: string): TraceEvent[] {
  const named = (n: string) => n === thread || n.startsWith(`${thread} (`);
  const tids = new Set(
    doc.traceEvents
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && 'name' in e.args && named(e.args.name))
      .map((e) => (e.ph === 'M' ? e.tid : undefined)),
  );
  return doc.traceEvents.filter((e) => e.ph !== 'M' && 'tid' in e && tids.has(e.tid));
}
