// Writing a snapshot archive: a gzip-compressed tar streamed into a temporary file beside the
// target (a name starting with `.hfi1-sdma`), synced and renamed over the target only when every
// byte is written. Any failure, or the process ending, removes the temporary; the old target stays.
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, type Gzip } from 'node:zlib';
import { Header } from 'tar';
import { removeOnExit } from '../cleanup.js';
import { Hfi1SdmaError } from '../errors.js';
import { checkOutputTarget } from '../output-file.js';
import { limitText } from './format.js';

const BLOCK = 512;

/** An error creating or writing the output named by `option` (`-o`, `--trace`), with the code the user can act on. */
export function outputError(e: unknown, target: string, option = '-o'): Hfi1SdmaError {
  if (e instanceof Hfi1SdmaError) return e;
  const code = (e as NodeJS.ErrnoException).code ?? '';
  const dir = dirname(target);
  if (code === 'EACCES' || code === 'EPERM') {
    return new Hfi1SdmaError('E_PERMISSION', `${target}: cannot write in ${dir} (${code}): choose a directory you can write`, {
      cause: e,
    });
  }
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new Hfi1SdmaError(
      'E_CANT_CREATE',
      `${target}: ${dir} is not an existing directory: create it first, or choose another ${option}`,
      {
        cause: e,
      },
    );
  }
  if (code === 'EROFS') {
    return new Hfi1SdmaError('E_CANT_CREATE', `${target}: ${dir} is on a read-only file system: choose another ${option}`, {
      cause: e,
    });
  }
  return new Hfi1SdmaError(
    'E_IO',
    `${target}: writing failed (${code || String(e)}); nothing was replaced: free space (or raise the file-size limit) and run again`,
    { cause: e },
  );
}

/** The compressed archive outgrew the room it was given (SnapshotLimits.maxStoredBytes). */
class StoredLimit extends Error {}

/** A pass-through that fails once more than `max` bytes went through it. */
function storedLimit(max: number): Transform {
  let n = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      n += chunk.length;
      if (n > max) done(new StoredLimit(`more than ${max} bytes`));
      else done(null, chunk);
    },
  });
}

/** How an archive is written: how its target is named to the user, its mode, and how many instants it holds. */
export interface ArchiveOutput {
  /** The name the user knows the target by (the target itself may be reached through a directory's descriptor). */
  shownAs?: string;
  /** The archive's mode (0644 by default, less the umask; captures 0600). */
  mode?: number;
  /** Instants the capture takes (what a message about its size suggests). */
  samples?: number;
}

/** A .tar.gz being written to a temporary beside its target. */
export class ArchiveWriter {
  private readonly gzip: Gzip = createGzip({ level: 6 });
  private readonly finished: Promise<unknown>;
  private bytes = 0;
  private entries = 0;
  private done = false;

  /** How the target is named in messages. */
  private readonly shown: string;

  private constructor(
    readonly target: string,
    private readonly output: ArchiveOutput,
    private readonly tmp: string,
    private readonly fh: FileHandle,
    private readonly forget: () => void,
    private readonly limits: { maxBytes: number; maxEntries: number; maxStoredBytes?: number },
    private readonly inputs: readonly string[],
  ) {
    this.shown = output.shownAs ?? target;
    const file = fh.createWriteStream({ flush: true });
    const stored = limits.maxStoredBytes;
    this.finished = (stored === undefined ? pipeline(this.gzip, file) : pipeline(this.gzip, storedLimit(stored), file)).then(
      () => null,
      (e: unknown) => e,
    );
  }

  /** The error for a failed write: the stored limit said as such, anything else as output.ts says it. */
  private failure(e: unknown): Hfi1SdmaError {
    if (e instanceof StoredLimit) {
      return new Hfi1SdmaError(
        'E_CANT_CREATE',
        `${this.shown}: the archive would take more than the ${limitText(this.limits.maxStoredBytes ?? 0)} it may; nothing was written`,
      );
    }
    return outputError(e, this.shown);
  }

  /**
   * Create the temporary beside `target`; E_CANT_CREATE/E_PERMISSION when that is not possible, and
   * E_CANT_CREATE, the target untouched, when it is not a regular file or lies inside `inputs`.
   */
  static async create(
    target: string,
    limits: { maxBytes: number; maxEntries: number; maxStoredBytes?: number },
    inputs: readonly string[] = [],
    output: ArchiveOutput = {},
  ): Promise<ArchiveWriter> {
    const shown = output.shownAs ?? target;
    checkOutputTarget(target, '-o', inputs, shown);
    const tmp = join(
      dirname(target),
      `.hfi1-sdma.${basename(target)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`,
    );
    let fh: FileHandle;
    let forget: () => void;
    try {
      // Created and registered for removal in one turn of the event loop, so a signal cannot fall between
      // them (an awaited open would leave that window); then opened again for the writes.
      closeSync(openSync(tmp, 'wx', output.mode ?? 0o644));
      forget = removeOnExit(tmp);
    } catch (e) {
      throw outputError(e, shown);
    }
    try {
      fh = await open(tmp, 'r+');
    } catch (e) {
      await rm(tmp, { force: true });
      forget();
      throw outputError(e, shown);
    }
    return new ArchiveWriter(target, output, tmp, fh, forget, limits, inputs);
  }

  private async push(buf: Buffer): Promise<void> {
    const failed = await Promise.race([this.finished, Promise.resolve(null)]);
    if (failed) throw this.failure(failed);
    if (!this.gzip.write(buf)) {
      const r = await Promise.race([once(this.gzip, 'drain').then(() => null), this.finished]);
      if (r) throw this.failure(r);
    }
  }

  /** Add one regular file (sysroot-relative `path`) to the archive. */
  async addFile(path: string, data: Uint8Array, mtime: Date): Promise<void> {
    const header = new Header({ path, mode: 0o644, size: data.length, mtime, type: 'File', uid: 0, gid: 0 });
    const block = Buffer.alloc(BLOCK);
    if (header.encode(block, 0)) throw new Hfi1SdmaError('E_INTERNAL', `snapshot entry name too long for tar: ${path}`);
    const padding = (BLOCK - (data.length % BLOCK)) % BLOCK;
    this.bytes += BLOCK + data.length + padding;
    this.entries++;
    if (this.bytes > this.limits.maxBytes || this.entries > this.limits.maxEntries) {
      throw new Hfi1SdmaError(
        'E_CANT_CREATE',
        `${this.shown}: the capture would pass what a snapshot may hold (${this.limits.maxEntries} entries, ${limitText(this.limits.maxBytes)} unpacked); nothing was written: ${
          this.output.samples === 1
            ? 'one instant of this tree already holds more than any host shows (a directory such as parameters/ with thousands of files?): check the tree'
            : 'take fewer --samples'
        }`,
      );
    }
    await this.push(block);
    await this.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    if (padding > 0) await this.push(Buffer.alloc(padding));
  }

  /** End the archive, sync it and rename it over the target. */
  async commit(): Promise<void> {
    await this.push(Buffer.alloc(BLOCK * 2));
    this.gzip.end();
    const failed = await this.finished;
    if (failed) throw this.failure(failed);
    this.done = true; // the stream synced (flush) and closed the file
    checkOutputTarget(this.target, '-o', this.inputs, this.shown);
    try {
      await rename(this.tmp, this.target);
    } catch (e) {
      throw outputError(e, this.shown);
    }
    this.forget();
  }

  /** Give up: close and remove the temporary (safe after commit, and twice). */
  async abort(): Promise<void> {
    if (!this.done) {
      this.done = true;
      this.gzip.destroy();
      await this.finished;
      await this.fh.close().catch(() => {});
    }
    await rm(this.tmp, { force: true });
    this.forget();
  }
}
