// Capturing a snapshot from code, as `hfi1-sdma snapshot` does: the files the readers read (sysfs, debugfs, procfs,
// the SDMA block of the BAR) at one or more instants, into a .tar.gz that openBackend({ sysroot }) and every command
// read back as they read a host. Capture only reads: nothing is written to a device, sysfs or debugfs.
import type { Backend } from '../backend.js';
import { usageError } from '../errors.js';
import { checkNumber, checkOptions, checkSignal, checkText, shown } from './check.js';
import { inLibraryTerms } from './library-terms.js';
import { recordOf } from './opened.js';

/** Where and how to capture. */
export interface CaptureSnapshotOptions {
  /** The archive: a `.tar.gz` (or `.tgz`) file, written to a temporary beside it and renamed only when complete. */
  output: string;
  /** Instants to record (1-100, default 1): replayed in their own time, so stalls and strands are judged. */
  samples?: number;
  /** Between instants (10-600000 ms, default 1000): wall time on a host, virtual time on the emulator. */
  intervalMs?: number;
  /** Stops the capture between instants; nothing is written. */
  signal?: AbortSignal;
}

/** What a capture holds. */
export interface SnapshotSummary {
  /** The archive written. */
  readonly file: string;
  /** The units captured, by name. */
  readonly units: readonly string[];
  /** The instants' times, ms from the first. */
  readonly timesMs: readonly number[];
  /** Files captured, over every instant. */
  readonly captured: number;
  /** The files that could not be captured, and why (each once). */
  readonly notCaptured: readonly { readonly path: string; readonly reason: string }[];
  /** Captured from the emulator (or an emulated sysroot): not an adapter. */
  readonly emulated: boolean;
}

/**
 * Capture what `backend` reads into `o.output`: a host (or a sysroot directory) that openBackend opened, or an
 * emulator from createEmuBackend, whose virtual time then runs on between instants. A snapshot cannot be captured
 * again (E_USAGE), nor a backend this library did not open; no unit is E_NO_DEVICE.
 */
export async function captureSnapshot(backend: Backend, options: CaptureSnapshotOptions): Promise<SnapshotSummary> {
  const where = 'captureSnapshot';
  const o = checkOptions(where, options, ['output', 'samples', 'intervalMs', 'signal']);
  const [{ MAX_SAMPLES, MIN_INTERVAL_MS, MAX_INTERVAL_MS }, { checkOutputTarget }, { version }, { hostname }] = await Promise.all(
    [import('../snapshot/format.js'), import('../output-file.js'), import('../version.js'), import('node:os')],
  );
  const output = checkText(where, 'output', o.output, 'the archive to write (FILE.tar.gz)');
  if (!/\.(tar\.gz|tgz)$/.test(output))
    throw usageError(`${where}: output must name a .tar.gz (or .tgz) file; got ${shown(output)}`);
  const samples =
    o.samples === undefined
      ? 1
      : checkNumber(where, 'samples', o.samples, { min: 1, max: MAX_SAMPLES, integer: true, what: 'a count of instants' });
  const intervalMs =
    o.intervalMs === undefined
      ? 1000
      : checkNumber(where, 'intervalMs', o.intervalMs, { min: MIN_INTERVAL_MS, max: MAX_INTERVAL_MS, what: 'a time in ms' });
  const signal = checkSignal(where, o.signal);
  signal?.throwIfAborted();
  const record = recordOf(backend);
  if (!record)
    throw usageError(`${where}: backend must come from openBackend or createEmuBackend (this library reads its files)`);
  if (backend.recording) throw usageError(`${where}: the backend plays back a snapshot already (${backend.recording.source})`);
  const meta = { host: hostname(), toolVersion: version(), now: new Date() };
  const stopped = async () => signal?.throwIfAborted();
  let m: Awaited<ReturnType<typeof import('../snapshot/capture.js').captureSnapshot>>;
  if (record.kind === 'emu') {
    checkOutputTarget(output, 'output');
    await record.ready();
    const { captureEmulatedUnit } = await import('../snapshot/capture-emu.js');
    m = await inLibraryTerms(where, () => captureEmulatedUnit(record.unit, output, meta, { samples, intervalMs }, stopped));
  } else {
    checkOutputTarget(output, 'output', [record.sysroot]);
    const [{ captureSnapshot: capture }, { isEmulatedSysroot }] = await Promise.all([
      import('../snapshot/capture.js'),
      import('../hw/paths.js'),
    ]);
    m = await inLibraryTerms(where, () =>
      capture(
        record.sysroot,
        output,
        { ...meta, emulated: isEmulatedSysroot(record.sysroot) },
        { samples, intervalMs, clock: { nowMs: () => Date.now() }, sleep: (ms) => sleep(ms, signal) },
      ),
    );
  }
  const all = m.instants.flatMap((i) => i.sources);
  const missing = new Map<string, string>();
  for (const s of all) if (!s.captured) missing.set(s.path, s.reason ?? 'unknown');
  return {
    file: output,
    units: m.units.map((u) => u.name),
    timesMs: m.instants.map((i) => i.timeMs),
    captured: all.filter((s) => s.captured).length,
    notCaptured: [...missing].map(([path, reason]) => ({ path, reason })),
    emulated: m.emulated === true,
  };
}

/** Wait `ms` of wall time; a signal ends the wait by rejecting with its reason. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}
