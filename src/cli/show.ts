// `show <engine>`: one engine in full, with CTRL, STATUS and ENG_ERR_STATUS decoded (SEND_DMA_* per-engine CSRs, chip_registers.h; SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h).
import type { EngineSample, LinkState, UnitInfo } from '../backend.js';
import { UNSETTLED_REASONS, unsettled } from '../monitor/observation.js';
import type { EngineRound, EngineWaiters, Round, UnitRound } from '../monitor/round.js';
import { ageText } from '../monitor/words.js';
import type { Classification } from '../progress/classify.js';
import { ctrlNames, decodeEngErr, decodeStatus } from '../progress/csr.js';
import { inProcessFor } from '../progress/driver.js';
import { freeCount, inFlight, scheduleThreshold } from '../progress/ring.js';
import type { CommandSpec } from './context.js';
import { engineJson, verdictJson } from './engine-json.js';
import { findingJson, findingLines } from './finding-lines.js';
import { flavourJson, flavourPhrase } from './flavour.js';
import { keyValues } from './format.js';
import type { Paint } from './io.js';
import { linkJson, linkPhrase, mainPort, portsHeader, portsJson } from './link.js';
import { commandMonitor, judgedRound, provenanceJson, roundStatus, sayWarnings, stallOptions, withStallMs } from './observe.js';
import { watchForStop } from './pace.js';
import { causeJson, portCounterLines, portCountersJson, settingsJson, settingsLine } from './port-view.js';
import { documentStamp, stamped } from './stamp.js';
import { engineArg, withBackend } from './units.js';
import { byEngine, waiterJson, waiterVerdictCell, whoCell } from './waiters.js';
import { verdictCell } from './watch-screen.js';

const hx = (v: bigint | null | undefined) => (v === null || v === undefined ? '-' : `0x${v.toString(16)}`);

/**
 * The verdict line of `show`, as watch says it: the classifier's answer (STRANDED when a waiter on the engine is), how
 * long a stuck head has stood (a lower bound where marked), and, when what was observed could not settle it, so.
 */
function verdictText(s: EngineSample, c: Classification, paint: Paint, w: EngineWaiters | null): string {
  const stuck = c.stuckSinceMs === null ? '' : `, head still for ${ageText(s.timeMs - c.stuckSinceMs, c.stuckAtLeast)}`;
  const open =
    c.verdict === 'unknown' && (UNSETTLED_REASONS.has(c.reason) || c.reason === 'single-instant-capture')
      ? "; not judged from what was observed here: 'hfi1-sdma health' watches 2 × --stall-ms and carries its observation between runs"
      : '';
  return `${verdictCell(c, paint, w ?? {})}${stuck}${open}`;
}

/** The `show` text of one sample (with its verdict, when judged). */
export function renderShow(
  s: EngineSample,
  info: UnitInfo,
  paint: Paint,
  link: LinkState | string | null = null,
  verdict: Classification | null = null,
  waiters: EngineWaiters | null = null,
): string {
  const pairs: [string, string][] = [
    ['engine', `${info.name} sdma${s.engine}${info.pci ? ` (${info.pci})` : ''}`],
    ['unit', `${info.flavour.module}  ${flavourPhrase(info)}`],
    ['link', (typeof link === 'string' ? link || null : linkPhrase(link)) ?? '-'],
    ...(verdict ? ([['verdict', verdictText(s, verdict, paint, waiters)]] as [string, string][]) : []),
    ['state', s.gone ? paint('red', 'device gone: registers read all-ones') : (s.state ?? 'unknown (no sdes)')],
    ['irq cpu', s.cpu === null ? '-' : String(s.cpu)],
    ['vl', s.vl === null ? '-' : String(s.vl)],
    ['user cpu_list', s.cpuList ?? '-'],
    ['sources', s.sources.join(', ') || 'none'],
  ];
  const c = s.csr;
  if (c && !s.gone) {
    const st = decodeStatus(c.status);
    const stNames = [
      st.engHalted ? 'ENG_HALTED' : '',
      st.engCleanedUp ? 'ENG_CLEANED_UP' : '',
      ...st.otherBits.map((b) => `bit${b}`),
    ].filter(Boolean);
    const errs = decodeEngErr(c.errStatus);
    pairs.push(
      ['CTRL', `${hx(c.ctrl)} ${ctrlNames(c.ctrl, info.flavour.chip).join('|') || '(none)'}`],
      ['STATUS', `0x${c.status.toString(16).padStart(16, '0')} ${stNames.join('|') || '(none)'}`],
      [
        'ENG_ERR_STATUS',
        `${hx(c.errStatus)} ${errs.map((e) => `${e.name}(${e.bit}${e.halts ? ', halts' : ''})`).join(' ') || '(none)'}`,
      ],
      ['T(HW) / H(HW)', `${c.hwTail} / ${c.hwHead}`],
      ['H(D) head_dma', c.headDma === null ? '- (host memory; needs sdes)' : String(c.headDma)],
      ['DM memory', hx(c.memory)],
      ['GL len_gen', hx(c.lenGen)],
      ['R reload_cnt', `${hx(c.reloadCnt)} (${c.reloadCnt} core clocks)`],
      ['SLC check_slid', hx(c.checkSlid)],
    );
    if (c.descFetchedCnt !== null) pairs.push(['desc fetched', String(c.descFetchedCnt)]);
  }
  const w = s.sw;
  if (w) {
    const inflight = inFlight(w.descqHead, w.descqTail);
    pairs.push(
      ['DT / DH', `${w.descqTail} / ${w.descqHead} (free-running)`],
      ['T(SW) / H(SW)', `${w.swTail} / ${w.swHead} (slots)`],
      ['TXT / TXH', `${w.txTail} / ${w.txHead} (${(w.txTail - w.txHead) & 0xffff} txreqs outstanding)`],
      ['in flight', `${inflight} of ${info.descqCnt - 1}`],
      ['free', `${freeCount(info.descqCnt, w.descqHead, w.descqTail)}`],
      [
        'progress schedule',
        `in-process ${inProcessFor(info.flavour.driver, info.descqCnt, w.descqHead, w.descqTail)} vs threshold ${scheduleThreshold(info.descqCnt)} (${info.flavour.driver === 'upstream' ? 'in flight + 1' : 'in flight'}, as ${info.flavour.driver} counts it)`,
      ],
      ['LIS last_status', hx(w.lastStatus)],
      ['AHGI ahg_bits', hx(w.ahgBits)],
      ['FLNE', w.flushListNonEmpty ? paint('yellow', '1 (txreqs awaiting ABORTED completion)') : '0'],
      ['DQF', `${w.descqFullCount} (placements that found the ring full)`],
    );
  }
  pairs.push(['seq', s.seq === null ? '-' : `${s.seq} (${s.seqSource})`]);
  pairs.push([
    'engine errors',
    s.counters && !s.gone
      ? `${s.counters.errCount} since driver load (SDMAErrCt; a halting error recovers within a millisecond, so the count shows what the bits no longer do)`
      : '-',
  ]);
  if (s.counters) {
    const k = s.counters;
    pairs.push(
      ['interrupts', `int ${k.sdmaInt}, progress ${k.progressInt}, idle ${k.idleInt}, errors ${k.errCount}`],
      ['desc fetched (ctr)', String(k.descFetched)],
    );
  }
  return keyValues(pairs);
}

export const showCommand: CommandSpec = {
  command: 'show <engine>',
  describe: 'one engine in full: every field, CTRL/STATUS/ERR bits decoded',
  builder: (y) =>
    withStallMs(y)
      .positional('engine', { type: 'string', describe: 'engine number' })
      .example('$0 show 3', 'engine 3 of the first unit'),
  async run(args, ctx) {
    const judging = stallOptions(args.stallMs);
    return withBackend(ctx, async (backend) => {
      const monitor = commandMonitor(backend, ctx, judging);
      const first = await monitor.round();
      const u = first.units[0] as UnitRound;
      const engine = engineArg(args.engine, u.info);
      const stop = watchForStop();
      let round: Round;
      try {
        // Observed as health observes, until this engine and its waiters are judged.
        round = await judgedRound(monitor, ctx, stop, (r) => engineJudged(r, u.info.name, engine), first);
      } finally {
        stop.dispose();
      }
      sayWarnings(ctx.io, round);
      const unit = round.units.find((x) => x.info.name === u.info.name) ?? u;
      const e = unit.engines.find((x) => x.sample.engine === engine);
      if (!e) return roundStatus(ctx.io, round) || 69;
      const mine = byEngine(unit.waiters.judgements.filter((j) => j.waiter.engine === engine));
      // The unit's findings that concern this engine: its own, and the unit's.
      const findings = round.findings.filter((f) => f.unit === unit.info.name && (f.engine === engine || f.engine === null));
      if (ctx.global.json) {
        const s = e.sample;
        const errCount = s.counters && !s.gone ? Number(s.counters.errCount) : null;
        const doc = stamped(documentStamp(backend, ctx), {
          backend: round.provenance.backend,
          provenance: provenanceJson(round.provenance),
          ...engineJson(s, unit.info),
          ...verdictJson(s, e.verdict),
          errCount,
          link: linkJson(mainPort(unit.ports)),
          ...flavourJson(unit.info),
          links: portsJson(unit.ports),
          cause: causeJson(e.cause),
          portCounters: unit.portCounters.map(portCountersJson),
          ...(unit.info.settings ? { settings: settingsJson(unit.info.settings) } : {}),
          waiters: e.waiters === null ? null : mine.map((j) => waiterJson(j, unit.waiters.timeMs ?? 0)),
          findings: findings.map(findingJson),
        });
        ctx.io.stdout(`${JSON.stringify(doc)}\n`);
      } else {
        ctx.io.stdout(
          renderShow(e.sample, unit.info, ctx.paint, portsHeader(unit.ports).replace(/^link /, ''), e.verdict, e.waiters) +
            (e.cause ? `  cause      ${e.cause.cause}: ${e.cause.why}\n` : '') +
            portCounterLines(unit.portCounters) +
            settingsLine(unit.info.settings) +
            waitersText(unit, e, mine, ctx.paint) +
            findingLines(findings, ctx.paint),
        );
      }
      return roundStatus(ctx.io, round);
    });
  },
};

/** Whether engine `engine` of unit `name` is judged in `round`, and none of its waiters (nor a writer of no known engine) is being confirmed. */
function engineJudged(round: Round, name: string, engine: number): boolean {
  const u = round.units.find((x) => x.info.name === name);
  if (!u) return true;
  const e = u.engines.find((x) => x.sample.engine === engine);
  if (e && unsettled(e)) return false;
  return !u.waiters.judgements.some((j) => j.reason === 'confirming' && (j.waiter.engine === engine || j.waiter.engine === null));
}

/** The engine's waiters under `show`: one line each with its verdict, or why none can be listed. */
function waitersText(
  u: UnitRound,
  e: EngineRound,
  mine: readonly import('../progress/strand.js').WaiterJudgement[],
  paint: Paint,
): string {
  const head = `waiters on ${u.info.name} sdma${e.sample.engine}:`;
  if (e.waiters === null) return `${head} not visible here (hfi1-sdma waiters says why)\n`;
  if (mine.length === 0) return `${head} none\n`;
  const now = u.waiters.timeMs ?? 0;
  const lines = mine.map(
    (j) =>
      `  ${whoCell(j)}  ${j.waiter.waitsFor} for ${ageText(now - j.firstSeenMs, j.ageAtLeast)}  ${waiterVerdictCell(j, paint)}\n`,
  );
  return `${head}\n${lines.join('')}`;
}
