// `waiters [engine]`: who sleeps waiting for ring space, on which engine, for how long, and the
// stranded-waiter verdict, from a few samples spanning --strand-ms (WaitersJson, docs/json.md).
// Exit 0 whatever the verdicts (health is the alerting path; scripts test `.stranded` in the JSON);
// 69 when no selected unit can list waiters, or a unit is gone.
import type { Argv } from 'yargs';
import type { IpoibQueueEvidence, QpOwner } from '../backend.js';
import { EXIT_CODES } from '../errors.js';
import type { FindingKindName } from '../monitor/codes.js';
import { ipoibStuckNow } from '../monitor/findings-ports.js';
import type { Monitor } from '../monitor/monitor.js';
import { confirming } from '../monitor/observation.js';
import { nextInstant } from '../monitor/pace.js';
import type { Round, UnitRound } from '../monitor/round.js';
import { seesWaiters } from '../monitor/waiters.js';
import { ownerText, whoText } from '../monitor/words.js';
import { countVerdicts, STRAND_SAMPLES, type WaiterJudgement } from '../progress/strand.js';
import { parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { findingJson, findingLines } from './finding-lines.js';
import { table } from './format.js';
import type { Paint } from './io.js';
import { commandMonitor, judgedRound, provenanceJson, provenanceText, roundStatus, sayWarnings } from './observe.js';
import { watchForStop } from './pace.js';
import { documentStamp, stamped } from './stamp.js';
import { engineArg, withBackend } from './units.js';
import { invisibleLines, strandMsArg } from './waiters-observe.js';
import { shortDuration } from './watch-screen.js';

/** The kinds of finding about waiters, which `waiters` prints under its table. */
const WAITER_FINDINGS: ReadonlySet<FindingKindName> = new Set<FindingKindName>([
  'stranded',
  'probable',
  'probableShort',
  'psmStall',
  'orphanedWaiters',
  'errQp',
  'ipoibStuck',
]);

/** Who a waiter is, as the table names it. */
export function whoCell(j: WaiterJudgement): string {
  return whoText(j.waiter);
}

/**
 * The verdict as the table shows it, coloured by severity. An IPoIB queue the netdev watchdog keeps timing out is
 * STUCK, whatever the strand rule says of it yet: that is what health's SD207 says of it.
 */
export function waiterVerdictCell(j: WaiterJudgement, paint: Paint, nowMs: number | null = null): string {
  if (ipoibStuckNow(j.waiter, nowMs)) return paint(['bold', 'red'], 'STUCK (WATCHDOG-TIMEOUT)');
  const text = `${j.verdict}${j.probable && j.verdict === 'stranded' ? '?' : ''} (${j.reason})`;
  switch (j.verdict) {
    case 'stranded':
      return paint(['bold', 'red'], text.toUpperCase());
    case 'orphaned':
    case 'psm-stall':
    case 'error-state':
      return paint('yellow', text);
    case 'unknown':
      return paint('dim', text);
    default:
      return text;
  }
}

/** The owner of a judged QP, where the monitor asked for it (stranded, orphaned, in ERR). */
function ownerOf(j: WaiterJudgement, owners: readonly QpOwner[]): QpOwner | null {
  const w = j.waiter;
  return w.kind === 'qp' ? (owners.find((o) => o.qpn === w.qpn) ?? null) : null;
}

/**
 * One waiter in WaitersJson: ageMs is how long the rule has seen it waiting, a lower bound where ageAtLeast; a
 * QP a finding names has its owner (null for the others, and where no source tells).
 */
export function waiterJson(j: WaiterJudgement, nowMs: number, owners: readonly QpOwner[] = []) {
  const { sinceMs, ...w } = j.waiter;
  const owner = ownerOf(j, owners);
  return {
    ...w,
    ...(w.kind === 'qp' ? { owner: owner ? { ...owner } : null } : {}),
    sinceMs,
    firstSeenMs: j.firstSeenMs,
    ageMs: Math.max(0, nowMs - j.firstSeenMs),
    ageAtLeast: j.ageAtLeast,
    verdict: j.verdict,
    reason: j.reason,
    probable: j.probable,
    holdingSinceMs: j.holdingSinceMs,
    episodes: j.episodes,
  };
}

/** Waiters in the order an operator reads them: by engine (unknown last), then stranded first, then who. */
export function byEngine(js: readonly WaiterJudgement[]): WaiterJudgement[] {
  const rank = (j: WaiterJudgement) => (j.verdict === 'stranded' ? 0 : j.verdict === 'waiting' ? 2 : 1);
  return [...js].sort(
    (a, b) => (a.waiter.engine ?? 999) - (b.waiter.engine ?? 999) || rank(a) - rank(b) || whoCell(a).localeCompare(whoCell(b)),
  );
}

function unitJson(u: UnitRound, shown: readonly WaiterJudgement[]) {
  const uw = u.waiters;
  return {
    unit: u.info.name,
    name: u.info.name,
    index: u.info.unit,
    listed: uw.listed,
    timeMs: uw.timeMs,
    visibility: uw.visibility,
    counts: countVerdicts(shown),
    psmStalls: uw.psmStalls,
    waiters: shown.map((j) => waiterJson(j, uw.timeMs ?? 0, uw.owners)),
  };
}

const HEADER = ['engine', 'kind', 'who', 'need', 'waiting for', 'verdict', 'owner'];

function rowsOf(u: UnitRound, shown: readonly WaiterJudgement[], paint: Paint): string[][] {
  return shown.map((j) => {
    const w = j.waiter;
    const age = `${j.ageAtLeast ? '≥' : ''}${shortDuration(Math.max(0, (u.waiters.timeMs ?? 0) - j.firstSeenMs))}`;
    return [
      `${u.info.name}/${w.engine ?? '?'}`,
      w.kind,
      whoCell(j),
      w.descriptorsNeeded === null ? '-' : String(w.descriptorsNeeded),
      `${w.waitsFor} (${age})`,
      waiterVerdictCell(j, paint, u.waiters.timeMs),
      w.kind === 'qp' && ownerOf(j, u.waiters.owners)
        ? ownerText(ownerOf(j, u.waiters.owners) ?? undefined)
        : w.kind === 'ipoib' && w.evidence
          ? ipoibEvidenceText(w.evidence, u.waiters.timeMs ?? 0)
          : '-',
    ];
  });
}

/** What the kernel said of an IPoIB queue, for the table: `no_desc 1, wait queued 1, timed out 2x, last 0.8s ago (kmsg)`. */
export function ipoibEvidenceText(ev: IpoibQueueEvidence, nowMs: number): string {
  const parts = [
    ev.noDesc === null ? null : `no_desc ${ev.noDesc}`,
    ev.waitQueued === null ? null : `wait queued ${ev.waitQueued ? 1 : 0}`,
    ev.timeouts === null ? null : `timed out ${ev.timeouts}x`,
    ev.lastTimeoutMs === null ? null : `last ${shortDuration(Math.max(0, nowMs - ev.lastTimeoutMs))} ago`,
  ].filter((p): p is string => p !== null);
  return `${parts.join(', ') || 'seen'} (${ev.source})`;
}

/** Where an owner comes from, as the notes say it. */
const OWNER_SOURCE: Readonly<Record<QpOwner['source'], string>> = {
  rdma: "the kernel's resource tracking, rdma res show qp",
  qp_stats: 'qp_stats',
  model: 'the emulator',
  recorded: 'the snapshot',
};

/** What the table's owners could not say for sure: one note per QP whose owner carries one. */
function ownerNotes(u: UnitRound, shown: readonly WaiterJudgement[]): string[] {
  const out: string[] = [];
  for (const j of shown) {
    const o = ownerOf(j, u.waiters.owners);
    if (o?.note) out.push(`owner of ${whoText(j.waiter)} (${OWNER_SOURCE[o.source]}): ${o.note}`);
  }
  return out;
}

/** Observe engines and waiters on from `first`: `count` rounds in all, `intervalMs` apart; on a recording, every instant. */
async function continueObserving(
  monitor: Monitor,
  ctx: CliContext,
  first: Round,
  count: number,
  intervalMs: number,
): Promise<Round> {
  const stop = watchForStop();
  let round = first;
  try {
    for (let i = 1; monitor.backend.recording || i < count; i++) {
      if (round.units.some((u) => u.status === 'gone')) break;
      if (!(await nextInstant(monitor.backend, intervalMs, ctx.io.sleep, stop.signal))) break;
      round = await monitor.round();
    }
  } finally {
    stop.dispose();
  }
  return round;
}

export const waitersCommand: CommandSpec = {
  command: 'waiters [engine]',
  describe: 'who waits for ring space on which engine, for how long, and whether it is stranded (a lost wake-up)',
  builder: (y: Argv) =>
    y
      .positional('engine', { type: 'string', describe: 'only the waiters of this engine' })
      .option('strand-ms', {
        type: 'string',
        default: '200',
        describe: 'a waiter asleep on a running, empty, quiet engine this long (and 3 samples) is stranded',
      })
      .option('count', {
        type: 'string',
        describe: 'samples to take (default: until no verdict is being confirmed, within the 2 s health watches)',
      })
      .option('interval-ms', { type: 'string', describe: 'time between samples (default: half of --strand-ms)' })
      .example('$0 waiters', 'every waiter of every engine, with its verdict')
      .example('$0 waiters 5 --json | jq .stranded', 'stranded waiters on engine 5, for scripts')
      .epilogue(
        'Verdicts: waiting, stranded (lost-wakeup, batch-limit), orphaned (engine not running), psm-stall (a PSM writer gives up after 1 s and retries: a repeated stall, not a hang), error-state, unknown. Exit 0 whatever the verdicts (use health for alerts); 69 when no unit can list its waiters or no kind of waiter can be seen.',
      ),
  async run(args, ctx) {
    const strandMs = strandMsArg(args.strandMs);
    const count = args.count === undefined ? STRAND_SAMPLES + 1 : parseIntArg('--count', args.count, 1, Number.MAX_SAFE_INTEGER);
    const intervalMs =
      args.intervalMs === undefined
        ? Math.max(1, Math.ceil(strandMs / 2))
        : parseIntArg('--interval-ms', args.intervalMs, 1, 3_600_000);
    return withBackend(ctx, async (backend) => {
      const monitor = commandMonitor(backend, ctx, { strandMs, waiters: 'strict' });
      const first = await monitor.round();
      const unit0 = first.units[0];
      const engine = args.engine === undefined || !unit0 ? null : engineArg(args.engine, unit0.info);
      let round: Round;
      if (args.count === undefined && args.intervalMs === undefined) {
        // As health observes, until no waiter's verdict is being confirmed (health's window at most).
        const stop = watchForStop();
        try {
          round = await judgedRound(monitor, ctx, stop, (r) => !confirming(r), first);
        } finally {
          stop.dispose();
        }
      } else round = count > 1 || backend.recording ? await continueObserving(monitor, ctx, first, count, intervalMs) : first;
      // The round's findings about waiters (those on the engine asked for), as health gives them.
      const findings = round.findings.filter((f) => WAITER_FINDINGS.has(f.kind) && (engine === null || f.engine === engine));
      sayWarnings(ctx.io, round);
      const up = round.units.filter((u) => u.status === 'up');
      const shownOf = (u: UnitRound) =>
        byEngine(u.waiters.judgements.filter((j) => engine === null || j.waiter.engine === engine));
      const stranded = up.reduce((n, u) => n + shownOf(u).filter((j) => j.verdict === 'stranded').length, 0);
      if (ctx.global.json) {
        const doc = stamped(documentStamp(backend, ctx), {
          backend: round.provenance.backend,
          provenance: provenanceJson(round.provenance),
          strandMs,
          engine,
          stranded,
          units: up.map((u) => unitJson(u, shownOf(u))),
          findings: findings.map(findingJson),
        });
        ctx.io.stdout(`${JSON.stringify(doc)}\n`);
      } else {
        let text = '';
        for (const u of up) {
          const shown = shownOf(u);
          text += `${u.info.name}  ${provenanceText(round.provenance)}  strand ≥ ${strandMs} ms\n`;
          if (!u.waiters.listed) continue;
          if (!seesWaiters(u.waiters)) text += 'no kind of waiter can be seen here (see the notes below)\n';
          else if (shown.length === 0)
            text += `no waiters${engine === null ? '' : ` on engine ${engine}`} (of the kinds visible)\n`;
          else {
            text += table(HEADER, rowsOf(u, shown, ctx.paint), new Set([3]));
            for (const l of ownerNotes(u, shown)) text += `note: ${l}\n`;
          }
        }
        text += findingLines(findings, ctx.paint);
        for (const l of invisibleLines(up)) text += `note: ${l}\n`;
        ctx.io.stdout(text);
      }
      const status = roundStatus(ctx.io, round);
      if (status !== 0) return status;
      if (up.every((u) => !u.waiters.listed)) {
        ctx.io.stderr(
          `hfi1-sdma: no selected unit can list its waiters (${backend.recording ? 'this snapshot holds no waiters' : `the ${backend.kind} backend does not read them`})\n`,
        );
        return EXIT_CODES.E_UNAVAILABLE;
      }
      if (!up.some((u) => seesWaiters(u.waiters))) {
        ctx.io.stderr(
          'hfi1-sdma: no kind of waiter can be seen on the selected units: see the notes for why and what would help\n',
        );
        return EXIT_CODES.E_UNAVAILABLE;
      }
      return 0;
    });
  },
};
