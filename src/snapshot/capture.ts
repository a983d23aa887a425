// Capturing the files hfi1-sdma reads into a .tar.gz for a bug report, at one or more instants.
// Capture only reads the host (the BAR through the read-only window); sources must be regular
// files (checked before they are opened, so a FIFO or a device node in their place is never
// opened) and are read up to a size cap; under a sysroot other than `/` every path must resolve
// inside it (a link out of the tree is recorded as not captured, with the link named). The archive is streamed to a
// temporary beside the target and renamed only when complete (see output.ts).
import { readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Clock } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import { type Containment, containmentOf, holdContainment, OutsideTreeError } from '../hw/contain.js';
import { discoverUnits, type FoundUnit } from '../hw/discover.js';
import { hwFsFor } from '../hw/fsio.js';
import { driverFileNames, PMA_PORT_COUNTERS } from '../hw/parse/port-counters.js';
import { readRegularFile, SourceFileError } from '../hw/read-file.js';
import { openRegisterWindow } from '../hw/regs.js';
import { isEngineHwCounter } from '../hw/unit-reads.js';
import { ContextBudget, everyContextFiles, onceContextFiles } from './context.js';
import {
  barBlockOf,
  DEFAULT_LIMITS,
  FORMAT_V2,
  type Instant,
  instantDir,
  KMSG_ENTRY,
  MANIFEST,
  MAX_SOURCE_BYTES,
  type ManifestV2,
  type SnapshotLimits,
  type SourceRecord,
  UPTIME_FILE,
} from './format.js';
import { readKmsgHfi1 } from './kmsg.js';
import { linkEvidence, RECORDED_LINKS } from './links.js';
import { type ArchiveOutput, ArchiveWriter } from './output.js';
import { OwnerRecorder, RECORDED_OWNERS } from './owners.js';
import { RedactingArchive, type Redactor } from './redact.js';

/** How many instants to record and how they are paced. */
export interface CaptureOptions {
  samples: number;
  intervalMs: number;
  /** Capture times come from here (real time on a host, virtual time for the emulator). */
  clock: Clock;
  /** Waits between instants; the emulator's lets virtual time pass and rewrites its tree. */
  sleep: (ms: number) => Promise<void>;
  /** How the archive is written (its name to the user, its mode). */
  output?: Pick<ArchiveOutput, 'shownAs' | 'mode'>;
  limits?: SnapshotLimits;
  /** The cap on the context files (identity, link, parameters, qp_stats); CONTEXT_CAP_BYTES by default. */
  contextCapBytes?: number;
  /** Mask host names, users, processes, addresses and serials with this site's map (`snapshot --redact`). */
  redact?: Redactor;
}

/** Where a capture's entries go: the archive, or the archive through its redaction. */
type EntrySink = Pick<ArchiveWriter, 'addFile' | 'commit' | 'abort'>;

/** Read one source: a regular file, at most MAX_SOURCE_BYTES, inside the sysroot (`within`); otherwise why not. */
export function readSourceFile(path: string, within: Containment | null = null): { data: Buffer } | { reason: string } {
  try {
    // Checked before it is opened: a FIFO or a device node in its place is never opened.
    return { data: readRegularFile(path, MAX_SOURCE_BYTES, within) };
  } catch (e) {
    if (e instanceof SourceFileError) {
      return { reason: e.code === 'ENOTREG' ? 'not a regular file' : `larger than ${MAX_SOURCE_BYTES} bytes` };
    }
    if (e instanceof OutsideTreeError) return { reason: e.detail };
    return { reason: (e as NodeJS.ErrnoException).code ?? String(e) };
  }
}

/**
 * The regular files directly in `dir` (inside the sysroot), sorted; none when it cannot be listed,
 * and `dir` itself when it leads out of the tree (so that the capture records it as refused, and why).
 */
function filesUnder(dir: string, within: Containment | null): string[] {
  let names: string[];
  try {
    names = (within ? within.readdir(dir) : readdirSync(dir)).sort();
  } catch (e) {
    return e instanceof OutsideTreeError ? [dir] : [];
  }
  return names.map((n) => join(dir, n)).filter((p) => isRegular(p, within));
}

/** True when `path` names a regular file (inside the sysroot). */
function isRegular(path: string, within: Containment | null): boolean {
  try {
    return (within ? within.stat(path) : statSync(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * The SDMA CSR block of a unit's BAR0 (the chip's, barBlockOf), read through the read-only window:
 * under a sysroot the image is read with pread (never mapped: a file that shrinks gives a short
 * read, not SIGBUS), inside the tree.
 */
function readBarBlock(resource0: string, at: { offset: number; length: number }, sysroot: string): Buffer {
  const win = openRegisterWindow(resource0, { start: at.offset, length: at.length }, sysroot);
  const block = new BigUint64Array(at.length / 8);
  try {
    win.check();
    for (let i = 0; i < block.length; i++) block[i] = win.read64(at.offset + i * 8);
  } finally {
    win.close();
  }
  return Buffer.from(block.buffer);
}

/**
 * Files captured once: they do not change while the driver is loaded. With them a replay decides the same
 * flavour (flavour.ts): the PCI id, the module's parameters, hfi2's hw_resources.
 */
function onceFiles(units: FoundUnit[], within: Containment | null): string[] {
  const out = units.flatMap((u) => ['vendor', 'device'].map((f) => join(u.paths.pciDir, f)));
  for (const params of new Set(units.map((u) => u.paths.params))) out.push(...filesUnder(params, within));
  out.push(...units.map((u) => u.paths.hwResources).filter((f) => isRegular(f, within)));
  return out;
}

/** Files captured at every instant. */
function everyFiles(u: FoundUnit, within: Containment | null): string[] {
  const p = u.paths;
  const out: string[] = [];
  for (const e of u.engineDirIds) out.push(join(p.classDir, `sdma${e}`, 'vl'), join(p.classDir, `sdma${e}`, 'cpu_list'));
  // Of the device's hw_counters (every device counter of the driver, 471 files on hfi1), the engines' ones the reader uses.
  out.push(...filesUnder(p.hwCounters, within).filter((f) => isEngineHwCounter(basename(f))));
  out.push(p.sdes, p.counterNames, p.counters, p.sdmaCpuList);
  // The port counters (one port<n>counters per port) beside their names.
  const portCounters = filesUnder(p.debugDir, within).filter((f) => /\/(?:port[1-9]counters|portcounter_names)$/.test(f));
  out.push(...portCounters);
  out.push(...portCounterFiles(u, within));
  return out;
}

/** Each port's sysfs counters the port counters reader uses (hw_counters, PortCounters), where they exist. */
function portCounterFiles(u: FoundUnit, within: Containment | null): string[] {
  const driver = new Set(driverFileNames());
  const pma = new Set(Object.values(PMA_PORT_COUNTERS).map((c) => c?.file));
  const ports = u.flavourInputs.ports.filter((n) => /^[1-9][0-9]?$/.test(n));
  return ports.flatMap((n) => {
    const dir = join(u.paths.classDir, 'ports', n);
    return [
      ...filesUnder(join(dir, 'hw_counters'), within).filter((f) => driver.has(basename(f))),
      ...filesUnder(join(dir, 'counters'), within).filter((f) => pma.has(basename(f))),
    ];
  });
}

/**
 * The kernel log's hfi1 lines, stored as KMSG_ENTRY with the first instant; read once the last instant is
 * captured, so the lines logged during the capture are in it. Never fails.
 */
async function addKernelLog(out: EntrySink, sysroot: string, budget: ContextBudget, mtime: Date): Promise<SourceRecord> {
  const log = readKmsgHfi1(sysroot);
  if ('reason' in log) return { path: KMSG_ENTRY, captured: false, reason: log.reason };
  const data = Buffer.from(log.text);
  const over = budget.take(data.length);
  if (over !== null) return { path: KMSG_ENTRY, captured: false, reason: over };
  await out.addFile(`${instantDir(0)}/${KMSG_ENTRY}`, data, mtime);
  const rec: SourceRecord = { path: KMSG_ENTRY, captured: true };
  if (log.note !== null) rec.note = log.note;
  return rec;
}

/** Capture the sources into `outFile` (.tar.gz) at `samples` instants. Returns the manifest. */
export async function captureSnapshot(
  sysroot: string,
  outFile: string,
  meta: { host: string; toolVersion: string; now: Date; emulated?: boolean },
  opts: CaptureOptions,
): Promise<ManifestV2> {
  // The tree's directory is held for the whole capture: every instant reads the tree opened now.
  const release = holdContainment(sysroot);
  try {
    return await captureHeld(sysroot, outFile, meta, opts);
  } finally {
    release();
  }
}

async function captureHeld(
  sysroot: string,
  outFile: string,
  meta: { host: string; toolVersion: string; now: Date; emulated?: boolean },
  opts: CaptureOptions,
): Promise<ManifestV2> {
  const units = await discoverUnits(sysroot);
  if (units.length === 0) {
    throw new Hfi1SdmaError(
      'E_NO_DEVICE',
      `no hfi1 or hfi2 unit under ${join(sysroot, 'sys/class/infiniband')}: nothing to capture; run 'hfi1-sdma doctor' (--backend emu captures the emulator's host instead)`,
    );
  }
  const m: ManifestV2 = {
    format: FORMAT_V2,
    time: meta.now.toISOString(),
    host: meta.host,
    toolVersion: meta.toolVersion,
    sysroot,
    intervalMs: opts.intervalMs,
    units: units.map((u) => (u.chip === 'jkr' ? { name: u.name, pci: u.pci, chip: 'jkr' } : { name: u.name, pci: u.pci })),
    once: [],
    instants: [],
    ...(meta.emulated ? { emulated: true } : {}),
  };
  const rel = (p: string) => relative(sysroot, p);
  const within = containmentOf(sysroot);
  const budget = new ContextBudget(opts.contextCapBytes);
  const fs = hwFsFor(sysroot);
  const owners = new OwnerRecorder(fs, opts.clock);
  // Never inside the tree being captured: the archive would hold its own temporary.
  const archive = await ArchiveWriter.create(outFile, opts.limits ?? DEFAULT_LIMITS, [sysroot], {
    ...opts.output,
    samples: opts.samples,
  });
  opts.redact?.host(meta.host);
  const out: EntrySink = opts.redact ? new RedactingArchive(archive, opts.redact) : archive;
  try {
    const t0 = opts.clock.nowMs();
    for (let k = 0; k < opts.samples; k++) {
      if (k > 0) {
        const waitMs = t0 + k * opts.intervalMs - opts.clock.nowMs();
        if (waitMs > 0) await opts.sleep(waitMs);
      }
      const timeMs = k === 0 ? 0 : Math.max(0, opts.clock.nowMs() - t0);
      const mtime = new Date(meta.now.getTime() + timeMs);
      const instant: Instant = { timeMs, time: mtime.toISOString(), sources: [], barBlocks: [] };
      const add = async (path: string, sources: SourceRecord[], context = false) => {
        const r = readSourceFile(path, within);
        if ('reason' in r) {
          sources.push({ path: rel(path), captured: false, reason: r.reason });
          return;
        }
        const over = context ? budget.take(r.data.length) : null;
        if (over !== null) {
          sources.push({ path: rel(path), captured: false, reason: over });
          return;
        }
        await out.addFile(`${instantDir(k)}/${rel(path)}`, r.data, mtime);
        sources.push({ path: rel(path), captured: true });
      };
      if (k === 0) {
        for (const f of onceFiles(units, within)) await add(f, instant.sources, f.includes('/parameters/'));
        for (const f of onceContextFiles(sysroot, units)) await add(f, instant.sources, true);
        m.once = instant.sources.filter((s) => s.captured).map((s) => s.path);
      }
      for (const u of units) {
        for (const f of everyFiles(u, within)) await add(f, instant.sources);
        for (const f of everyContextFiles(u)) await add(f, instant.sources, true);
        const block = barBlockOf(u.chip === 'jkr' ? { name: u.name, pci: u.pci, chip: 'jkr' } : { name: u.name, pci: u.pci });
        let data: Buffer | null = null;
        try {
          data = readBarBlock(u.paths.resource0, block, sysroot);
        } catch (e) {
          const message = (e as Error).message;
          const own = `${u.paths.resource0}: `;
          const reason = message.startsWith(own) ? message.slice(own.length) : message;
          instant.sources.push({ path: block.resource0, captured: false, reason });
        }
        if (data) {
          await out.addFile(`${instantDir(k)}/${block.file}`, data, mtime);
          instant.barBlocks.push(block);
          instant.sources.push({ path: block.resource0, captured: true });
        }
      }
      await add(join(sysroot, 'proc/interrupts'), instant.sources);
      // The kernel's clock at this instant: it places the log's timestamps (seconds since boot) on the capture's time axis.
      await add(join(sysroot, UPTIME_FILE), instant.sources, true);
      // The PSM writers' /proc/<pid> and the unit's IPoIB netdevs: their files, and their links as a record.
      const ev = await linkEvidence(sysroot, units, fs);
      for (const f of ev.files) await add(f, instant.sources, true);
      if (ev.record.listed.length > 0 || Object.keys(ev.record.links).length > 0) {
        await out.addFile(`${instantDir(k)}/${RECORDED_LINKS}`, Buffer.from(`${JSON.stringify(ev.record)}\n`), mtime);
        instant.sources.push({ path: RECORDED_LINKS, captured: true, ...(ev.note ? { note: ev.note } : {}) });
      }
      const owned = await owners.record(units);
      if (owned) {
        await out.addFile(`${instantDir(k)}/${RECORDED_OWNERS}`, owned, mtime);
        instant.sources.push({ path: RECORDED_OWNERS, captured: true });
      }
      m.instants.push(instant);
    }
    const first = m.instants[0];
    if (first) first.sources.push(await addKernelLog(out, sysroot, budget, new Date(first.time)));
    await out.addFile(MANIFEST, Buffer.from(`${JSON.stringify(m, null, 2)}\n`), meta.now);
    await out.commit();
    return m;
  } finally {
    await out.abort();
  }
}
