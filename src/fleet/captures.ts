// Captures gathered from many hosts, found in a directory as the engines lay them out: `FILE.<host>` (what
// `clush --rcopy FILE --dest DIR` and `rpdcp` write: the host appended to the file's name), `<host>/FILE` (one
// directory per host), and opacaptureall's uploads (`<host>/<name>.tgz`, unpacked beside it as `<host>/<name>/`).
// Each is judged as `health` judges it, and what identifies each unit (driver, firmware, board, parameters) is
// kept for baselines.
import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Backend, UnitInfo } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';

/** One host's capture: an archive (an hfi1-sdma snapshot or an opacapture tarball) or an unpacked opacapture. */
export interface CaptureRef {
  /** The host, from where the capture lies; null when only the capture itself can say (a bare FILE.tar.gz). */
  host: string | null;
  path: string;
  kind: 'archive' | 'dir';
}

const ARCHIVE = /\.(?:tar\.gz|tgz)$/;
const HOST_SUFFIX = /^(.+\.(?:tar\.gz|tgz))\.([A-Za-z0-9][A-Za-z0-9._-]*)$/;
const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function isDir(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** Whether a directory is an unpacked opacapture (its sysroot under tmp/capture<PID>/). */
export function isCaptureDir(p: string): boolean {
  try {
    return readdirSync(join(p, 'tmp')).some((n) => /^capture[0-9]{1,10}$/.test(n));
  } catch {
    return false;
  }
}

/** The newest archive in a host's directory, else its unpacked opacapture, else null. */
function inHostDir(host: string, dir: string): CaptureRef | null {
  const names = readdirSync(dir).sort();
  const archives = names
    .filter((n) => ARCHIVE.test(n) && !n.endsWith('.all.tgz') && statSync(join(dir, n)).isFile())
    .map((n) => ({ n, t: statSync(join(dir, n)).mtimeMs }))
    .sort((a, b) => b.t - a.t || (a.n < b.n ? -1 : 1));
  if (archives[0]) return { host, path: join(dir, archives[0].n), kind: 'archive' };
  if (isCaptureDir(dir)) return { host, path: dir, kind: 'dir' };
  const unpacked = names.find((n) => isDir(join(dir, n)) && isCaptureDir(join(dir, n)));
  return unpacked ? { host, path: join(dir, unpacked), kind: 'dir' } : null;
}

/** Every capture in `dir`, one per host, sorted by host. */
export function findCaptures(dir: string): CaptureRef[] {
  const out: CaptureRef[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isFile()) {
      const m = HOST_SUFFIX.exec(name);
      if (m) out.push({ host: m[2] as string, path, kind: 'archive' });
      else if (ARCHIVE.test(name) && !name.endsWith('.all.tgz')) out.push({ host: null, path, kind: 'archive' });
    } else if (st.isDirectory() && HOST_NAME.test(name)) {
      const hit = inHostDir(name, path);
      if (hit) out.push(hit);
    }
  }
  return out;
}

/** The name a capture shows for itself when its place does not say (the file's name without its suffix). */
export function fallbackHost(ref: CaptureRef): string {
  return safeHost(basename(ref.path).replace(ARCHIVE, ''));
}

/** A host name fit to print and to name a directory: anything else a host name may not hold becomes `_`. */
export function safeHost(name: string): string {
  const s = name
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, 253);
  return s === '' ? 'host' : s;
}

/** What identifies one unit of a host, for baselines: the driver, firmware, board and the parameters that shape SDMA. */
export interface UnitIdentity {
  unit: string;
  pci: string | null;
  module: string;
  chip: string;
  driver: string;
  engines: number[];
  descqCnt: number;
  driverVersion: string | null;
  driverSrcversion: string | null;
  kernelRelease: string | null;
  fwVer: string | null;
  boardId: string | null;
  hwRev: string | null;
  numSdma: number | null;
  numVls: number | null;
  useBulksvc: boolean | null;
  capMask: string | null;
}

/** The identity of a unit as its backend read it. */
export function identityOf(info: UnitInfo): UnitIdentity {
  const c = info.context;
  const s = info.settings;
  return {
    unit: info.name,
    pci: info.pci || null,
    module: info.flavour.module,
    chip: info.flavour.chip,
    driver: info.flavour.driver,
    engines: [...info.engineIds],
    descqCnt: info.descqCnt,
    driverVersion: c?.driverVersion ?? null,
    driverSrcversion: c?.driverSrcversion ?? null,
    kernelRelease: c?.kernelRelease ?? null,
    fwVer: c?.fwVer ?? null,
    boardId: c?.boardId ?? null,
    hwRev: c?.hwRev ?? null,
    numSdma: s?.numSdma ?? null,
    numVls: s?.numVls ?? null,
    useBulksvc: s?.useBulksvc ?? null,
    capMask: s?.capMask ?? null,
  };
}

/** One capture judged: the host, `health --brief`'s answer, every unit's identity; or why it could not be read. */
export interface JudgedCapture {
  host: string;
  ref: CaptureRef;
  status: 'OK' | 'WARNING' | 'CRITICAL' | 'UNKNOWN';
  lines: string[];
  units: UnitIdentity[];
  /** When the capture was taken (ISO), where it says. */
  time: string | null;
}

/** How a capture is opened and judged (the CLI passes its own; tests and benchmarks too). */
export interface Judge {
  open(ref: CaptureRef): Promise<Backend>;
  answer(backend: Backend): Promise<{ status: JudgedCapture['status']; lines: string[] }>;
}

/** Judge one capture; a capture that cannot be read is an UNKNOWN answer saying why, never a stop. */
export async function judgeCapture(ref: CaptureRef, judge: Judge): Promise<JudgedCapture> {
  let backend: Backend;
  try {
    backend = await judge.open(ref);
  } catch (e) {
    const why = isHfi1SdmaError(e) ? e.message : String(e);
    return {
      host: ref.host ?? fallbackHost(ref),
      ref,
      status: 'UNKNOWN',
      lines: [`UNKNOWN ${why.split('\n')[0]}`],
      units: [],
      time: null,
    };
  }
  try {
    const units = (await backend.units()).map(identityOf);
    const { status, lines } = await judge.answer(backend);
    const at = backend.origin?.capturedAtMs ?? null;
    return {
      host: ref.host ?? (backend.origin?.host ? safeHost(backend.origin.host) : fallbackHost(ref)),
      ref,
      status,
      lines,
      units,
      time: at === null ? null : new Date(at).toISOString(),
    };
  } finally {
    await backend.close();
  }
}
