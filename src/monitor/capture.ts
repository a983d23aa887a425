// Capture at the first bad verdict: when an engine first turns stalled, halted or stranded, or a unit goes,
// a snapshot of several instants is written into a capture directory while the evidence is still there (as
// devlink health's auto-dump does). The directory stays bounded: at most `keep` captures and `maxBytes` in
// all, the oldest removed first; at most one capture per engine and finding per `everyMs`; one capture at a
// time (it records every unit, so a finding raised while one runs is covered by it). Each archive is written
// to a temporary beside its name and renamed when complete, so the directory never holds half a capture;
// only files named as captures and owned by this user are ever removed. The directory is opened once and every
// write, listing and removal goes through that descriptor, after checking it is still the directory named, still
// this user's: a directory swapped for a link (or moved) later redirects nothing. Captures are 0600: they hold
// what is root's only on a host (debugfs, the kernel log).
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  realpathSync,
  type Stats,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { Hfi1SdmaError } from '../errors.js';
import { inputHolding, realTarget } from '../output-file.js';
import type { FindingKindName } from './codes.js';
import type { Finding } from './findings.js';
import { realSleep } from './pace.js';
import type { Round } from './round.js';

/** The findings that start a capture (engines stalled, halted or certainly stranded; units gone or vanished). */
export const CAPTURE_KINDS: ReadonlySet<FindingKindName> = new Set(['stalled', 'halted', 'stranded', 'gone', 'vanished']);

/** How much the capture directory may hold and how captures are taken. */
export interface CaptureLimits {
  /** Captures kept, at most (the oldest are removed past it). */
  keep: number;
  /** Bytes all captures may take together, at most. */
  maxBytes: number;
  /** At most one capture per engine (unit) and finding per this many ms of wall time. */
  everyMs: number;
  /** Instants per capture, and the time between them (ms). */
  samples: number;
  intervalMs: number;
}

export const DEFAULT_CAPTURE_LIMITS: Readonly<CaptureLimits> = {
  keep: 10,
  maxBytes: 512 * 1024 * 1024,
  everyMs: 600_000,
  samples: 3,
  intervalMs: 1000,
};

/** What started a capture. */
export interface CaptureTrigger {
  code: string;
  kind: FindingKindName;
  unit: string | null;
  engine: number | null;
  text: string;
}

/**
 * Write one snapshot of what is watched to `file` (atomically: nothing at `file` unless complete), of `samples`
 * instants `wait(intervalMs)` apart, taking at most `maxBytes` on disk (the room left). `wait` rejects when abandoned.
 */
export type TakeSnapshot = (
  file: string,
  trigger: CaptureTrigger,
  how: {
    samples: number;
    intervalMs: number;
    maxBytes: number;
    wait: (ms: number) => Promise<void>;
    /** How `file` is named to the user (`file` itself goes through the directory's descriptor). */
    shownAs: string;
    /** The capture's mode: 0600. */
    mode: number;
  },
) => Promise<void>;

/** The mode of a capture: it holds what only root reads on a host. */
export const CAPTURE_MODE = 0o600;

/**
 * How a capture's instants are paced: `wall`, real time (a live host or a sysroot, read beside the rounds);
 * `rounds`, the watched rounds themselves (the emulator, whose time moves only with them), with `advance` to
 * let its time pass once the rounds have ended.
 */
export type CapturePace = { kind: 'wall' } | { kind: 'rounds'; advance: (ms: number) => void | Promise<void> };

/** A capture that is kept: its file name and size. */
interface Kept {
  name: string;
  bytes: number;
}

/** Capture file names: `hfi1-sdma-<UTC time>-<unit>[-e<engine>]-<code>.tar.gz`; their order is their age. */
const CAPTURE_NAME = /^hfi1-sdma-\d{8}T\d{6}\.\d{3}Z-[a-z0-9_]+(?:-e\d+)?-SD\d{3}(?:-\d+)?\.tar\.gz$/;
/** The temporary of a capture (see snapshot/output.ts), with the writer's pid. */
const CAPTURE_TEMPORARY = /^\.hfi1-sdma\.hfi1-sdma-.*\.tar\.gz\.(\d+)\.[a-z0-9]+\.tmp$/;

/** `2026-12-01T21:58:04.123Z` as `20261201T215804.123Z`. */
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '');
}

/** The file name of a capture started at `ms` by `t` (`n` > 0 when the name was taken). */
export function captureName(ms: number, t: CaptureTrigger, n = 0): string {
  const where = `${t.unit ?? 'host'}${t.engine === null ? '' : `-e${t.engine}`}`;
  return `hfi1-sdma-${stamp(ms)}-${where}-${t.code}${n > 0 ? `-${n}` : ''}.tar.gz`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The key a capture is limited by: the finding and where it is. */
function keyOf(f: Pick<Finding, 'code' | 'unit' | 'engine'>): string {
  return `${f.code}:${f.unit ?? ''}/${f.engine ?? ''}`;
}

/** Human bytes: `812 KiB`, `3.1 MiB`. */
export function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(1)} GiB`;
}

/**
 * Check the capture directory as given (`--capture-dir`): created when missing (mode 0750, its parent must
 * exist), a real directory (not a link), not another user's, not writable by others unless sticky, and not
 * inside any of `inputs` (the sysroot being read). Returns its real path; a refusal is E_CANT_CREATE (73) or
 * E_PERMISSION (77), before anything is watched.
 */
export function checkCaptureDir(dir: string, inputs: readonly string[], uid: number | null): string {
  const option = `--capture-dir ${dir}`;
  const inside = (real: string | null) => {
    const input = real === null ? null : inputHolding(real, inputs);
    if (input !== null) {
      throw new Hfi1SdmaError(
        'E_CANT_CREATE',
        `${option}: lies inside ${input}, which is being read: captures would land in what they capture; name a directory outside it`,
      );
    }
  };
  // Before anything is made: nothing is ever created inside the tree read.
  inside(realTarget(dir));
  let st: Stats | undefined = lstatSync(dir, { throwIfNoEntry: false });
  if (st === undefined) {
    try {
      mkdirSync(dir, { mode: 0o750 });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? String(e);
      throw new Hfi1SdmaError(
        code === 'EACCES' || code === 'EPERM' ? 'E_PERMISSION' : 'E_CANT_CREATE',
        `${option}: cannot create it (${code}); create the directory first, or name one this user may write`,
        { cause: e },
      );
    }
    st = lstatSync(dir);
  }
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw new Hfi1SdmaError(
      'E_CANT_CREATE',
      `${option}: is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}: name a directory (captures are written and removed there)`,
    );
  }
  if (uid !== null && st.uid !== uid && st.uid !== 0) {
    throw new Hfi1SdmaError(
      'E_PERMISSION',
      `${option}: belongs to user ${st.uid}: captures are removed there, so it must be this user's (or root's); name a directory of your own`,
    );
  }
  if ((st.mode & 0o002) !== 0 && (st.mode & 0o1000) === 0) {
    throw new Hfi1SdmaError(
      'E_PERMISSION',
      `${option}: any user may write there and it is not sticky: name a directory only this user may write`,
    );
  }
  const real = realpathSync(dir);
  inside(real);
  return real;
}

/** What the captures have done, for the exporter's series. */
export interface CaptureCounts {
  written: number;
  failed: number;
  /** Triggers not captured: within `everyMs` of the last capture for the same finding. */
  suppressed: number;
  /** Captures removed to keep the directory within its limits. */
  removed: number;
  /** The last capture written, or null. */
  last: { file: string; trigger: CaptureTrigger; atMs: number; bytes: number } | null;
}

/** Where the captures go and how they are taken. */
export interface CapturesOptions {
  /** The directory, as checked by checkCaptureDir. */
  dir: string;
  limits: CaptureLimits;
  take: TakeSnapshot;
  pace: CapturePace;
  /** Wall clock (ms): names and the per-finding interval. */
  wallNowMs: () => number;
  /** One line per capture written, failed, or removed. */
  log: (line: string) => void;
  /** Whose captures these are: only this user's files are counted and removed (process.getuid() by default). */
  uid?: number | null;
}

/** A descriptor's entry under /proc: a name in the directory it holds, reached without resolving the directory's path. */
function inDir(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

/** The captures of one watch or exporter: fed every round, writing at most one snapshot at a time. */
export class Captures {
  readonly counts: CaptureCounts = { written: 0, failed: 0, suppressed: 0, removed: 0, last: null };
  /** Keys of the triggering findings of the last round. */
  private active = new Set<string>();
  /** When each key last started (or was covered by) a capture, wall ms. */
  private readonly lastAt = new Map<string, number>();
  private running: Promise<void> | null = null;
  private readonly stop = new AbortController();
  private ended = false;
  /** Waits of the capture running, on the rounds: each resolves at the first round at or past its time. */
  private roundWaits: { untilMs: number; resolve: () => void }[] = [];
  private lastRoundMs = 0;
  /** The largest capture written so far (bytes). */
  private largest = 0;

  /** The capture directory, opened once (−1 when it could not be: `dirError` says why). */
  private dirFd = -1;
  private dirError: string | null = null;
  private readonly uid: number | null;

  constructor(private readonly o: CapturesOptions) {
    this.uid = o.uid === undefined ? (process.getuid?.() ?? null) : o.uid;
    try {
      this.dirFd = openSync(o.dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (e) {
      this.dirError = `it cannot be opened (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
    }
    if (this.dirProblem() === null) this.removeStaleTemporaries();
  }

  /**
   * Why the directory held cannot take captures now, or null: checked on its descriptor at each write and removal
   * (still this user's or root's, not writable by others unless sticky, not removed) and against its name (still
   * that directory, not moved away or replaced by a link).
   */
  private dirProblem(): string | null {
    if (this.dirFd < 0) return this.dirError ?? 'it is closed';
    let st: Stats;
    try {
      st = fstatSync(this.dirFd);
    } catch (e) {
      return `it cannot be checked (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
    }
    if (st.nlink === 0) return 'it was removed';
    if (this.uid !== null && st.uid !== this.uid && st.uid !== 0) return `it belongs to user ${st.uid} now`;
    if ((st.mode & 0o002) !== 0 && (st.mode & 0o1000) === 0) return 'any user may write there now and it is not sticky';
    const named = lstatSync(this.o.dir, { throwIfNoEntry: false });
    if (named?.dev !== st.dev || named.ino !== st.ino) {
      return 'its name no longer leads to the directory opened at the start (moved, or replaced by a link or another directory)';
    }
    return null;
  }

  /** The capture directory (its real path). */
  get dir(): string {
    return this.o.dir;
  }

  /** Whether a capture is being written. */
  get busy(): boolean {
    return this.running !== null;
  }

  /** Feed a round: start a capture for the first new triggering finding (the rest are covered by it). */
  observe(round: Round): void {
    this.lastRoundMs = round.timeMs;
    const due = this.roundWaits.filter((w) => round.timeMs >= w.untilMs);
    this.roundWaits = this.roundWaits.filter((w) => round.timeMs < w.untilMs);
    for (const w of due) w.resolve();
    if (this.ended) return;
    const now = this.o.wallNowMs();
    const seen = new Set<string>();
    let first: Finding | null = null;
    for (const f of round.findings) {
      if (!CAPTURE_KINDS.has(f.kind)) continue;
      const key = keyOf(f);
      seen.add(key);
      if (this.active.has(key)) continue; // not new: captured (or refused) when it first appeared
      const last = this.lastAt.get(key);
      if (last !== undefined && now - last < this.o.limits.everyMs) {
        this.counts.suppressed += 1;
        continue;
      }
      this.lastAt.set(key, now);
      if (this.running) continue; // the capture being written records every unit: it covers this one
      first ??= f;
    }
    this.active = seen;
    if (first) this.start(first, now);
  }

  private start(f: Finding, now: number): void {
    const trigger: CaptureTrigger = { code: f.code, kind: f.kind, unit: f.unit, engine: f.engine, text: f.text };
    this.running = this.capture(trigger, now).finally(() => {
      this.running = null;
      this.wake();
    });
  }

  private quietWaiters: (() => void)[] = [];
  private wake(): void {
    const q = this.quietWaiters;
    this.quietWaiters = [];
    for (const r of q) r();
  }

  /**
   * Resolves once no capture is being written, or the one being written waits for a round: what a loop that
   * drives the emulator's time awaits before moving it on (tests; watch and export have time to spare).
   */
  async quiet(): Promise<void> {
    while (this.running && this.roundWaits.length === 0) await new Promise<void>((r) => this.quietWaiters.push(r));
  }

  private async capture(trigger: CaptureTrigger, now: number): Promise<void> {
    const { dir, limits } = this.o;
    const problem = this.dirProblem();
    if (problem !== null) {
      this.counts.failed += 1;
      this.o.log(
        `capture for ${trigger.code} (${trigger.text}) not written: --capture-dir ${dir}: ${problem}; nothing is written elsewhere`,
      );
      return;
    }
    const fd = this.dirFd;
    // Room first, for one more a quarter larger than the largest so far: the directory stays within its limits
    // while this one is written too.
    let room =
      limits.maxBytes -
      this.prune(limits.keep - 1, limits.maxBytes - Math.ceil(this.largest * 1.25)).reduce((n, k) => n + k.bytes, 0);
    let name = captureName(now, trigger);
    for (let n = 1; lstatSync(inDir(fd, name), { throwIfNoEntry: false }) !== undefined; n++) name = captureName(now, trigger, n);
    const file = join(dir, name);
    const wait = (ms: number) => this.wait(ms);
    for (;;) {
      try {
        await this.o.take(inDir(fd, name), trigger, {
          samples: limits.samples,
          intervalMs: limits.intervalMs,
          maxBytes: room,
          wait,
          shownAs: file,
          mode: CAPTURE_MODE,
        });
        break;
      } catch (e) {
        const tooLarge = /would take more than/.test((e as Error).message);
        // Too large for the room it had: leave more room next time.
        if (tooLarge) this.largest = Math.max(this.largest, room);
        // A new fault's evidence outranks older captures: once, the older ones make way and it is taken again.
        if (tooLarge && !this.stop.signal.aborted) {
          const freed = limits.maxBytes - this.prune(0, 0).reduce((n, k) => n + k.bytes, 0);
          if (freed > room) {
            room = freed;
            continue;
          }
        }
        this.counts.failed += 1;
        const why = this.stop.signal.aborted ? 'stopped before it was complete, nothing was kept' : (e as Error).message;
        this.o.log(`capture for ${trigger.code} (${trigger.text}) not written: ${why}`);
        return;
      }
    }
    const bytes = lstatSync(inDir(fd, name), { throwIfNoEntry: false })?.size ?? 0;
    this.counts.written += 1;
    this.largest = Math.max(this.largest, bytes);
    this.counts.last = { file, trigger, atMs: now, bytes };
    const kept = this.prune(limits.keep, limits.maxBytes, name);
    const total = kept.reduce((s, k) => s + k.bytes, 0);
    this.o.log(
      `captured ${file} for ${trigger.code} (${trigger.text}): ${limits.samples} instant${limits.samples === 1 ? '' : 's'}, ${bytesText(bytes)}; ${kept.length} kept in ${dir}, ${bytesText(total)}`,
    );
  }

  /** Let `ms` pass for the capture running: wall time, or the rounds' time; rejects once stopped. */
  private async wait(ms: number): Promise<void> {
    const signal = this.stop.signal;
    if (this.o.pace.kind === 'wall') {
      await realSleep(ms, signal);
    } else if (this.ended) {
      if (!signal.aborted) await this.o.pace.advance(ms);
    } else {
      await new Promise<void>((resolve) => {
        // The stop's listener goes when the round comes: an exporter takes captures for months.
        const done = () => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.roundWaits.push({ untilMs: this.lastRoundMs + ms, resolve: done });
        signal.addEventListener('abort', done, { once: true });
        this.wake();
      });
    }
    if (signal.aborted) throw new Error('stopped');
  }

  /** The captures in the directory, oldest first: regular files named as captures and owned by this user. */
  private kept(): Kept[] {
    if (this.dirProblem() !== null) return [];
    let names: string[];
    try {
      names = readdirSync(inDir(this.dirFd));
    } catch {
      return [];
    }
    const out: Kept[] = [];
    for (const name of names.filter((n) => CAPTURE_NAME.test(n)).sort()) {
      const st = lstatSync(inDir(this.dirFd, name), { throwIfNoEntry: false });
      // Another user's file named like a capture (a shared sticky directory) is neither counted nor removed.
      if (st?.isFile() && (this.uid === null || st.uid === this.uid)) out.push({ name, bytes: st.size });
    }
    return out;
  }

  /** Remove the oldest captures (never `keepName`) until at most `count` and `maxBytes` remain; returns those kept. */
  private prune(count: number, maxBytes: number, keepName?: string): Kept[] {
    const kept = this.kept();
    let total = kept.reduce((s, k) => s + k.bytes, 0);
    const removed: string[] = [];
    for (const k of [...kept]) {
      if (kept.length <= Math.max(0, count) && total <= maxBytes) break;
      if (k.name === keepName) continue;
      try {
        unlinkSync(inDir(this.dirFd, k.name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.o.log(
            `cannot remove ${join(this.o.dir, k.name)} (${(e as NodeJS.ErrnoException).code}): the capture directory may pass its limits`,
          );
          continue;
        }
      }
      kept.splice(kept.indexOf(k), 1);
      total -= k.bytes;
      removed.push(k.name);
    }
    if (removed.length > 0) {
      this.counts.removed += removed.length;
      this.o.log(
        `removed ${removed.length === 1 ? `the oldest capture, ${removed[0]}` : `the ${removed.length} oldest captures`} to keep ${this.o.dir} within ${this.o.limits.keep} captures and ${bytesText(this.o.limits.maxBytes)}`,
      );
    }
    return kept;
  }

  /** Temporaries of captures whose writer is gone (killed mid-capture) are removed. */
  private removeStaleTemporaries(): void {
    let names: string[];
    try {
      names = readdirSync(inDir(this.dirFd));
    } catch {
      return;
    }
    for (const name of names) {
      const pid = CAPTURE_TEMPORARY.exec(name)?.[1];
      if (pid === undefined || Number(pid) === process.pid || isAlive(Number(pid))) continue;
      try {
        const st = lstatSync(inDir(this.dirFd, name));
        if (!st.isFile() || (this.uid !== null && st.uid !== this.uid)) continue;
        unlinkSync(inDir(this.dirFd, name));
      } catch {
        // another writer's, or already gone: left as it is
      }
    }
  }

  /**
   * The rounds have ended (a count reached, a gone device): a capture being written takes its remaining
   * instants on its own, then resolves. With `abandon` (a stop asked), it is abandoned and nothing is kept.
   */
  async finish(abandon = false): Promise<void> {
    this.ended = true;
    if (abandon) this.stop.abort();
    const waits = this.roundWaits;
    this.roundWaits = [];
    // Waits on rounds that will not come: let the capture go on by its own time.
    for (const w of waits) {
      if (this.o.pace.kind === 'rounds' && !abandon) await this.o.pace.advance(Math.max(0, w.untilMs - this.lastRoundMs));
      w.resolve();
    }
    await this.running;
    if (this.dirFd >= 0) closeSync(this.dirFd);
    this.dirFd = -1;
    this.dirError = 'the captures have ended';
  }
}
