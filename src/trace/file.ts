// Writing a trace file as it grows (watch runs until stopped): events are streamed into a temporary beside the
// target, and only `close` ends the JSON, syncs it and renames it over the target; `abandon`, a failure or the
// process ending removes the temporary. The target is checked as every output is (output-file.ts): a regular
// file or a new name, never inside what is being read; a failure is E_CANT_CREATE (73) and leaves it as it was.
import { closeSync, constants, fsyncSync, openSync, writeSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { removeOnExit } from '../cleanup.js';
import { checkOutputTarget } from '../output-file.js';
import { outputError } from '../snapshot/output.js';
import type { TraceEvent, TraceHeader, TraceStamp } from './format.js';

/** Bytes kept before a write. */
const FLUSH_BYTES = 1 << 16;

/** A trace document being written to `target` (see the file's comment). */
export class TraceFile {
  /** Events written so far. */
  count = 0;
  private chunks: string[] = [];
  private pending = 0;
  private done = false;

  private constructor(
    readonly target: string,
    private readonly tmp: string,
    private readonly fd: number,
    private readonly forget: () => void,
    private readonly inputs: readonly string[],
    private readonly option: string,
  ) {}

  /**
   * Check `target` (named by `option`) and start its temporary, the document opening with `stamp` (host, time and
   * tool version, as every JSON document does; the viewers pass over keys they do not know): nothing is written to
   * the target yet.
   */
  static open(target: string, stamp: TraceStamp, inputs: readonly string[] = [], option = '--trace'): TraceFile {
    checkOutputTarget(target, option, inputs);
    const tmp = join(
      dirname(target),
      `.hfi1-sdma.${basename(target)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`,
    );
    let fd: number;
    let forget: () => void;
    try {
      // Created and registered for removal in one turn of the event loop: no signal can fall between them.
      fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
      forget = removeOnExit(tmp);
    } catch (e) {
      throw outputError(e, target, option);
    }
    const f = new TraceFile(target, tmp, fd, forget, inputs, option);
    const head = JSON.stringify({ host: stamp.host, time: stamp.time, toolVersion: stamp.toolVersion, displayTimeUnit: 'ns' });
    f.write(`${head.slice(0, -1)},"traceEvents":[`);
    return f;
  }

  /** Add one event. */
  add(e: TraceEvent): void {
    this.write(`${this.count === 0 ? '\n' : ',\n'}${JSON.stringify(e)}`);
    this.count++;
  }

  /** End the document with `header` (otherData), sync it and put it in place of the target. */
  async close(header: TraceHeader): Promise<void> {
    if (this.done) return;
    this.done = true;
    try {
      try {
        this.write(`\n],"otherData":${JSON.stringify(header)}}\n`);
        this.flush();
        fsyncSync(this.fd);
      } finally {
        closeSync(this.fd);
      }
      // Checked again just before the rename: a link or a directory put there meanwhile is not replaced.
      checkOutputTarget(this.target, this.option, this.inputs);
      await rename(this.tmp, this.target);
    } catch (e) {
      await rm(this.tmp, { force: true });
      this.forget();
      throw outputError(e, this.target, this.option);
    }
    this.forget();
  }

  /** Drop the temporary: the target stays as it was. */
  async abandon(): Promise<void> {
    if (this.done) return;
    this.done = true;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    await rm(this.tmp, { force: true });
    this.forget();
  }

  private write(text: string): void {
    this.chunks.push(text);
    this.pending += text.length;
    if (this.pending >= FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    if (this.chunks.length === 0) return;
    const buf = Buffer.from(this.chunks.join(''), 'utf8');
    this.chunks = [];
    this.pending = 0;
    try {
      for (let off = 0; off < buf.length; ) off += writeSync(this.fd, buf, off, buf.length - off);
    } catch (e) {
      throw outputError(e, this.target, this.option);
    }
  }
}

/** Write `events` as a whole document to `target` (a report, a race): the same checks and atomic rename. */
export async function writeTrace(
  target: string,
  events: Iterable<TraceEvent>,
  header: TraceHeader,
  stamp: TraceStamp,
  inputs: readonly string[] = [],
): Promise<number> {
  const f = TraceFile.open(target, stamp, inputs);
  try {
    for (const e of events) f.add(e);
    await f.close(header);
  } catch (e) {
    await f.abandon();
    throw e;
  }
  return f.count;
}
