// The fast model: the stepped model with the periodic stretches of each engine skipped in closed form.
//
// Every event of the emulator is stepped as the driver and the chip would take it, except that each engine (with its
// chip, its senders and their pending events: its domain, domain.ts) is watched at its interrupts, the points it
// passes most regularly. When the domain is found in the same state, seen from its own frame, as at an earlier
// interrupt (a cheap hash first, then the whole state), nothing that happened in between depended on anything but
// that state, so it repeats, period after period, until something from outside the engine arrives: a fault, the port
// coming up or going down, the netdev watchdog, or the end of the run (a sample instant). The domain is then moved on
// by as many whole periods as fit before that (domain.ts translate()): its counters by that many times what a period
// adds, its ring slots, times and pending events along, its descriptor words written again from the txreq records,
// the skipped records digested in closed form. What is left to the bound is stepped as usual. The states kept from
// within the period skipped from are moved on with it (carryPhases), so that after the bound the engine is skipped
// again at the first of them it meets.
//
// A skip may also end within a period (landInPart): a state kept within the last period, with a snapshot of the
// domain's objects (snapshot.ts), is put back in place of the domain and moved on by whole periods, to land as close
// before the bound as the states kept allow. That is what skips an engine whose period is longer than the stretch
// between two samples (no whole period ever fits), and the part of a period left before each sample. Snapshots are
// kept only on a busy engine whose period seems long (busy(), worthPart()): elsewhere they would cost more than the
// stepping they save.
//
// The unit's periodic check for lost wake-ups reads every engine, skipped or not: a stretch is skipped only if no
// moment of it had a sleeper on an engine with an empty ring (the check's precondition), so the check finds nothing
// in it either way. Stretches in which an engine raised an error, wrote a kernel log line or broke an invariant are
// never skipped.
import { lostWakeupPossible } from './dispatch.js';
import { Domain, type DomainCapture, Ids } from './domain.js';
import { doubleFields } from './double-fields.js';
import { type Engine, SKEW_WORDS } from './engine.js';
import { Ev } from './host.js';
import { carryStream, copyStream } from './log.js';
import type { Scheduler } from './scheduler.js';
import { type DomainSnapshot, restoreSnapshot } from './snapshot.js';
import type { EmuUnit } from './unit.js';

/**
 * States are kept for hashes that come back within this many runs between two sample instants: a longer period is
 * skipped too (at any point of it: landInPart), but it must be stepped twice first.
 */
const MAX_PERIOD_RUNS = 3;
/** An engine stepped for longer than this per interrupt is not busy enough for long periods (busy()). */
const BUSY_NS = 1_000_000;
/** Failed tries of a kept state after which landInPart no longer tries it (repeatsInPart). */
const MAX_PART_MISSES = 2;
/**
 * Interrupts an engine must take in a period for a snapshot to be worth it (worthPart): a snapshot of a large ring costs
 * more than stepping a few of them (a light engine's, or in a command's first second, before V8 has optimised it).
 */
const PART_INTERRUPTS = 128;
/** States kept for a period longer than this part of a run between two samples are kept restorable (worthPart). */
const PART_RUNS = 16;
/** Interrupt states remembered per engine before the memory is cleared (an engine that never repeats). */
const MAX_SEEN = 1 << 15;
/**
 * Whole states kept per engine. Past this the engine is watched at fewer of its interrupts (those whose hash has
 * one more low bit clear), so an engine that does not repeat costs little, and one that does is still found at
 * some point of its cycle.
 */
const MAX_KEPT = 64;
/** Captures in a row that find no repeat before the engine is watched at fewer interrupts. */
const MAX_MISSES = 32;
/** Numbers of kept states copied since the last skip before the engine is watched at fewer interrupts (a big ring of mixed packets costs more to keep). */
const MAX_COPIED = 1 << 16;
/**
 * Hashes seen for the first time in a row before the engine is watched at fewer interrupts: one that never comes
 * back to a state (an over-subscribed engine) costs a map entry per interrupt otherwise. An engine that repeats sees
 * its hashes again within a period, far sooner.
 */
const MAX_FRESH = 256;

/** What the fast model has skipped (the `emu run` report and the benchmarks). */
export interface SkipTotals {
  /** Periods skipped, over all engines. */
  periods: number;
  /** Virtual ns skipped, summed over engines. */
  skippedNs: number;
  /** Skips made. */
  jumps: number;
}

interface Watch {
  readonly domain: Domain;
  /** Captures by cheap hash (a number: the instant the hash was last seen, not captured). */
  readonly seen: Map<number, DomainCapture | number>;
  /** Captures held in `seen`. */
  kept: number;
  /** Only interrupts whose hash has these bits clear are watched. */
  mask: number;
  /** Captures since the last skip that found no repeat. */
  misses: number;
  /** Numbers copied into kept states since the last skip or thinning. */
  copied: number;
  /** Hashes seen for the first time since one was last seen again. */
  fresh: number;
  /** Virtual ns skipped of the engine so far (a state kept before a skip is older than its period by what was skipped since). */
  skippedNs: number;
  /** The last instant the unit's check could have found a lost wake-up on the engine (a skipped stretch holds none). */
  quietSleeperNs: number;
  /** A repeat has been found since the engine's states were last forgotten (worthPart). */
  repeated: boolean;
  /** The time after which the last hash kept came back. */
  lastGapNs: number;
  /** Interrupts of the engine stepped (busy()). */
  interrupts: number;
  /** Snapshots taken since the engine's states were last forgotten (none: nothing to land on, landing()). */
  snapshots: number;
}

/** The fast model of one unit. */
export class FastForward {
  private readonly watches: Watch[];
  /** The latest instant a skip may reach: the run's end or the next event of the unit's own. */
  private boundNs = 0;
  /**
   * When the unit last changed what its engines see from outside their domains (a fault, a port coming up or
   * back): a repeat is taken only from a state captured since.
   */
  private changedNs = Number.NEGATIVE_INFINITY;
  private targetNs = 0;
  /** The length of the current run (from where it began to its target): the stretch between two sample instants. */
  private runNs = 0;
  readonly totals: SkipTotals = { periods: 0, skippedNs: 0, jumps: 0 };

  constructor(private readonly u: EmuUnit) {
    const ids = new Ids();
    // Grown to SKEW_LOG entries as placements are recorded (Engine.submitTx).
    for (const e of u.engines) e.skewLog = new Int32Array(64 * SKEW_WORDS);
    this.watches = u.engines.map((e: Engine) => ({
      domain: new Domain(
        u,
        e,
        u.senders.filter((s) => s.engine === e),
        ids,
      ),
      seen: new Map(),
      kept: 0,
      mask: 0,
      misses: 0,
      copied: 0,
      fresh: 0,
      skippedNs: 0,
      quietSleeperNs: Number.NEGATIVE_INFINITY,
      repeated: false,
      lastGapNs: 0,
      interrupts: 0,
      snapshots: 0,
    }));
    for (const w of this.watches) doubleFields(w, 'skippedNs', 'lastGapNs', 'interrupts');
    doubleFields(this, 'boundNs', 'targetNs', 'runNs');
  }

  /**
   * Something outside the model's events changed the unit (a control of the library or a test: pause, resume,
   * presetCounters, a direct submission): no state captured before now may be repeated from.
   */
  changed(): void {
    this.changedNs = this.u.host.sched.nowNs;
    for (const w of this.watches) {
      w.seen.clear();
      w.kept = 0;
      w.repeated = false;
      w.snapshots = 0;
    }
  }

  /** A run to `targetNs` begins. */
  begin(targetNs: number): void {
    this.targetNs = targetNs;
    this.runNs = targetNs - this.u.host.sched.nowNs;
    this.refreshBound();
  }

  private refreshBound(): void {
    this.boundNs = Math.min(this.targetNs, this.u.host.sched.nextInDomain(-1, Ev.check));
  }

  /** After each event the scheduler dispatched. */
  after(s: Scheduler): void {
    const d = s.domain;
    if (d < 0) {
      if (s.kind !== Ev.check && s.kind !== Ev.netdevWatchdog) this.changedNs = s.nowNs;
      this.refreshBound();
      return;
    }
    const w = this.watches[d] as Watch;
    const e = w.domain.e;
    if (e.dmawait.length !== 0 && e.descqHead === e.descqTail && lostWakeupPossible(this.u, e)) w.quietSleeperNs = s.nowNs;
    if (s.kind === Ev.interrupt) this.atInterrupt(w);
  }

  /** An interrupt handler of the domain has run: remember its state, or skip if it repeats one. */
  private atInterrupt(w: Watch): void {
    const dom = w.domain;
    // A test's hook between the sequence sample and the sleep (Host.afterSeqSample) may do anything: no skip then.
    if (this.u.host.afterSeqSample !== null) return;
    w.interrupts++;
    const h = dom.cheapHash();
    if ((h & w.mask) !== 0) return;
    const earlier = w.seen.get(h);
    if (earlier === undefined) {
      if (w.seen.size >= MAX_SEEN) {
        w.seen.clear();
        w.kept = 0;
        w.snapshots = 0;
      }
      w.seen.set(h, this.u.host.sched.nowNs);
      if (++w.fresh > MAX_FRESH) thin(w);
      return;
    }
    w.fresh = 0;
    const t = this.u.host.sched.nowNs;
    if (typeof earlier === 'number') {
      // Seen again a period on, if the state repeats. A period longer than a few runs between two sample instants is
      // not worth keeping states for (an over-subscribed engine's hashes, say, which come back while its whole state
      // does not): remember only when. Else keep the whole state, to compare with its next return.
      if (t - earlier > (this.busy(w) ? MAX_PERIOD_RUNS : 1) * this.runNs) {
        w.seen.set(h, t);
        return;
      }
      dom.scan(t);
      w.kept++;
      const c = dom.captureScanned(w.skippedNs);
      // Two hashes in a row back after the same time: most likely a period (a restorable state worth taking before
      // the first repeat is found, so that the engine can land within a period at the first).
      const gap = t - earlier;
      if (this.worthPart(w, gap, gap === w.lastGapNs)) c.snap = snapshotOf(w);
      w.lastGapNs = gap;
      w.copied += c.key.length;
      w.seen.set(h, c);
      if (w.kept > MAX_KEPT || w.copied > MAX_COPIED) thin(w);
      return;
    }
    if (t - earlier.atNs <= 0) return;
    if (this.boundNs - t < t - earlier.atNs) {
      // No whole period fits before the bound: perhaps a part of one does (a state kept within the period put back).
      if (this.repeatsInPart(w, earlier, t)) return;
      // A repeat found now could not be skipped before the bound: the earlier state is kept to compare with later (a
      // whole number of periods on is a period too), unless its age (the time stepped since it was kept) is more
      // than half the run between two samples and no more than the run. Then the state now takes its place, its next
      // return compared a period on: else an engine whose period is more than half that run would never be skipped.
      // (One whose period is longer than the run cannot be skipped in such runs: no state is copied for it.)
      const age = t - earlier.atNs - (w.skippedNs - earlier.skippedBefore);
      if (2 * age <= this.runNs || age > this.runNs) return;
      dom.scan(t);
      w.copied += dom.recapture(earlier, w.skippedNs).key.length;
      if (w.copied > MAX_COPIED) thin(w);
      return;
    }
    // A state kept before the engine's last skip, whose desc_avail is not the one now, cannot be repeated from:
    // availRun() replays the period placement by placement from the skew log, and the skipped periods logged none.
    const valid =
      earlier.atNs > w.quietSleeperNs &&
      earlier.atNs >= this.changedNs &&
      ((earlier.skippedBefore === w.skippedNs && !earlier.jumpedOver) || earlier.descAvail === dom.e.descAvail);
    if (valid && dom.scan(t, earlier.key) && dom.scanMatches(earlier)) {
      const now = dom.captureScanned();
      w.repeated = true;
      const periodNs = now.atNs - earlier.atNs;
      const run =
        Domain.quiet(earlier, now) && Domain.availRepeats(earlier, now)
          ? dom.availRun(earlier, now, Math.floor((this.boundNs - now.atNs) / periodNs))
          : null;
      if (
        run !== null &&
        earlier.descAvail === now.descAvail &&
        this.worthPart(w, periodNs, true) &&
        this.landInPart(w, earlier, now, run.periods)
      )
        return;
      if (run !== null && run.periods > 0) {
        const k = run.periods;
        dom.translate(earlier, now, k, run.descAvail);
        this.totals.periods += k;
        this.totals.skippedNs += k * periodNs;
        this.totals.jumps++;
        // The state now, k periods on, read again: its counters as the engine holds them, wrapped at their widths.
        w.skippedNs += k * periodNs;
        const landing = dom.capture(now.atNs + k * periodNs, w.skippedNs);
        // The state landed on is the earlier one's, moved on: its snapshot serves (desc_avail alike, restored with it).
        if (earlier.descAvail === now.descAvail) landing.snap = earlier.snap;
        if (earlier.descAvail === now.descAvail) carryPhases(w, h, earlier, now, landing, k);
        w.seen.set(h, landing);
        w.misses = 0;
        return;
      }
      if (run !== null && !dom.availKeyed) {
        // The engine's placements hang on desc_avail: from now on a repeat is looked for with it alike. The states
        // kept so far are filed under their hash with desc_avail (a longer period's repeat of one is then found a
        // period after it was kept, not two periods after the change); the instants of hashes seen once are dropped.
        dom.availKeyed = true;
        rekeyWithAvail(w);
        return;
      }
    }
    // No repeat. The earlier state is replaced by this one now and then (an earlier one that does not come back must
    // not hide one that does), always when it can no longer be used.
    if (!valid || (++earlier.misses & 7) === 0) {
      dom.scan(t);
      w.copied += dom.recapture(earlier, w.skippedNs).key.length;
    }
    if (++w.misses > MAX_MISSES || w.copied > MAX_COPIED) thin(w);
  }

  /**
   * Whether a state kept for a period of `periodNs` (what it seems to be: its hash came back that long after) is worth
   * a snapshot, to skip to a point within a period (landInPart): what that saves a run between samples is at most a
   * period, and a short period is mostly skipped whole; so is a period of few interrupts. Only once the engine has
   * repeated, or when its last two hashes kept came back after the same time (`likely`: most likely a period, and
   * the first one is not to be missed): an engine that does not repeat (over-subscribed) would pay for snapshots of
   * its large ring that are never put back.
   */
  private worthPart(w: Watch, periodNs: number, likely = false): boolean {
    if (!((w.repeated || likely) && periodNs * PART_RUNS > this.runNs && this.busy(w))) return false;
    const steppedNs = this.u.host.sched.nowNs - w.skippedNs;
    return w.interrupts * periodNs >= PART_INTERRUPTS * steppedNs;
  }

  /**
   * Whether the engine is busy enough for a long period to be worth pursuing (states kept for it, restorable): at
   * least one interrupt a virtual ms of the time stepped. What a skip saves is the events of a period, what watching
   * costs is per state kept; on a lightly loaded engine (a sender at 1 Gb/s) the whole run costs less than the states.
   */
  private busy(w: Watch): boolean {
    const steppedNs = this.u.host.sched.nowNs - w.skippedNs;
    return w.interrupts * BUSY_NS >= steppedNs;
  }

  /**
   * A repeat of `earlier` found now, when no whole period of it fits before the bound: skipped to a point within a
   * period if one fits (landInPart). The domain must be exactly periodic, desc_avail included.
   */
  private repeatsInPart(w: Watch, earlier: DomainCapture, t: number): boolean {
    const dom = w.domain;
    if (earlier.atNs <= w.quietSleeperNs || earlier.atNs < this.changedNs || earlier.descAvail !== dom.e.descAvail) return false;
    // Not tried for a short period (skipped whole, what is left of it stepped), nor where nothing kept could be
    // landed on, nor again on a state that failed twice: an engine that does not repeat (over-subscribed) brings
    // its hashes back without its state, and each try is a scan.
    if (!this.worthPart(w, t - earlier.atNs, true) || earlier.misses >= MAX_PART_MISSES) return false;
    if (this.landing(w, earlier.atNs, t, 0) === null) return false;
    if (!dom.scan(t, earlier.key) || !dom.scanMatches(earlier)) {
      earlier.misses++;
      return false;
    }
    const now = dom.captureScanned();
    if (!Domain.quiet(earlier, now)) return false;
    w.repeated = true;
    return this.landInPart(w, earlier, now, 0);
  }

  /**
   * The state kept within the period from `aNs` to `bNs` (b now) that, moved on by whole periods, lands latest before
   * the bound and later than `k` whole periods from now (a state with a snapshot to put back), or null.
   */
  private landing(w: Watch, aNs: number, bNs: number, k: number): { c: DomainCapture; atNs: number } | null {
    if (w.snapshots === 0) return null;
    const periodNs = bNs - aNs;
    let best: DomainCapture | null = null;
    let bestNs = bNs + k * periodNs;
    for (const c of w.seen.values()) {
      if (typeof c === 'number' || c.snap === null || c.atNs <= aNs || c.atNs >= bNs) continue;
      const landingNs = c.atNs + Math.floor((this.boundNs - c.atNs) / periodNs) * periodNs;
      if (landingNs > bestNs) {
        best = c;
        bestNs = landingNs;
      }
    }
    return best === null ? null : { c: best, atNs: bestNs };
  }

  /**
   * The domain repeats from `a` to `b` (b now; `k` whole periods fit before the bound): when a state kept within that
   * period, put back and moved on by whole periods, lands later than k periods on and no later than the bound, the
   * domain is put there (snapshot.ts), and every other state kept within the period moved on with it.
   */
  private landInPart(w: Watch, a: DomainCapture, b: DomainCapture, k: number): boolean {
    const periodNs = b.atNs - a.atNs;
    const l = this.landing(w, a.atNs, b.atNs, k);
    if (l === null) return false;
    const best = l.c;
    const bestNs = l.atNs;
    const snap = best.snap as DomainSnapshot;
    const phaseNs = best.atNs;
    const j = Math.round((bestNs - phaseNs) / periodNs);
    const dom = w.domain;
    this.totals.periods += j;
    this.totals.skippedNs += bestNs - b.atNs;
    this.totals.jumps++;
    w.skippedNs += bestNs - b.atNs;
    w.misses = 0;
    // Where the domain lands: the state kept, j periods on (its counters by j times what a period adds, its stream
    // on j periods), put back.
    const delta = b.counters.map((v, i) => v - (a.counters[i] as number));
    const from = { stream: copyStream(a.stream), atNs: a.atNs };
    const stream = copyStream(best.stream);
    carryStream(from.stream, b.stream, stream, j, periodNs);
    restoreSnapshot(
      dom,
      snap,
      bestNs,
      best.counters.map((v, i) => v + j * (delta[i] as number)),
    );
    this.u.host.log.jump(dom.e.idx, stream, j, periodNs, this.u.host.sched.nowNs);
    // The state there read again (its counters as the engine holds them, wrapped at their widths), restorable with the
    // same snapshot; every other state kept within the period moved on to one period before the domain next passes it
    // (those before the landing's point j periods, those after it j − 1), its counters from the landing's.
    const landing = dom.capture(bestNs, w.skippedNs);
    if (!sameKey(landing.key, best.key)) {
      throw new Error(`fast model: engine ${dom.e.idx}'s state put back is not the one kept (at ${bestNs} ns)`);
    }
    landing.snap = snap;
    for (const [h2, c] of w.seen) {
      if (c === best) {
        w.seen.set(h2, landing);
        continue;
      }
      const at = typeof c === 'number' ? c : c.atNs;
      if (at < from.atNs || at >= b.atNs) continue;
      const k = at <= phaseNs ? j : j - 1;
      if (typeof c === 'number') w.seen.set(h2, c + k * periodNs);
      else Domain.carryFrom(c, best, landing, k - j, delta, from, b, k, w.skippedNs);
    }
    return true;
  }
}

/**
 * After a skip of k periods from `a` to `b` (the domain exactly periodic from `a`, desc_avail included): every other
 * state kept from within that period is moved on k periods too (Domain.carry), and every hash first seen in it, so
 * that after the next sample the engine is skipped again at the first watched interrupt whose state it kept, rather
 * than after stepping up to a whole period back to the state it landed in.
 */
function carryPhases(w: Watch, h: number, a: DomainCapture, b: DomainCapture, landing: DomainCapture, k: number): void {
  const shiftNs = k * (b.atNs - a.atNs);
  for (const [h2, c] of w.seen) {
    if (h2 === h) continue;
    if (typeof c === 'number') {
      if (c >= a.atNs && c < b.atNs) w.seen.set(h2, c + shiftNs);
    } else if (c.atNs >= a.atNs && c.atNs < b.atNs) Domain.carry(c, a, b, landing, k, w.skippedNs);
  }
}

function sameKey(x: readonly number[], y: readonly number[]): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** The engine's domain as the last scan found it, restorable (snapshot.ts). */
function snapshotOf(w: Watch): DomainSnapshot {
  w.snapshots++;
  return w.domain.snapshot();
}

/**
 * The states kept by `w` filed under their cheap hash with desc_avail (Domain.withAvail), those whose new hash the
 * watch's mask skips dropped, as are the instants of hashes seen once (their desc_avail is not known).
 */
function rekeyWithAvail(w: Watch): void {
  const kept = [...w.seen.entries()];
  w.seen.clear();
  w.kept = 0;
  w.misses = 0;
  w.copied = 0;
  for (const [h, c] of kept) {
    if (typeof c === 'number') continue;
    const h2 = Domain.withAvail(h, c.descAvail);
    if ((h2 & w.mask) !== 0) continue;
    if (!w.seen.has(h2)) w.kept++;
    w.seen.set(h2, c);
    w.copied += c.key.length;
  }
}

/** Watch the engine at half as many interrupts: one more hash bit must be clear; forget the states that fail it. */
function thin(w: Watch): void {
  w.mask = Math.min(w.mask * 2 + 1, 0xffff);
  w.kept = 0;
  w.misses = 0;
  w.copied = 0;
  w.fresh = 0;
  for (const [h, c] of w.seen) {
    if ((h & w.mask) !== 0) w.seen.delete(h);
    else if (typeof c !== 'number') w.kept++;
  }
}
