// node_exporter's textfile collector: the exporter's metrics written once to a file, atomically. The
// text goes to a temporary in the same directory whose name starts with '.' (the collector reads
// only *.prom), is flushed to disk, then renamed over the target; on any failure the temporary is
// removed and the previous file is left as it was.
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { removeOnExit } from '../cleanup.js';
import { Hfi1SdmaError } from '../errors.js';
import type { MonitorTracks } from '../monitor/monitor.js';
import { nextInstant, type Sleep } from '../monitor/pace.js';
import { checkOutputTarget } from '../output-file.js';
import { DEFAULT_STRAND_MS } from '../progress/strand.js';
import { type ExporterOptions, Sampler } from './server.js';

/** An open file, as much of it as the atomic write uses. */
export interface WritableFile {
  writeFile(text: string): Promise<void>;
  chmod(mode: number): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** The file-system calls of the atomic write (Node's by default; tests hand in failing ones). */
export interface AtomicFs {
  /** Create `path` exclusively (O_CREAT | O_EXCL), write-only. */
  create(path: string): Promise<WritableFile>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** fsync the directory so that the rename itself is durable; failures are ignored. */
  syncDir(dir: string): Promise<void>;
}

export const nodeAtomicFs: AtomicFs = {
  create: async (path) => open(path, 'wx', 0o644),
  rename,
  unlink,
  syncDir: async (dir) => {
    const h = await open(dir, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  },
};

/** Mode of the written file: node_exporter usually runs as another user and must read it. */
export const TEXTFILE_MODE = 0o644;

/** The error for a failed step of writing `target`, by errno: 77 permission, 73 cannot create, 74 I/O. */
export function textfileError(target: string, step: 'create' | 'write' | 'rename', e: unknown): Hfi1SdmaError {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  const dir = dirname(target);
  const detail = (e as Error).message;
  if (code === 'EACCES' || code === 'EPERM') {
    return new Hfi1SdmaError(
      'E_PERMISSION',
      `--textfile ${target}: permission denied writing in ${dir}; run as a user who may write there (${detail})`,
      { cause: e },
    );
  }
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EIO' || step === 'write') {
    return new Hfi1SdmaError(
      'E_IO',
      `--textfile ${target}: ${step} failed part-way (${code || detail}); the previous file is kept, free space or fix the disk and retry`,
      { cause: e },
    );
  }
  return new Hfi1SdmaError(
    'E_CANT_CREATE',
    `--textfile ${target}: cannot ${step === 'rename' ? 'replace the file' : 'create a file'} in ${dir} (${code || detail}); the directory must exist and be writable`,
    { cause: e },
  );
}

/**
 * Replace `target` with `text` atomically: a dot-named temporary beside it, fsync, rename. Only a
 * regular file (or a new name) outside `inputs` is replaced; anything else is refused, untouched
 * (checkOutputTarget), before the temporary is made and again before the rename.
 */
export async function writeFileAtomic(
  target: string,
  text: string,
  fs: AtomicFs = nodeAtomicFs,
  inputs: readonly string[] = [],
): Promise<void> {
  checkOutputTarget(target, '--textfile', inputs);
  const dir = dirname(target);
  const temporary = join(dir, `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let file: WritableFile;
  // Registered before it exists (removing a name not yet created is harmless), so a signal during the
  // creation leaves nothing behind.
  const forget = removeOnExit(temporary);
  try {
    file = await fs.create(temporary);
  } catch (e) {
    forget();
    throw textfileError(target, 'create', e);
  }
  let step: 'write' | 'rename' = 'write';
  try {
    try {
      await file.writeFile(text);
      await file.chmod(TEXTFILE_MODE);
      await file.sync();
    } finally {
      await file.close();
    }
    step = 'rename';
    checkOutputTarget(target, '--textfile', inputs);
    await fs.rename(temporary, target);
  } catch (e) {
    await fs.unlink(temporary).catch(() => undefined);
    forget();
    throw e instanceof Hfi1SdmaError ? e : textfileError(target, step, e);
  }
  forget();
  await fs.syncDir(dir).catch(() => undefined);
}

/**
 * Series the exporter keeps itself across its rounds (not the kernel's): in a run that carries no state they
 * would start from 0 every time, whatever happened, so they are not written then.
 */
const OWN_SERIES = new Set(['hfi1_sdma_stalls_total', 'hfi1_sdma_longest_stall_seconds', 'hfi1_sdma_psm_stalls_total']);

/**
 * Drop the exporter's own series (stall counts, the longest stall, PSM stall episodes) from
 * Prometheus text. The counters that carry the kernel's cumulative values are kept.
 */
export function withoutCounters(text: string): string {
  const family = (line: string) => (line.startsWith('# ') ? line.split(' ')[2] : /^[^{\s]+/.exec(line)?.[0]) ?? '';
  return text
    .split('\n')
    .filter((line) => !OWN_SERIES.has(family(line)))
    .join('\n');
}

/** Samples a textfile run takes live: enough for the stranded rule (3 samples spanning --strand-ms). */
export const TEXTFILE_SAMPLES = 3;

/** How the textfile run paces its samples and carries its tracks. */
export interface TextfileRun {
  /** Wall-clock sleep between samples (a fake in tests). */
  sleep: Sleep;
  /** Tracks carried from the previous run (a state file), and whether they were: then the own series are written. */
  tracks?: MonitorTracks;
  /** Called with the monitor after the last sample (the caller saves its state). */
  done?: (sampler: Sampler) => Promise<void>;
}

/**
 * Sample every unit (every instant of a recording; live, 3 samples spanning --strand-ms, so a stranded waiter
 * and, with the tracks of the previous run, a stall are judged) and write the metrics to `target`, which may not
 * lie inside `inputs` (the sysroot read).
 */
export async function writeMetricsTextfile(
  o: ExporterOptions,
  target: string,
  run: TextfileRun,
  fs: AtomicFs = nodeAtomicFs,
  inputs: readonly string[] = [],
): Promise<void> {
  const backend = o.backend;
  const recording = backend.recording;
  // Every round is a fresh sample: the run paces itself.
  const sampler = new Sampler({ ...o, minIntervalMs: 0, sleep: run.sleep, ...(run.tracks ? { tracks: run.tracks } : {}) });
  await sampler.refresh();
  const stepMs = Math.max(1, Math.ceil((o.strandMs ?? DEFAULT_STRAND_MS) / (TEXTFILE_SAMPLES - 1)));
  for (let i = 1; recording || i < TEXTFILE_SAMPLES; i++) {
    if (!(await nextInstant(backend, stepMs, run.sleep))) break;
    await sampler.refresh();
  }
  await run.done?.(sampler);
  const text = await sampler.metrics.text.metrics();
  await writeFileAtomic(target, run.tracks ? text : withoutCounters(text), fs, inputs);
}
