// A snapshot played back as a backend: the live-host reader over each recorded instant's tree, with
// the instant's capture time as its clock, and a Recording to step through the instants. Paths of
// the temporary tree never reach the user: errors, sources and warnings name `archive:entry`.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend, BackendOrigin, Recording, SourceWarning, Unit, UnitInfo } from '../backend.js';
import { Hfi1SdmaError, isHfi1SdmaError } from '../errors.js';
import { hwFsFor } from '../hw/fsio.js';
import { escapeControls } from '../hw/parse/text.js';
import { formatBytes } from '../hw/read-file.js';
import { carrySince, type Waiter } from '../progress/waiters.js';
import { KMSG_ENTRY, KMSG_READ_CAP_BYTES, parseUptime, type SnapshotManifest, UPTIME_FILE } from './format.js';

export { KMSG_READ_CAP_BYTES, parseUptime };

import { LINKS_CAP_BYTES, parseLinksRecord, RECORDED_LINKS, recordedLinksFs } from './links.js';
import { opacaptureWarning, openOpacapture } from './opacapture.js';
import { isOpacaptureArchive } from './opacapture-probe.js';
import { type OpenedSnapshot, type OpenOptions, openSnapshot } from './open.js';

/** What a snapshot holds beside the files the live reader reads: the kernel log's lines, each instant's uptime. */
export interface SnapshotExtras {
  /** The kernel log's hfi1 lines (dmesg form) captured with the snapshot, or why there are none. */
  kernelLog(): { text: string } | { reason: string };
  /** The kernel's uptime (s) at instant `k`, or null where the snapshot did not capture it. */
  uptimeSec(k: number): number | null;
  /** The snapshot's manifest, as checked (its format, whether it was redacted). */
  manifest(): SnapshotManifest;
}

const extrasOf = new WeakMap<Backend, SnapshotExtras>();

/** The extras of a backend that plays a snapshot back, or null for any other backend. */
export function snapshotExtras(backend: Backend): SnapshotExtras | null {
  return extrasOf.get(backend) ?? null;
}

/** A regular file of the unpacked tree, at most `capBytes`; null when it is not there, else why it is not read. */
function treeFile(path: string, capBytes: number): Buffer | null | { reason: string } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    if (st.size > capBytes) return { reason: `holds ${formatBytes(st.size)}, more than the ${formatBytes(capBytes)} read` };
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function extrasFor(snap: OpenedSnapshot): SnapshotExtras {
  const plan = snap.plan;
  const captured = (k: number, rel: string) => plan.instants[k]?.sources.some((s) => s.path === rel && s.captured) === true;
  const at = (k: number, rel: string) => join(snap.instants[k]?.sysroot ?? snap.tree, rel);
  return {
    kernelLog() {
      const where = `${snap.archive}:${plan.instants[0]?.dir ? `${plan.instants[0].dir}/` : ''}${KMSG_ENTRY}`;
      const rec = plan.instants[0]?.sources.find((s) => s.path === KMSG_ENTRY);
      if (!rec) return { reason: 'this snapshot holds no kernel log (an older hfi1-sdma captured it)' };
      if (!rec.captured) return { reason: `the kernel log was not captured: ${rec.reason ?? 'unknown'}` };
      const data = treeFile(at(0, KMSG_ENTRY), KMSG_READ_CAP_BYTES);
      if (data === null) return { reason: `${where}: listed in snapshot.json but not in the archive` };
      if (!Buffer.isBuffer(data)) return { reason: `${where}: ${data.reason}` };
      return { text: data.toString('utf8') };
    },
    uptimeSec(k) {
      if (!captured(k, UPTIME_FILE)) return null;
      const data = treeFile(at(k, UPTIME_FILE), 4096);
      return Buffer.isBuffer(data) ? parseUptime(data.toString('latin1')) : null;
    },
    manifest: () => plan.manifest,
  };
}

/** Rename paths under `tree` to `archive:entry` in a text. */
function renamer(tree: string, archive: string): (text: string) => string {
  return (text) => text.replaceAll(`${tree}/`, `${archive}:`).replaceAll(tree, archive);
}

/** Rewrite an error's message (and a ParseError's file) so that it names the archive, not the temporary tree. */
function mapError(e: unknown, rename: (t: string) => string): unknown {
  if (!isHfi1SdmaError(e)) return e;
  e.message = rename(e.message);
  const file = (e as { file?: unknown }).file;
  if (typeof file === 'string') Object.defineProperty(e, 'file', { value: rename(file) });
  return e;
}

async function mapped<T>(p: () => Promise<T>, rename: (t: string) => string): Promise<T> {
  try {
    return await p();
  } catch (e) {
    throw mapError(e, rename);
  }
}

function mapInfo(info: UnitInfo, rename: (t: string) => string, emulated: boolean): UnitInfo {
  return {
    ...info,
    emulated,
    sources: info.sources.map((s) => ({
      ...s,
      ...(s.path === undefined ? {} : { path: rename(s.path) }),
      ...(s.reason === undefined ? {} : { reason: rename(s.reason) }),
    })),
    ...(info.settings ? { settings: { ...info.settings, evidence: info.settings.evidence.map(rename) } } : {}),
  };
}

/** Open a snapshot (or an opacapture tarball) as a backend whose `recording` steps through its instants. */
export async function openSnapshotBackend(file: string, opts: OpenOptions = {}): Promise<Backend> {
  if (await isOpacaptureArchive(file)) return openOpacaptureBackend(file, { tar: file }, opts);
  return backendOf(await openSnapshot(file, opts), file, []);
}

/** Open an opacapture (a tarball, or the directory an opacaptureall upload unpacked) as a snapshot of one instant. */
export async function openOpacaptureBackend(
  source: string,
  from: { tar: string } | { dir: string },
  opts: OpenOptions = {},
): Promise<Backend> {
  return backendOf(await openOpacapture(source, from, opts.tmpDir), source, [opacaptureWarning(source)]);
}

/** The backend over an opened snapshot; `warnings` are said for every unit (what the capture lacks). */
async function backendOf(snap: OpenedSnapshot, file: string, warnings: SourceWarning[]): Promise<Backend> {
  const rename = renamer(snap.tree, snap.archive);
  const { openHwBackend } = await import('../hw/index.js');
  const timesMs = snap.instants.map((i) => i.timeMs);
  const origin = originOf(snap);
  // Sample times are the recorded ones (epoch ms) where the manifest says when it started; else ms from the first.
  const t0 = origin.capturedAtMs ?? 0;
  let position = 0;
  let current: Backend;
  const openInstant = (k: number) => {
    const inst = snap.instants[k] as { sysroot: string; timeMs: number };
    // The links the capture read (a writer's fds, a netdev's device) are answered from its record.
    const data = treeFile(join(inst.sysroot, RECORDED_LINKS), LINKS_CAP_BYTES);
    const record = Buffer.isBuffer(data) ? parseLinksRecord(data.toString('utf8')) : null;
    const fs = record ? recordedLinksFs(hwFsFor(inst.sysroot), inst.sysroot, record) : undefined;
    const clock = { nowMs: () => t0 + inst.timeMs };
    return mapped(() => openHwBackend({ sysroot: inst.sysroot, clock, ...(fs ? { fs } : {}) }), rename);
  };
  try {
    current = await openInstant(0);
  } catch (e) {
    await snap.close();
    throw e;
  }
  // Keyed by unit name: numbers repeat across modules (hfi1_0 and hfi2_0).
  const proxies = new Map<string, Unit>();
  const infos = new Map<string, UnitInfo>();
  const inner = new Map<string, Unit>();
  const seen = new Map<string, Map<string, SourceWarning>>();
  // Each instant is a fresh reader: a waiter seen at an earlier instant keeps the time it was first seen.
  const lastWaiters = new Map<string, Waiter[]>();
  const refreshUnits = async () => {
    inner.clear();
    for (const info of await current.units()) {
      infos.set(info.name, mapInfo(info, rename, origin.emulated));
      inner.set(info.name, await current.unit(info.name));
    }
  };
  try {
    await mapped(refreshUnits, rename);
  } catch (e) {
    await current.close();
    await snap.close();
    throw e;
  }

  const collect = (n: string): SourceWarning[] => {
    // Each instant is read afresh: keep every distinct warning seen so far in the recording.
    const all = seen.get(n) ?? new Map<string, SourceWarning>(warnings.map((w) => [w.key, w]));
    seen.set(n, all);
    for (const w of inner.get(n)?.warnings?.() ?? []) {
      if (!all.has(w.key)) all.set(w.key, { ...w, path: rename(w.path), message: rename(w.message) });
    }
    return [...all.values()];
  };

  const proxy = (n: string): Unit => ({
    get info(): UnitInfo {
      return infos.get(n) as UnitInfo;
    },
    sample: (engines) => mapped(async () => (await current.unit(n)).sample(engines), rename),
    ring: (engine) => mapped(async () => (await current.unit(n)).ring(engine), rename),
    link: () => mapped(async () => (await (await current.unit(n)).link?.()) ?? null, rename),
    links: () => mapped(async () => (await (await current.unit(n)).links?.()) ?? [], rename),
    waiters: () =>
      mapped(async () => {
        const u = await current.unit(n);
        if (!u.waiters) throw new Hfi1SdmaError('E_UNAVAILABLE', `${file}: this snapshot's reader lists no waiters`);
        const w = await u.waiters();
        const waiters = carrySince(lastWaiters.get(n) ?? [], w.waiters);
        lastWaiters.set(n, waiters);
        return {
          ...w,
          waiters,
          visibility: w.visibility.map((v) => ({ ...v, ...(v.reason ? { reason: rename(v.reason) } : {}) })),
        };
      }, rename),
    portCounters: () =>
      mapped(async () => {
        const u = await current.unit(n);
        return u.portCounters ? u.portCounters() : [];
      }, rename),
    qpOwners: (qps) =>
      mapped(async () => {
        const u = await current.unit(n);
        return u.qpOwners ? u.qpOwners(qps) : [];
      }, rename),
    warnings: () => collect(n),
  });

  const recording: Recording = {
    source: file,
    timesMs,
    position: () => position,
    async advance() {
      if (position + 1 >= timesMs.length) return false;
      const next = await openInstant(position + 1);
      for (const n of inner.keys()) collect(n);
      await current.close();
      current = next;
      position++;
      await mapped(refreshUnits, rename);
      return true;
    },
  };

  let closed = false;
  const backend: Backend = {
    kind: 'hw',
    recording,
    origin,
    emulated: origin.emulated,
    units: async () => (await current.units()).map((i) => mapInfo(i, rename, origin.emulated)),
    async unit(id) {
      if (closed) throw new Hfi1SdmaError('E_INTERNAL', 'the backend is closed');
      const name = (await mapped(() => current.unit(id), rename)).info.name;
      let u = proxies.get(name);
      if (!u) {
        u = proxy(name);
        proxies.set(name, u);
      }
      return u;
    },
    async close() {
      if (closed) return;
      closed = true;
      await current.close();
      await snap.close();
    },
  };
  extrasOf.set(backend, extrasFor(snap));
  return backend;
}

/** Who captured the snapshot, where and when, from its manifest (text shown to a terminal has its controls escaped). */
function originOf(snap: OpenedSnapshot): BackendOrigin {
  const m = snap.plan.manifest;
  const at = Date.parse(m.time);
  const shown = (t: string) => (t === '' ? null : escapeControls(t.slice(0, 256)));
  return {
    host: shown(m.host),
    capturedAtMs: Number.isFinite(at) ? at : null,
    toolVersion: shown(m.toolVersion),
    emulated: 'emulated' in m && m.emulated === true,
  };
}
