// `fit`: would N descriptors fit in an engine's ring now (sdma_descq_freecnt, sdma.h; sdma_engine_progress_schedule, sdma.h; struct sdma_txreq, sdma_txreq.h)?
import type { Argv } from 'yargs';
import { Hfi1SdmaError, usageError } from '../errors.js';
import { MAX_DESC } from '../progress/constants.js';
import { type DriverName, scheduleInFlight } from '../progress/driver.js';
import { type FitReport, fitReport, slot } from '../progress/ring.js';
import { parseDescqCnt, parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { type Chosen, chosenNote } from './flavour-default.js';
import { keyValues } from './format.js';
import { goneStatus, WarningSayer } from './observe.js';
import { engineArg, singleUnit, unreadableCode } from './units.js';

const U32_MAX = 0xffff_ffff;

/** The fit report plus the headroom to a maximal (MAX_DESC) packet. */
export interface FitJson extends FitReport {
  maxDescHeadroom: number;
}

/** Compute `fit` on explicit numbers, refusing counters that no driver could produce. */
export function fitOnNumbers(
  descqCnt: number,
  head: number,
  tail: number,
  numDesc: number,
  driver: DriverName = 'upstream',
): FitJson {
  const r = fitReport(descqCnt, head, tail, numDesc, driver);
  if (r.inFlight > descqCnt - 1) {
    throw usageError(
      `tail − head = ${r.inFlight} (u32) exceeds descq_cnt − 1 = ${descqCnt - 1}: the driver never has more than ${descqCnt - 1} descriptors in flight; check --head and --tail (free-running counts, DH and DT in debugfs sdes)`,
    );
  }
  return { ...r, maxDescHeadroom: r.free - MAX_DESC };
}

function render(r: FitJson, where: string, driver: Chosen<DriverName>): string {
  const ip = r.inProcess;
  const rule = r.driver === 'upstream' ? 'in flight + 1' : 'in flight';
  const verdict = r.fits
    ? `yes: ${r.headroom} descriptors to spare`
    : r.canEverFit
      ? `no: ${-r.headroom} short; a sender would sleep on dmawait until the head moves`
      : `never: ${r.numDesc} exceeds the ring's largest free count ${r.descqCnt - 1} (descq_cnt − 1)`;
  return keyValues([
    ['engine', where],
    ['driver', `${r.driver} (in-process = ${rule})  ${chosenNote(driver, '--driver')}`],
    ['ring', `${r.descqCnt} descriptors (descq_cnt)`],
    ['head', `${r.head} (slot ${slot(r.head, r.descqCnt)})`],
    ['tail', `${r.tail} (slot ${slot(r.tail, r.descqCnt)})`],
    ['in flight', String(r.inFlight)],
    ['free', `${r.free} (descq_cnt − in flight − 1)`],
    ['request', `${r.numDesc} descriptors`],
    ['fits', verdict],
    [
      'max packet',
      r.maxDescHeadroom >= 0
        ? `a ${MAX_DESC}-descriptor packet fits (${r.maxDescHeadroom} to spare)`
        : `a ${MAX_DESC}-descriptor packet does not fit (${-r.maxDescHeadroom} short)`,
    ],
    [
      'schedule',
      `progress interrupt forced at in-process ≥ ${r.scheduleThreshold} (in flight ≥ ${scheduleInFlight(r.driver, r.descqCnt)}); now ${ip} (${ip >= r.scheduleThreshold ? 'fires' : 'does not fire'})`,
    ],
  ]);
}

export const fitCommand: CommandSpec = {
  command: 'fit [engine]',
  describe: 'would N descriptors fit now: free count, headroom, progress-schedule threshold (exit 0 fits, 1 not)',
  builder: (y: Argv) =>
    y
      .positional('engine', { type: 'string', describe: 'engine number (omit with --descq-cnt/--head/--tail)' })
      .option('num-desc', { type: 'string', demandOption: true, describe: `descriptors in the request (1-${MAX_DESC})` })
      .option('head', { type: 'string', describe: 'descq_head, free-running u32 (DH)' })
      .option('tail', { type: 'string', describe: 'descq_tail, free-running u32 (DT)' })
      .example('$0 fit --descq-cnt 2048 --head 10000 --tail 12040 --num-desc 9', 'explicit numbers, no backend')
      .example('$0 fit 3 --num-desc 9', 'engine 3 of the selected backend')
      .example('$0 fit --driver hfi2 --descq-cnt 2048 --head 0 --tail 255 --num-desc 1', 'the progress schedule of hfi2')
      .epilogue(
        "The ring arithmetic is that of --driver when given, else of the engine's unit; with explicit numbers, upstream. Exit status: 0 when the descriptors fit now, 1 when they do not; usage and source errors as for every command.",
      ),
  async run(args, ctx: CliContext) {
    const numDesc = parseIntArg('--num-desc', args.numDesc, 1, MAX_DESC);
    const given = ctx.global.driver;
    let driver: Chosen<DriverName> =
      given === undefined ? { value: 'upstream', from: 'default', why: 'explicit numbers' } : { value: given, from: 'option' };
    let report: FitJson;
    let where: string;
    let status = 0;
    if (args.engine === undefined) {
      if (args.descqCnt === undefined || args.head === undefined || args.tail === undefined) {
        throw usageError('fit needs an engine, or all of --descq-cnt, --head and --tail');
      }
      report = fitOnNumbers(
        parseDescqCnt(args.descqCnt),
        parseIntArg('--head', args.head, 0, U32_MAX),
        parseIntArg('--tail', args.tail, 0, U32_MAX),
        numDesc,
        driver.value,
      );
      where = '(explicit numbers)';
    } else {
      if (args.head !== undefined || args.tail !== undefined)
        throw usageError('give either an engine or --head/--tail, not both');
      const backend = await ctx.openBackend();
      try {
        const unit = await singleUnit(backend, ctx.global.unit);
        const engine = engineArg(args.engine, unit.info);
        if (given === undefined) driver = { value: unit.info.flavour.driver, from: 'unit', unit: unit.info.name };
        const [s] = await unit.sample([engine]);
        new WarningSayer(ctx.io).say([unit]);
        if (s?.gone) status = goneStatus(ctx.io, [{ unit, s }]);
        if (!s?.sw) {
          throw new Hfi1SdmaError(
            unreadableCode(unit.info, ['sdes']),
            `engine ${engine}: descq_head/descq_tail are not readable here (debugfs sdes is needed); run 'hfi1-sdma doctor'`,
          );
        }
        report = {
          ...fitReport(unit.info.descqCnt, s.sw.descqHead, s.sw.descqTail, numDesc, driver.value),
          maxDescHeadroom: 0,
        };
        report.maxDescHeadroom = report.free - MAX_DESC;
        where = `${unit.info.name} sdma${engine}`;
      } finally {
        await backend.close();
      }
    }
    ctx.io.stdout(ctx.global.json ? `${JSON.stringify(report)}\n` : render(report, where, driver));
    // As progress: 0 when the descriptors fit, 1 when they do not (a gone device's 69 comes first).
    return status !== 0 ? status : report.fits ? 0 : 1;
  },
};
