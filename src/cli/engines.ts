// `engines`: every engine of the selected unit(s) in one table or EngineJson (docs/json.md), with the
// findings of the observation under it (a stranded sender is named, not only counted).
import type { EngineSample, UnitInfo } from '../backend.js';
import type { Round, UnitRound } from '../monitor/round.js';
import { decodeEngErr } from '../progress/csr.js';
import { freeCount, inFlight } from '../progress/ring.js';
import type { CommandSpec } from './context.js';
import { engineJson, errorHistoryJson } from './engine-json.js';
import { findingLines } from './finding-lines.js';
import { flavourJson, flavourPhrase } from './flavour.js';
import { table } from './format.js';
import type { Paint } from './io.js';
import { contextJson, contextLines, linkJson, mainPort, portsHeader, portsJson } from './link.js';
import {
  commandMonitor,
  judgedRound,
  provenanceJson,
  provenanceText,
  roundStatus,
  sayWarnings,
  stallOptions,
  withStallMs,
} from './observe.js';
import { watchForStop } from './pace.js';
import { causeJson, portCountersJson, settingsJson, settingsLine } from './port-view.js';
import { documentStamp, stamped } from './stamp.js';
import { withBackend } from './units.js';
import { waitCell, waiterFields } from './waiters-observe.js';

const dash = '-';

/** A short state label coloured by health. */
export function stateCell(s: EngineSample, paint: Paint): string {
  if (s.gone) return paint('red', 'GONE');
  const st = s.state ?? dash;
  if (st === 's99_Running') return paint('green', st);
  if (st === 's20_Idle' || st === dash) return st;
  return paint('yellow', st);
}

/** Decoded error bits as a short list, halting ones marked with `!`. */
export function errorsCell(s: EngineSample, paint: Paint): string {
  if (!s.csr || s.gone) return dash;
  const bits = decodeEngErr(s.csr.errStatus);
  if (bits.length === 0) return dash;
  return bits.map((b) => (b.halts ? paint('red', `${b.name}!`) : b.name)).join(',');
}

/** One row of the engines table. */
export function engineRow(s: EngineSample, info: UnitInfo, paint: Paint): string[] {
  const w = s.sw;
  const c = s.csr;
  const num = (v: number | bigint | null | undefined) => (v === null || v === undefined ? dash : String(v));
  return [
    `${info.name}/${s.engine}`,
    stateCell(s, paint),
    num(s.cpu),
    num(s.vl),
    w ? `${w.swHead}` : dash,
    c && !s.gone ? num(c.hwHead) : dash,
    w ? `${w.swTail}` : c && !s.gone ? num(c.hwTail) : dash,
    w ? String(inFlight(w.descqHead, w.descqTail)) : dash,
    w ? String(freeCount(info.descqCnt, w.descqHead, w.descqTail)) : dash,
    w ? String(w.descqFullCount) : dash,
    s.seq === null ? dash : String(s.seq),
    s.counters && !s.gone ? String(s.counters.errCount) : dash,
    errorsCell(s, paint),
  ];
}

export const ENGINE_HEADER = [
  'engine',
  'state',
  'cpu',
  'vl',
  'H(SW)',
  'H(HW)',
  'T(SW)',
  'inflight',
  'free',
  'DQF',
  'seq',
  'errs',
  'wait',
  'errors',
];
const RIGHT = new Set([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);

/** One unit in `engines --json`. */
function unitJson(u: UnitRound) {
  const info = u.info;
  return {
    unit: info.name,
    name: info.name,
    index: info.unit,
    ...flavourJson(info),
    descqCnt: info.descqCnt,
    status: u.status,
    link: linkJson(mainPort(u.ports)),
    links: portsJson(u.ports),
    ...(info.context ? { context: contextJson(info.context) } : {}),
    ...(info.settings ? { settings: settingsJson(info.settings) } : {}),
    portCounters: u.portCounters.map(portCountersJson),
    engines: u.engines.map((e) => ({
      ...engineJson(e.sample, info),
      ...errorHistoryJson(e.verdict),
      verdict: e.verdict.verdict,
      reason: e.verdict.reason,
      cause: causeJson(e.cause),
      owner: info.settings?.bulkServiceEngines.includes(e.sample.engine) ? 'bulksvc' : 'sdma',
      ...waiterFields(e),
    })),
  };
}

/** The text of one unit: its header, its context and the table. */
function unitText(u: UnitRound, round: Round, paint: Paint): string {
  const info = u.info;
  const samples = u.engines.map((e) => e.sample);
  const srcs = [...new Set(samples.flatMap((s) => s.sources))].join(', ') || 'none';
  const ports = portsHeader(u.ports);
  let text = `${info.name}${info.pci ? ` (${info.pci})` : ''}${ports ? `  ${ports}` : ''}  ${flavourPhrase(info)}  descq_cnt ${info.descqCnt}  ${provenanceText(round.provenance)}  sources ${srcs}\n`;
  text += contextLines(info.context);
  text += settingsLine(info.settings);
  if (u.status === 'failed') return `${text}  not read: ${u.problem ?? 'unknown error'}\n`;
  text += table(
    ENGINE_HEADER,
    u.engines.map((e) => {
      const row = engineRow(e.sample, info, paint);
      const cell = waitCell(e);
      row.splice(row.length - 1, 0, cell.endsWith('!') ? paint(['bold', 'red'], cell) : cell);
      return row;
    }),
    RIGHT,
  );
  return text;
}

export const enginesCommand: CommandSpec = {
  command: 'engines',
  describe: 'all engines: state, cpu, vl, heads, tail, in flight, free, DQF, error bits; the link and the unit context',
  builder: (y) =>
    withStallMs(y).example('$0 engines', 'the table').example('$0 --backend emu engines --json', 'EngineJson of the emulator'),
  async run(args, ctx) {
    const judging = stallOptions(args.stallMs);
    return withBackend(ctx, async (backend) => {
      const monitor = commandMonitor(backend, ctx, judging);
      const stop = watchForStop();
      let round: Round;
      try {
        round = await judgedRound(monitor, ctx, stop);
      } finally {
        stop.dispose();
      }
      sayWarnings(ctx.io, round);
      if (ctx.global.json) {
        const doc = stamped(documentStamp(backend, ctx), {
          backend: round.provenance.backend,
          provenance: provenanceJson(round.provenance),
          units: round.units.map(unitJson),
        });
        ctx.io.stdout(`${JSON.stringify(doc)}\n`);
      } else {
        const text = round.units.map((u) => unitText(u, round, ctx.paint)).join('');
        ctx.io.stdout(text + findingLines(round.findings, ctx.paint));
      }
      for (const f of round.findings) if (f.kind === 'reduced') ctx.io.stderr(`hfi1-sdma: ${f.text}\n`);
      return roundStatus(ctx.io, round);
    });
  },
};
