// The findings of a round: one line for each thing that deserves attention, with its code, the count it
// adds to, its severity under the default thresholds, the next step where there is one, and its age (a
// lower bound where it began before the first sample). health prints them, watch shows the worst, the
// exporter's alerts are the same conditions over series.
import type { PortLink, QpOwner, UnitInfo, Waiter } from '../backend.js';
import { isOperational } from '../progress/state.js';
import type { WaiterJudgement } from '../progress/strand.js';
import { traceEnableFix } from '../progress/waiters.js';
import {
  type CountName,
  FINDING_KINDS,
  type FindingCode,
  type FindingKindName,
  KIND_RANK,
  PROBABLE_HOLD_MS,
  SEVERITY_ORDER,
  type Severity,
} from './codes.js';
import { hostCauseText, offHost, portSideFindings } from './findings-ports.js';
import type { PortMark } from './ports.js';
import type { EngineRound, UnitRound } from './round.js';
import { ageText, portActive, portsText, whoText, whoWithOwner } from './words.js';

/** One finding. */
export interface Finding {
  readonly kind: FindingKindName;
  readonly code: FindingCode;
  readonly count: CountName | null;
  /** Under the default thresholds (health re-levels with its own). */
  readonly severity: Severity;
  readonly unit: string | null;
  readonly engine: number | null;
  readonly port: number | null;
  /** How much it adds to its count (engines, waiters, episodes; 1 for a unit or a port). */
  readonly weight: number;
  /** One line, naming the unit (and engine or port). */
  readonly text: string;
  /** What to do next, or null. */
  readonly action: string | null;
  /** How long it has held (ms), and whether that is a lower bound; null when not timed. */
  readonly ageMs: number | null;
  readonly ageAtLeast: boolean;
}

/** What findings need to remember across rounds (kept by the monitor, carried in its state). */
export interface FindingHistory {
  /** Consecutive rounds each engine (`unit/engine`) was in backpressure. */
  fullRounds: Map<string, number>;
  /** Ports (`unit/port`) seen ACTIVE. */
  activeSeen: Set<string>;
  /** Each port's (`unit/port`) link counters and when they last rose (ports.ts); absent in a state saved before them. */
  portMarks?: Map<string, PortMark>;
}

/** A fresh history. */
export function newFindingHistory(): FindingHistory {
  return { fullRounds: new Map(), activeSeen: new Set() };
}

/** Rounds of backpressure in a row that make a ring persistently full (health's five samples give four). */
export const FULL_ROUNDS = 4;

/** Update `h` with a round's units (before judging it). */
export function rememberRound(h: FindingHistory, units: readonly UnitRound[]): void {
  for (const u of units) {
    if (u.status !== 'up') continue;
    for (const e of u.engines) {
      const key = `${u.info.name}/${e.sample.engine}`;
      h.fullRounds.set(key, e.verdict.verdict === 'backpressure' ? (h.fullRounds.get(key) ?? 0) + 1 : 0);
    }
    for (const p of u.ports) if (portActive(p)) h.activeSeen.add(`${u.info.name}/${p.port}`);
  }
}

/** One finding of `kind` at `where`, with its line and the rest (exported for the port-side findings, findings-ports.ts). */
export function finding(
  kind: FindingKindName,
  where: { unit: string | null; engine?: number | null; port?: number | null },
  text: string,
  more: { weight?: number; action?: string | null; ageMs?: number | null; ageAtLeast?: boolean } = {},
): Finding {
  const k = FINDING_KINDS[kind];
  return {
    kind,
    code: k.code,
    count: k.count,
    severity: k.severity,
    unit: where.unit,
    engine: where.engine ?? null,
    port: where.port ?? null,
    weight: more.weight ?? 1,
    text,
    action: more.action ?? null,
    ageMs: more.ageMs ?? null,
    ageAtLeast: more.ageAtLeast ?? false,
  };
}

/** The gone device's next step. */
export function goneAction(info: Pick<UnitInfo, 'pci' | 'flavour'>): string {
  const pci = info.pci ? ` and 'lspci -s ${info.pci}'` : '';
  return `check 'dmesg'${pci}, then reload the ${info.flavour.module} driver or reboot`;
}

function engineFindings(u: UnitRound, e: EngineRound, h: FindingHistory, out: Finding[]): void {
  const { sample: s, verdict: c } = e;
  const name = u.info.name;
  const at = { unit: name, engine: s.engine };
  const where = `${name} sdma${s.engine}`;
  // A stall the fabric or the link causes is said by unit and port (findings-ports.ts), never as the host's.
  if (c.verdict === 'stalled' && !offHost(e)) {
    const age = c.stuckSinceMs === null ? null : s.timeMs - c.stuckSinceMs;
    out.push(
      finding(
        'stalled',
        at,
        `${where} stalled (${c.reason})${age === null ? '' : ` for ${ageText(age, c.stuckAtLeast)}`}: ${c.inFlight ?? '?'} descriptors in flight and the head does not move${hostCauseText(e)}`,
        {
          ageMs: age,
          ageAtLeast: c.stuckAtLeast,
          action:
            c.reason === 'retirement-lost'
              ? `the chip is ahead of the driver: check that sdma${s.engine}'s interrupts arrive (/proc/interrupts); capture 'hfi1-sdma snapshot' before any reset`
              : `capture 'hfi1-sdma snapshot' before any reset; check dmesg for engine errors and PCIe AER, and the link`,
        },
      ),
    );
  }
  if (c.verdict === 'halted') {
    const bits = c.errors.length ? `, errors ${c.errors.map((b) => b.name).join(',')}` : '';
    out.push(
      finding('halted', at, `${where} halted (${c.reason}): state ${s.state ?? '?'}${bits}`, {
        action: `decode the kernel's engine-error lines with 'hfi1-sdma log'; capture 'hfi1-sdma snapshot' before a driver reload`,
      }),
    );
  }
  if ((h.fullRounds.get(`${name}/${s.engine}`) ?? 0) >= FULL_ROUNDS) {
    out.push(
      finding(
        'full',
        at,
        `${where} ring persistently full: descq_full_count rose in each of the last ${FULL_ROUNDS} samples while the engine retired (a saturated link looks so)`,
      ),
    );
  }
  if (c.orphanedWork)
    out.push(finding('orphanedWork', at, `${where} flush list non-empty beyond the recovery window: orphaned txreqs`));
  const soft = c.errors.filter((b) => !b.halts);
  if (soft.length && c.verdict !== 'halted') {
    out.push(finding('correctable', at, `${where} correctable error bits: ${soft.map((b) => b.name).join(',')}`));
  }
  if (c.errCountRise > 0) {
    const bits = c.lastErrors.length
      ? `error bits last seen: ${c.lastErrors.map((b) => b.name).join(',')}`
      : 'the bits cleared before any sample showed them';
    const halts = c.halts > 0 ? `, ${c.halts} halt(s) and ${c.recoveries} recovery(ies) seen` : '';
    out.push(
      finding(
        'errors',
        at,
        `${where} engine errors rose by ${c.errCountRise} while watched (SDMAErrCt ${c.errCount}${halts}); ${bits}`,
        {
          action: `decode the kernel's engine-error lines with 'hfi1-sdma log'`,
        },
      ),
    );
  }
}

/** Not running without a halt: an operational idle state (s20_Idle: no port ACTIVE), or CTRL.ENABLE off without sdes. */
function notRunning(e: EngineRound): boolean {
  const s = e.sample;
  if (s.gone || e.verdict.verdict === 'halted') return false;
  if (s.state !== null) return isOperational(s.state) && s.state !== 's99_Running';
  return s.csr !== null && (s.csr.ctrl & 0x1n) === 0n;
}

function idleCause(ports: readonly PortLink[], all: boolean): string {
  if (ports.length === 0 || ports.every((p) => p.state === null)) {
    return all ? 'SDMA disabled: no port is ACTIVE, or the engines were stopped' : 'no port is ACTIVE, or the engine is stopped';
  }
  const active = ports.filter(portActive);
  if (active.length > 0) {
    return `${active.map((p) => `port ${p.port}`).join(' and ')} ${active.length > 1 ? 'are' : 'is'} ACTIVE, so the engine${all ? 's were' : ' was'} stopped`;
  }
  return `SDMA stays disabled while no port is ACTIVE: ${portsText(ports)}`;
}

/** The ports were read and none is ACTIVE: that explains every idle engine of the unit. */
function noPortActive(u: UnitRound): boolean {
  const known = u.ports.filter((p) => p.state !== null);
  return known.length > 0 && !known.some(portActive);
}

function unitEngineFindings(u: UnitRound, h: FindingHistory, out: Finding[]): void {
  const name = u.info.name;
  // With no port ACTIVE the unit's port finding names the cause of its idle engines, once.
  const idle = noPortActive(u) ? [] : u.engines.filter(notRunning);
  const states = [...new Set(idle.map((e) => e.sample.state ?? 'CTRL.ENABLE off'))];
  if (idle.length === u.engines.length && idle.length > 1 && states.length === 1) {
    out.push(
      finding(
        'notRunning',
        { unit: name },
        `${name} all ${idle.length} engines in ${states[0]}, not running (${idleCause(u.ports, true)})`,
        {
          weight: idle.length,
        },
      ),
    );
  } else {
    for (const e of idle) {
      out.push(
        finding(
          'notRunning',
          { unit: name, engine: e.sample.engine },
          `${name} sdma${e.sample.engine} in ${e.sample.state ?? 'CTRL.ENABLE off'}, not running (${idleCause(u.ports, false)})`,
        ),
      );
    }
  }
  for (const e of u.engines) engineFindings(u, e, h, out);
  const blind = u.engines.filter((e) => e.verdict.verdict === 'unknown' && e.verdict.reason === 'no-ring-state');
  if (blind.length > 0) {
    out.push(
      finding(
        'unjudged',
        { unit: name },
        `${name} ${blind.length} engine(s) cannot be judged (${blind.map((e) => `sdma${e.sample.engine}`).join(',')}): their rings (heads, tails, state) are not readable here and their interrupt counts did not move, so an idle engine and one stopped with work in flight look alike`,
        { weight: blind.length, action: 'read debugfs sdes or the BAR (as root) to judge them' },
      ),
    );
  }
}

function portFindings(u: UnitRound, h: FindingHistory, out: Finding[]): void {
  const name = u.info.name;
  const known = u.ports.filter((p) => p.state !== null);
  if (known.length === 0) return;
  for (const p of known) {
    if (!portActive(p) && h.activeSeen.has(`${name}/${p.port}`)) {
      out.push(
        finding('portDown', { unit: name, port: p.port }, `${name} port ${p.port} went down: ${portsText([p])}, ACTIVE before`, {
          action: `check the cable and the switch port of port ${p.port}; 'opainfo' shows its physical state`,
        }),
      );
    }
  }
  if (!known.some(portActive)) {
    const idle = u.engines.filter(notRunning);
    const states = [...new Set(idle.map((e) => e.sample.state ?? 'CTRL.ENABLE off'))].join(', ');
    const engines =
      idle.length === 0 ? '' : `; ${idle.length === u.engines.length ? 'all ' : ''}${idle.length} engine(s) idle in ${states}`;
    out.push(
      finding(
        'noActivePort',
        { unit: name },
        `${name} has no ACTIVE port (${portsText(known)}): SDMA stays disabled, nothing is sent${engines}`,
        {
          action: "check the cables and switch ports; 'opainfo' shows each port's physical state",
        },
      ),
    );
  }
}

/**
 * What releases a stranded sender (any retirement on its engine, sdma_desc_avail in sdma.c): traffic on that engine,
 * which is the VL it serves (sysfs sdma<N>/vl) and the user CPUs mapped to it (cpu_list); or the end of its job
 * (destroying a QP takes it off the list, flush_qp_waiters in qp.c). Which sender the engine selection gives that
 * engine the tool cannot know: the VL and CPUs are where to look.
 */
function releaseAction(u: UnitRound, engine: number | null, w: Waiter): string {
  const kind = w.kind;
  const s = u.engines.find((e) => e.sample.engine === engine)?.sample;
  const where = [
    s?.vl !== null && s?.vl !== undefined ? `VL ${s.vl}` : null,
    s?.cpuList && s.cpuList !== 'empty' ? `user CPUs ${s.cpuList}` : null,
  ]
    .filter(Boolean)
    .join(', ');
  const job = kind === 'qp' ? `, or end ${jobOf(w, u.waiters.owners)} (destroying the QP frees it)` : '';
  return `run 'hfi1-sdma --unit ${u.info.name} waiters ${engine}' for the evidence and the owner; traffic on sdma${engine}${where ? ` (it serves ${where})` : ''} releases it${job}`;
}

/** The job that owns a QP, as an action names it, with what makes the owner uncertain. */
function jobOf(w: Waiter, owners: readonly QpOwner[]): string {
  const o = w.kind === 'qp' ? owners.find((x) => x.qpn === w.qpn) : undefined;
  if (!o || o.pid === null) return 'the job that owns the QP';
  const who = `the job of ${o.user ? `user ${o.user}, ` : ''}pid ${o.pid}${o.command ? ` (${o.command})` : ''}`;
  return o.source === 'qp_stats'
    ? `${who}, once confirmed (qp_stats names the creating thread, which may be gone or reused)`
    : who;
}

/** The strand findings of one waiter; certain ones count, probable ones once they held PROBABLE_HOLD_MS. */
function strandFinding(u: UnitRound, j: WaiterJudgement): Finding {
  const name = u.info.name;
  const w = j.waiter;
  const now = u.waiters.timeMs ?? 0;
  const ageMs = now - j.firstSeenMs;
  const age = ageText(ageMs, j.ageAtLeast);
  const at = { unit: name, engine: w.engine };
  const release =
    w.kind === 'qp'
      ? `nothing wakes it until traffic uses sdma${w.engine} or the QP is destroyed`
      : `nothing wakes it until traffic uses sdma${w.engine}`;
  if (!j.probable) {
    return finding(
      'stranded',
      at,
      `${name} sdma${w.engine} ${whoWithOwner(w, u.waiters.owners)} stranded (${j.reason}) for ${age}: asleep on a running, empty, quiet engine; ${release}`,
      {
        ageMs,
        ageAtLeast: j.ageAtLeast,
        action: releaseAction(u, w.engine, w),
      },
    );
  }
  const held = j.holdingSinceMs === null ? 0 : now - j.holdingSinceMs;
  const kind = held >= PROBABLE_HOLD_MS ? 'probable' : 'probableShort';
  return finding(
    kind,
    at,
    `${name} sdma${w.engine} ${whoWithOwner(w, u.waiters.owners)} probably stranded (${j.reason}) for ${age}: its printed engine is running, empty and quiet, but another engine of its VL was busy and short of room, so it may be waiting there`,
    {
      ageMs,
      ageAtLeast: j.ageAtLeast,
      action: `run 'hfi1-sdma --unit ${name} waiters ${w.engine}' again: it becomes certain once the busy engine retires with room`,
    },
  );
}

function waiterFindings(u: UnitRound, out: Finding[]): void {
  const name = u.info.name;
  const uw = u.waiters;
  for (const j of uw.judgements) if (j.verdict === 'stranded') out.push(strandFinding(u, j));
  if (uw.psmStalls > 0) {
    const writers = uw.judgements.filter((j) => j.verdict === 'psm-stall').map((j) => whoText(j.waiter));
    out.push(
      finding(
        'psmStall',
        { unit: name },
        `${name} ${uw.psmStalls} PSM writer stall(s) of up to 1 s on an idle unit (a lost wake-up; the writer gives up after 1 s and retries, so it is a repeated stall, not a hang)${writers.length ? `: ${writers.join(', ')}` : ''}`,
        { weight: uw.psmStalls },
      ),
    );
  }
  const unjudged = uw.judgements.filter((j) => j.waiter.kind === 'psm' && j.reason === 'unit-busy');
  if (unjudged.length > 0) {
    const trace = u.info.sources.find((s) => s.source === 'trace');
    const fix = trace?.readable
      ? 'the trace events are on but named no engine for them yet'
      : (trace?.fix ?? traceEnableFix(u.info.flavour.module));
    out.push(
      finding(
        'psmUnjudged',
        { unit: name },
        `${name}: ${unjudged.length} PSM writer(s) wait while engines of the unit are busy, each on an engine nothing here names: a lost wake-up among them (SD203) cannot be told from a wait for room; ${fix}`,
      ),
    );
  }
  const orphanedOn = new Map<number, number>();
  for (const j of uw.judgements) {
    if (j.verdict === 'orphaned' && j.waiter.engine !== null)
      orphanedOn.set(j.waiter.engine, (orphanedOn.get(j.waiter.engine) ?? 0) + 1);
  }
  for (const [engine, n] of orphanedOn) {
    const e = u.engines.find((x) => x.sample.engine === engine);
    // An engine already counted for orphaned txreqs is one orphaned engine, said once more here.
    out.push(
      finding(
        'orphanedWaiters',
        { unit: name, engine },
        `${name} sdma${engine} ${n} waiter(s) orphaned on an engine that is not running (${e?.sample.state ?? 'no state'}): they wait for a port or a restart`,
        { weight: e?.verdict.orphanedWork === true ? 0 : 1 },
      ),
    );
  }
  const errs = uw.judgements.filter((j) => j.verdict === 'error-state');
  if (errs.length) {
    out.push(
      finding(
        'errQp',
        { unit: name },
        `${name} ${errs.length} QP(s) in ERR left on a wait list (${errs.map((j) => whoWithOwner(j.waiter, uw.owners)).join(', ')}): harmless until destroyed`,
      ),
    );
  }
}

function visibilityFindings(u: UnitRound, out: Finding[]): void {
  const name = u.info.name;
  if (!u.waiters.listed) {
    const why = u.waiters.visibility[0]?.reason ?? 'this backend does not list waiters';
    out.push(finding('invisible', { unit: name }, `${name}: waiters not visible: ${why}`));
    return;
  }
  for (const v of u.waiters.visibility) {
    if (v.visible) continue;
    out.push(
      finding(
        'invisible',
        { unit: name },
        `${name}: ${v.kind} waiters not visible: ${v.reason ?? 'unknown'}${v.fix ? `; ${v.fix}` : ''}`,
      ),
    );
  }
}

/** Every finding of a round, worst first. `reduced(info)` names what a reduced view lacks (or null). */
export function findingsOf(
  units: readonly UnitRound[],
  vanished: readonly UnitInfo[],
  h: FindingHistory,
  reduced: (info: UnitInfo) => string | null = () => null,
): Finding[] {
  const out: Finding[] = [];
  for (const u of units) {
    const name = u.info.name;
    if (u.status === 'gone') {
      const gone = u.engines.filter((e) => e.sample.gone).length;
      const pci = u.info.pci ? ` (${u.info.pci})` : '';
      const what =
        gone > 0 ? `registers read all-ones on ${gone} of ${u.engines.length} engines` : (u.problem ?? 'its files vanished');
      out.push(
        finding('gone', { unit: name }, `${name}${pci} gone: ${what} (the adapter was reset or fell off the PCI bus)`, {
          action: goneAction(u.info),
        }),
      );
      continue;
    }
    if (u.status === 'failed') {
      out.push(
        finding('unreadable', { unit: name }, `${name} could not be read: ${u.problem ?? 'unknown error'}`, {
          action: "run 'hfi1-sdma doctor' to see which sources are readable here and why",
        }),
      );
      continue;
    }
    unitEngineFindings(u, h, out);
    portFindings(u, h, out);
    portSideFindings(u, h, out);
    waiterFindings(u, out);
    visibilityFindings(u, out);
    const r = reduced(u.info);
    if (r) out.push(finding('reduced', { unit: name }, r));
  }
  for (const info of vanished) {
    out.push(
      finding(
        'vanished',
        { unit: info.name },
        `${info.name}${info.pci ? ` (${info.pci})` : ''} vanished: the unit is no longer listed (its device fell off the bus or its driver was unloaded)`,
        {
          action: goneAction(info),
        },
      ),
    );
  }
  return sortFindings(out);
}

/** Worst first: severity, then kind, then unit and engine. */
export function sortFindings(fs: Finding[]): Finding[] {
  const sev = (f: Finding) => SEVERITY_ORDER.indexOf(f.severity);
  return fs.sort(
    (a, b) =>
      sev(a) - sev(b) ||
      (KIND_RANK.get(a.kind) ?? 0) - (KIND_RANK.get(b.kind) ?? 0) ||
      (a.unit ?? '').localeCompare(b.unit ?? '') ||
      (a.engine ?? -1) - (b.engine ?? -1),
  );
}
