// `show <engine>`: one engine in full, with CTRL, STATUS and ENG_ERR_STATUS decoded (SEND_DMA_* per-engine CSRs, chip_registers.h; SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h).
import type { EngineSample, LinkState, UnitInfo } from '../backend.js';
import { ctrlNames, decodeEngErr, decodeStatus } from '../progress/csr.js';
import { inProcessFor } from '../progress/driver.js';
import { freeCount, inFlight, scheduleThreshold } from '../progress/ring.js';
import type { CommandSpec } from './context.js';
import { engineJson } from './engine-json.js';
import { flavourJson, flavourPhrase } from './flavour.js';
import { keyValues } from './format.js';
import type { Paint } from './io.js';
import { linkJson, linkPhrase, readLink } from './link.js';
import { goneStatus, WarningSayer } from './observe.js';
import { engineArg, sampleOne, singleUnit, withBackend } from './units.js';

const hx = (v: bigint | null | undefined) => (v === null || v === undefined ? '-' : `0x${v.toString(16)}`);

/** The `show` text of one sample. */
export function renderShow(s: EngineSample, info: UnitInfo, paint: Paint, link: LinkState | null = null): string {
  const pairs: [string, string][] = [
    ['engine', `${info.name} sdma${s.engine}${info.pci ? ` (${info.pci})` : ''}`],
    ['unit', `${info.flavour.module}  ${flavourPhrase(info)}`],
    ['link', linkPhrase(link) ?? '-'],
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
    y.positional('engine', { type: 'string', describe: 'engine number' }).example('$0 show 3', 'engine 3 of the first unit'),
  async run(args, ctx) {
    return withBackend(ctx, async (backend) => {
      const unit = await singleUnit(backend, ctx.global.unit);
      const engine = engineArg(args.engine, unit.info);
      const s = await sampleOne(unit, engine);
      const link = await readLink(unit);
      new WarningSayer(ctx.io).say([unit]);
      const errCount = s.counters && !s.gone ? Number(s.counters.errCount) : null;
      ctx.io.stdout(
        ctx.global.json
          ? `${JSON.stringify({ backend: backend.kind, ...engineJson(s, unit.info.descqCnt), errCount, link: linkJson(link), ...flavourJson(unit.info) })}\n`
          : renderShow(s, unit.info, ctx.paint, link),
      );
      return goneStatus(ctx.io, [{ unit, s }]);
    });
  },
};
