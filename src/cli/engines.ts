// `engines`: every engine of the selected unit(s) in one table or EngineJson (docs/json.md).
import type { Backend, EngineSample, Unit, UnitInfo } from '../backend.js';
import { decodeEngErr } from '../progress/csr.js';
import { freeCount, inFlight } from '../progress/ring.js';
import { DEFAULT_STRAND_MS } from '../progress/strand.js';
import type { CommandSpec } from './context.js';
import { engineJson, errorHistoryJson } from './engine-json.js';
import { flavourJson, flavourPhrase } from './flavour.js';
import { table } from './format.js';
import type { Paint } from './io.js';
import { contextJson, contextLines, linkHeader, linkJson, readLink } from './link.js';
import { goneStatus, Observer, type Row, WarningSayer } from './observe.js';
import { watchForStop } from './pace.js';
import { missingSources, selectedUnits, withBackend } from './units.js';
import { type UnitWaiters, WaiterObserver, waitCell, waitCounts, waiterFields, waitKey } from './waiters-observe.js';

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

/**
 * The rows to show: one sample of every engine; on a recording of several instants, every
 * instant in turn (so halts and error counts seen along the way are known) and the last shown.
 */
async function observe(backend: Backend, units: Unit[]): Promise<{ rows: Row[]; uws: UnitWaiters[] }> {
  const observer = new Observer(backend, units, { stallMs: 1000 });
  const waiters = new WaiterObserver({ strandMs: DEFAULT_STRAND_MS });
  let rows = await observer.round();
  let uws = await waiters.round(units, rows);
  const recording = backend.recording;
  if (!recording) return { rows, uws };
  const stop = watchForStop();
  try {
    while (!stop.stopped() && (await recording.advance())) {
      rows = await observer.round();
      uws = await waiters.round(units, rows);
    }
  } finally {
    stop.dispose();
  }
  return { rows, uws };
}

export const enginesCommand: CommandSpec = {
  command: 'engines',
  describe: 'all engines: state, cpu, vl, heads, tail, in flight, free, DQF, error bits; the link and the unit context',
  builder: (y) => y.example('$0 engines', 'the table').example('$0 --backend emu engines --json', 'EngineJson of the emulator'),
  async run(_args, ctx) {
    return withBackend(ctx, async (backend) => {
      const units = await selectedUnits(backend, ctx.global.unit);
      const { rows, uws } = await observe(backend, units);
      const counts = waitCounts(uws);
      new WarningSayer(ctx.io).say(units);
      const out: object[] = [];
      let text = '';
      for (const unit of units) {
        const mine = rows.filter((r) => r.unit === unit);
        const uw = uws.find((x) => x.unit === unit);
        const samples = mine.map((r) => r.s);
        const info = unit.info;
        const link = await readLink(unit);
        out.push({
          unit: info.unit,
          name: info.name,
          ...flavourJson(info),
          descqCnt: info.descqCnt,
          link: linkJson(link),
          ...(info.context ? { context: contextJson(info.context) } : {}),
          engines: mine.map(({ s, c }) => ({
            ...engineJson(s, info.descqCnt),
            ...errorHistoryJson(c),
            ...waiterFields(uw, counts, unit, s.engine),
          })),
        });
        const srcs = [...new Set(samples.flatMap((s) => s.sources))].join(', ') || 'none';
        const linkPart = linkHeader(link);
        text += `${info.name}${info.pci ? ` (${info.pci})` : ''}${linkPart ? `  ${linkPart}` : ''}  ${flavourPhrase(info)}  descq_cnt ${info.descqCnt}  backend ${backend.kind}  sources ${srcs}\n`;
        text += contextLines(info.context);
        text += table(
          ENGINE_HEADER,
          samples.map((s) => {
            const row = engineRow(s, info, ctx.paint);
            row.splice(row.length - 1, 0, waitCell(uw, counts.get(waitKey(unit, s.engine))));
            return row;
          }),
          RIGHT,
        );
        const missing = missingSources(info);
        if (missing && backend.kind === 'hw') ctx.io.stderr(`hfi1-sdma: ${missing}\n`);
      }
      ctx.io.stdout(ctx.global.json ? `${JSON.stringify({ backend: backend.kind, units: out })}\n` : text);
      return goneStatus(ctx.io, rows);
    });
  },
};
