// Reading a capture for its twin: every recorded instant judged by the one monitor every command renders (as
// `hfi1-sdma --sysroot CAPTURE health` judges it), and at the instant the twin starts from, what the judgement does
// not keep: each engine's ring and the owners of the QPs waiting.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { QpOwner, RingDump, UnitInfo } from '../backend.js';
import { Hfi1SdmaError, isHfi1SdmaError, usageError } from '../errors.js';
import type { Finding } from '../monitor/findings.js';
import { Monitor } from '../monitor/monitor.js';
import type { UnitRound } from '../monitor/round.js';
import { inFlight } from '../progress/ring.js';
import type { SnapshotManifest } from '../snapshot/format.js';
import type { UnitId } from '../unit-id.js';

/** One recorded instant of the twin's unit, as the monitor judged it. */
export interface InstantRecord {
  /** ms from the capture's first instant. */
  readonly timeMs: number;
  readonly round: UnitRound;
  /** The round's findings about this unit. */
  readonly findings: readonly Finding[];
}

/** A capture as its twin needs it. */
export interface CaptureReading {
  readonly file: string;
  readonly manifest: SnapshotManifest;
  readonly sha256: string;
  readonly info: UnitInfo;
  readonly instants: readonly InstantRecord[];
  /** The instant the twin starts from. */
  readonly seedInstant: number;
  /** Each engine's ring at the seed instant (null where no source listed it). */
  readonly rings: ReadonlyMap<number, RingDump | null>;
  /** The owners of the QPs waiting at the seed instant, by QPN. */
  readonly owners: ReadonlyMap<number, QpOwner>;
}

/** How a capture is read: which unit and instant, and the windows the monitor judges with. */
export interface ReadOptions {
  /** The unit (number or name); default the one whose last verdict is worst, else the first. */
  unit?: UnitId | undefined;
  /** The instant to start from (0 for the first); default the last. */
  instant?: number | undefined;
  stallMs: number;
  strandMs: number;
  /** How the instant was named, for messages (`--from-instant`). */
  instantOption?: string;
}

const RANK = { critical: 0, warning: 1, unknown: 2, note: 3 } as const;

/** Read `file` (a snapshot .tar.gz) for a twin. */
export async function readCapture(file: string, o: ReadOptions): Promise<CaptureReading> {
  const [{ openSnapshotBackend, snapshotExtras }] = await Promise.all([import('../snapshot/backend.js')]);
  const backend = await openSnapshotBackend(file);
  try {
    const rec = backend.recording;
    const manifest = snapshotExtras(backend)?.manifest();
    if (!rec || !manifest) throw new Hfi1SdmaError('E_INTERNAL', `${file}: not read as a recording`);
    const count = rec.timesMs.length;
    const seedInstant = o.instant ?? count - 1;
    if (!Number.isInteger(seedInstant) || seedInstant < 0 || seedInstant >= count) {
      throw usageError(
        `${o.instantOption ?? '--from-instant'} ${o.instant}: ${file} holds ${count === 1 ? 'instant 0 only' : `instants 0-${count - 1}`} (0 is the first)`,
      );
    }
    const monitor = new Monitor(backend, { unit: o.unit, requireUnit: true, stallMs: o.stallMs, strandMs: o.strandMs });
    const perUnit = new Map<string, InstantRecord[]>();
    const rings = new Map<string, Map<number, RingDump | null>>();
    const owners = new Map<string, Map<number, QpOwner>>();
    for (let k = 0; k < count; k++) {
      const round = await monitor.round();
      for (const u of round.units) {
        const list = perUnit.get(u.info.name) ?? [];
        list.push({ timeMs: rec.timesMs[k] ?? 0, round: u, findings: round.findings.filter((f) => f.unit === u.info.name) });
        perUnit.set(u.info.name, list);
        if (k === seedInstant) {
          rings.set(u.info.name, await ringsOf(u));
          owners.set(u.info.name, await ownersOf(u));
        }
      }
      if (k + 1 < count) await rec.advance();
    }
    await monitor.close();
    const name = chooseUnit(perUnit, o.unit);
    const instants = perUnit.get(name) ?? [];
    const info = instants[0]?.round.info;
    if (!info || instants.length !== count) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${file}: ${name} is not in every instant of the capture; a twin needs the unit at each`,
      );
    }
    return {
      file,
      manifest,
      sha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
      info,
      instants,
      seedInstant,
      rings: rings.get(name) ?? new Map(),
      owners: owners.get(name) ?? new Map(),
    };
  } finally {
    await backend.close();
  }
}

/** The unit asked for, else the one whose last findings are worst (the first among equals). */
function chooseUnit(perUnit: Map<string, InstantRecord[]>, asked: UnitId | undefined): string {
  const names = [...perUnit.keys()];
  if (asked !== undefined || names.length === 1) return names[0] as string;
  let best = names[0] as string;
  let bestRank = 4;
  for (const n of names) {
    const last = perUnit.get(n)?.at(-1);
    const rank = Math.min(4, ...(last?.findings ?? []).map((f) => RANK[f.severity]));
    if (rank < bestRank) {
      best = n;
      bestRank = rank;
    }
  }
  return best;
}

/** The ring of every engine with requests in flight (null where no source lists it). */
async function ringsOf(u: UnitRound): Promise<Map<number, RingDump | null>> {
  const out = new Map<number, RingDump | null>();
  if (u.status !== 'up') return out;
  for (const e of u.engines) {
    const sw = e.sample.sw;
    if (!sw || e.sample.gone || inFlight(sw.descqHead, sw.descqTail) === 0) continue;
    try {
      out.set(e.sample.engine, await u.unit.ring(e.sample.engine));
    } catch (err) {
      if (!isHfi1SdmaError(err)) throw err;
      out.set(e.sample.engine, null);
    }
  }
  return out;
}

/** The owners of the QPs waiting, where the capture recorded them. */
async function ownersOf(u: UnitRound): Promise<Map<number, QpOwner>> {
  const out = new Map<number, QpOwner>();
  const qps = u.waiters.judgements
    .map((j) => j.waiter)
    .filter((w) => w.kind === 'qp')
    .map((w) => ({ qpn: w.qpn, creatorPid: w.creatorPid ?? null }));
  for (const o of u.waiters.owners) out.set(o.qpn, o);
  const ask = qps.filter((q) => !out.has(q.qpn));
  if (ask.length === 0 || !u.unit.qpOwners) return out;
  try {
    for (const o of await u.unit.qpOwners(ask)) out.set(o.qpn, o);
  } catch (err) {
    if (!isHfi1SdmaError(err)) throw err;
  }
  return out;
}
