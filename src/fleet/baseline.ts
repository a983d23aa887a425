// Baselines on opa-ff's opafabricanalysis model: `-b` stores each host's raw capture (never only its rendering)
// with what this version made of it; a later run compares each host's findings and identity (driver, firmware,
// board, the parameters that shape SDMA) with the baseline. Where they differ and the baseline was rendered by
// another version, its raw capture is judged again by this one: if that matches the run, only the rendering
// changed and a new baseline is recommended instead of a change reported.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Hfi1SdmaError } from '../errors.js';
import type { CaptureRef, JudgedCapture, UnitIdentity } from './captures.js';

export const BASELINE_FORMAT = 'hfi1-sdma-baseline/1';
const INDEX = 'fleet.json';

/** One host as baselined. */
export interface HostRecord {
  host: string;
  /** The raw capture, relative to the baseline directory. */
  capture: string;
  kind: CaptureRef['kind'];
  status: JudgedCapture['status'];
  lines: string[];
  units: UnitIdentity[];
  time: string | null;
}

/** The baseline's index. */
export interface BaselineIndex {
  format: typeof BASELINE_FORMAT;
  toolVersion: string;
  time: string;
  hosts: HostRecord[];
}

/** The directory a baseline lives in (`DIR/baseline`, as opafabricanalysis keeps `baseline/`). */
export function baselineDir(dir: string): string {
  return join(dir, 'baseline');
}

/** Store the judged captures as the baseline of `dir`, replacing the one there only once the new one is complete. */
export function storeBaseline(dir: string, judged: readonly JudgedCapture[], toolVersion: string, nowIso: string): BaselineIndex {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const tmp = mkdtempSync(join(dir, '.baseline-'));
  try {
    const hosts: HostRecord[] = [];
    for (const j of judged) {
      const capture = join(j.host, basename(j.ref.path));
      mkdirSync(join(tmp, j.host), { recursive: true });
      cpSync(j.ref.path, join(tmp, capture), { recursive: true, verbatimSymlinks: true });
      hosts.push({ host: j.host, capture, kind: j.ref.kind, status: j.status, lines: j.lines, units: j.units, time: j.time });
    }
    const index: BaselineIndex = { format: BASELINE_FORMAT, toolVersion, time: nowIso, hosts };
    writeFileSync(join(tmp, INDEX), `${JSON.stringify(index, null, 1)}\n`);
    const final = baselineDir(dir);
    const old = existsSync(final) ? `${tmp}.old` : null;
    if (old) renameSync(final, old);
    renameSync(tmp, final);
    if (old) rmSync(old, { recursive: true, force: true });
    return index;
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

/** The baseline of `dir`; E_NO_INPUT when there is none, E_PARSE when its index is not one. */
export function loadBaseline(dir: string): BaselineIndex {
  const file = join(baselineDir(dir), INDEX);
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    throw new Hfi1SdmaError(
      'E_NO_INPUT',
      `${file}: no baseline in ${dir}: take one first with 'hfi1-sdma fleet --baseline ${dir} -b CAPTURES'`,
    );
  }
  let index: BaselineIndex;
  try {
    index = JSON.parse(raw) as BaselineIndex;
  } catch (e) {
    throw new Hfi1SdmaError('E_PARSE', `${file}: not valid JSON (${(e as Error).message}); take the baseline again with -b`);
  }
  if (index?.format !== BASELINE_FORMAT || !Array.isArray(index.hosts)) {
    throw new Hfi1SdmaError(
      'E_PARSE',
      `${file}: not an hfi1-sdma baseline (format ${JSON.stringify(index?.format)}); take it again with -b`,
    );
  }
  return index;
}

/** The raw capture of a baselined host, as a capture to judge again. */
export function baselineRef(dir: string, r: HostRecord): CaptureRef {
  return { host: r.host, path: join(baselineDir(dir), r.capture), kind: r.kind };
}

/** How one host compares with the baseline. */
export interface HostChange {
  host: string;
  kind: 'same' | 'changed' | 'new' | 'missing' | 'rendering';
  /** Problems now and not in the baseline, and the other way round. */
  added: string[];
  cleared: string[];
  /** `hfi1_0 driverVersion 10.14.0.0 → 10.15.0.0`, a unit that appeared or went. */
  drift: string[];
}

/** A brief line without the tag that says the numbers are not this host's adapter. */
function plain(line: string): string {
  return line.replace(/ \((?:emulator|snapshot|emulated sysroot)\)$/, '');
}

const FIELDS: readonly (keyof UnitIdentity)[] = [
  'module',
  'chip',
  'driver',
  'pci',
  'engines',
  'descqCnt',
  'driverVersion',
  'driverSrcversion',
  'kernelRelease',
  'fwVer',
  'boardId',
  'hwRev',
  'numSdma',
  'numVls',
  'useBulksvc',
  'capMask',
];

/** How a field is named to the operator: as the kernel or the RDMA core names the file it comes from. */
const LABEL: Record<keyof UnitIdentity, string> = {
  unit: 'unit',
  pci: 'PCI address',
  module: 'module',
  chip: 'chip',
  driver: 'driver build',
  engines: 'engines',
  descqCnt: 'descq_cnt',
  driverVersion: 'driver version',
  driverSrcversion: 'driver srcversion',
  kernelRelease: 'kernel',
  fwVer: 'fw_ver',
  boardId: 'board_id',
  hwRev: 'hw_rev',
  numSdma: 'num_sdma',
  numVls: 'num_vls',
  useBulksvc: 'use_bulksvc',
  capMask: 'cap_mask',
};

function shown(v: unknown): string {
  if (v === null || v === undefined) return '-';
  return Array.isArray(v) ? v.join(',') : String(v);
}

/** What changed between two lists of units' identities. */
export function driftOf(before: readonly UnitIdentity[], after: readonly UnitIdentity[]): string[] {
  const out: string[] = [];
  for (const b of before) {
    const a = after.find((u) => u.unit === b.unit);
    if (!a) {
      out.push(`${b.unit} gone`);
      continue;
    }
    for (const f of FIELDS) if (shown(a[f]) !== shown(b[f])) out.push(`${b.unit} ${LABEL[f]} ${shown(b[f])} → ${shown(a[f])}`);
  }
  for (const a of after) if (!before.some((b) => b.unit === a.unit)) out.push(`${a.unit} new`);
  return out;
}

/** Compare a host's baseline record with its judged capture now. */
export function compareHost(
  base: Pick<HostRecord, 'host' | 'lines' | 'units'> | undefined,
  now: JudgedCapture | undefined,
): HostChange {
  const host = (now?.host ?? base?.host) as string;
  if (!base) return { host, kind: 'new', added: [], cleared: [], drift: [] };
  if (!now) return { host, kind: 'missing', added: [], cleared: [], drift: [] };
  const before = new Set(base.lines.map(plain));
  const after = new Set(now.lines.map(plain));
  const added = [...after].filter((l) => !before.has(l) && l !== 'OK');
  const cleared = [...before].filter((l) => !after.has(l) && l !== 'OK');
  const drift = driftOf(base.units, now.units);
  const same = added.length === 0 && cleared.length === 0 && drift.length === 0;
  return { host, kind: same ? 'same' : 'changed', added, cleared, drift };
}
