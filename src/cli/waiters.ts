// `waiters [engine]`: who sleeps waiting for ring space, on which engine, for how long, and the
// stranded-waiter verdict, from a few samples spanning --strand-ms (WaitersJson, docs/json.md).
// Exit 0 whatever the verdicts (health is the alerting path; scripts test `.stranded` in the JSON);
// 69 when no selected unit can list waiters, or a unit is gone.
import type { Argv } from 'yargs';
import type { Backend, Unit } from '../backend.js';
import { EXIT_CODES } from '../errors.js';
import { countVerdicts, STRAND_SAMPLES, type WaiterJudgement } from '../progress/strand.js';
import { parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { table } from './format.js';
import type { Paint } from './io.js';
import { goneStatus, Observer, type Row, WarningSayer } from './observe.js';
import { isFrozenCapture, nextInstant, watchForStop } from './pace.js';
import { engineArg, selectedUnits, withBackend } from './units.js';
import { invisibleLines, seesWaiters, strandMsArg, type UnitWaiters, WaiterObserver } from './waiters-observe.js';
import { shortDuration } from './watch-screen.js';

/** Who a waiter is, as the table names it. */
export function whoCell(j: WaiterJudgement): string {
  const w = j.waiter;
  switch (w.kind) {
    case 'qp':
      return `QP 0x${w.qpn.toString(16)} ${w.qpState ?? '?'}`;
    case 'psm':
      return `pid ${w.pid}${w.command ? ` ${w.command}` : ''}`;
    case 'ipoib':
      return `${w.netdev ?? '?'} txq ${w.txq ?? '?'}`;
  }
}

/** The verdict as the table shows it, coloured by severity. */
export function waiterVerdictCell(j: WaiterJudgement, paint: Paint): string {
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

/** One waiter in WaitersJson. */
export function waiterJson(j: WaiterJudgement, nowMs: number) {
  const { sinceMs, ...w } = j.waiter;
  return {
    ...w,
    sinceMs,
    ageMs: Math.max(0, nowMs - sinceMs),
    verdict: j.verdict,
    reason: j.reason,
    probable: j.probable,
    holdingSinceMs: j.holdingSinceMs,
    episodes: j.episodes,
  };
}

function unitJson(uw: UnitWaiters, shown: readonly WaiterJudgement[]) {
  const info = uw.unit.info;
  return {
    unit: info.unit,
    name: info.name,
    listed: uw.listed,
    timeMs: uw.timeMs,
    visibility: uw.visibility,
    counts: countVerdicts(shown),
    psmStalls: uw.psmStalls,
    waiters: shown.map((j) => waiterJson(j, uw.timeMs ?? 0)),
  };
}

const HEADER = ['engine', 'kind', 'who', 'need', 'waiting for', 'verdict'];

function rowsOf(uw: UnitWaiters, shown: readonly WaiterJudgement[], paint: Paint): string[][] {
  return shown.map((j) => {
    const w = j.waiter;
    const age = shortDuration(Math.max(0, (uw.timeMs ?? 0) - w.sinceMs));
    return [
      `${uw.unit.info.name}/${w.engine ?? '?'}`,
      w.kind,
      whoCell(j),
      w.descriptorsNeeded === null ? '-' : String(w.descriptorsNeeded),
      `${w.waitsFor} (${age})`,
      waiterVerdictCell(j, paint),
    ];
  });
}

/** Observe engines and waiters: `count` rounds `intervalMs` apart; on a recording, every instant. */
async function observe(backend: Backend, units: Unit[], ctx: CliContext, strandMs: number, count: number, intervalMs: number) {
  const engines = new Observer(backend, units, { stallMs: 1000 });
  const waiters = new WaiterObserver({ strandMs, frozen: isFrozenCapture(backend), strict: true });
  const stop = watchForStop();
  let rows: Row[] = [];
  let uws: UnitWaiters[] = [];
  try {
    for (let i = 0; backend.recording || i < count; i++) {
      if (i > 0 && !(await nextInstant(backend, ctx.io, intervalMs, stop))) break;
      rows = await engines.round();
      uws = await waiters.round(units, rows);
      if (rows.some((r) => r.s.gone)) break;
    }
  } finally {
    stop.dispose();
  }
  return { rows, uws };
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
      .option('count', { type: 'string', describe: `samples to take (default ${STRAND_SAMPLES + 1})` })
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
      const units = await selectedUnits(backend, ctx.global.unit);
      const engine = args.engine === undefined ? null : engineArg(args.engine, (units[0] as Unit).info);
      const { rows, uws } = await observe(backend, units, ctx, strandMs, count, intervalMs);
      new WarningSayer(ctx.io).say(units);
      const shownOf = (uw: UnitWaiters) => uw.judgements.filter((j) => engine === null || j.waiter.engine === engine);
      const stranded = uws.reduce((n, uw) => n + shownOf(uw).filter((j) => j.verdict === 'stranded').length, 0);
      if (ctx.global.json) {
        const doc = {
          backend: backend.kind,
          strandMs,
          engine,
          stranded,
          units: uws.map((uw) => unitJson(uw, shownOf(uw))),
        };
        ctx.io.stdout(`${JSON.stringify(doc)}\n`);
      } else {
        let text = '';
        for (const uw of uws) {
          const shown = shownOf(uw);
          text += `${uw.unit.info.name}  backend ${backend.kind}  strand ≥ ${strandMs} ms\n`;
          if (!uw.listed) continue;
          if (!seesWaiters(uw)) text += 'no kind of waiter can be seen here (see the notes below)\n';
          else if (shown.length === 0)
            text += `no waiters${engine === null ? '' : ` on engine ${engine}`} (of the kinds visible)\n`;
          else text += table(HEADER, rowsOf(uw, shown, ctx.paint), new Set([3]));
        }
        for (const l of invisibleLines(uws)) text += `note: ${l}\n`;
        ctx.io.stdout(text);
      }
      const gone = goneStatus(ctx.io, rows);
      if (gone !== 0) return gone;
      if (uws.every((uw) => !uw.listed)) {
        ctx.io.stderr(
          `hfi1-sdma: no selected unit can list its waiters (${backend.recording ? 'this snapshot holds no waiters' : `the ${backend.kind} backend does not read them`})\n`,
        );
        return EXIT_CODES.E_UNAVAILABLE;
      }
      if (!uws.some(seesWaiters)) {
        ctx.io.stderr(
          'hfi1-sdma: no kind of waiter can be seen on the selected units: see the notes for why and what would help\n',
        );
        return EXIT_CODES.E_UNAVAILABLE;
      }
      return 0;
    });
  },
};
