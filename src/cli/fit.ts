// `fit`: would N descriptors be admitted to an engine's ring now, on each submission path (sdma_descq_freecnt,
// sdma.h; sdma_send_txreq and sdma_send_txlist, sdma.c; sdma_engine_progress_schedule, sdma.h)?
import type { Argv } from 'yargs';
import { Hfi1SdmaError, usageError } from '../errors.js';
import type { ChipName } from '../progress/chip.js';
import { MAX_DESC } from '../progress/constants.js';
import {
  type DriverName,
  defaultDriverSettings,
  PAD_SDMA_DESC_VALUES,
  type PathFit,
  type SubmitPath,
  scheduleInFlight,
} from '../progress/driver.js';
import { type FitReport, fitReport, slot } from '../progress/ring.js';
import { parseDescqCnt, parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { type Chosen, chosenNote } from './flavour-default.js';
import { keyValues } from './format.js';
import { goneStatus, WarningSayer } from './observe.js';
import { documentStamp, stamped } from './stamp.js';
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
  padSdmaDesc = 0,
  path: SubmitPath = 'txreq',
): FitJson {
  const r = fitReport(descqCnt, head, tail, numDesc, driver, padSdmaDesc, path);
  if (r.inFlight > descqCnt - 1) {
    throw usageError(
      `tail − head = ${r.inFlight} (u32) exceeds descq_cnt − 1 = ${descqCnt - 1}: the driver never has more than ${descqCnt - 1} descriptors in flight; check --head and --tail (free-running counts, DH and DT in debugfs sdes)`,
    );
  }
  return { ...r, maxDescHeadroom: r.free - MAX_DESC };
}

/** Where pad_sdma_desc came from: --pad-sdma-desc, or the automatic rule of the build and chip. */
export interface PadChoice {
  value: number;
  why: string;
}

/**
 * pad_sdma_desc for `fit`: --pad-sdma-desc when given (0, 4, 8, 16 or 32), else the build's automatic value on
 * `chip` (32 for the Cornelis hfi1 and hfi2 on JKR, taking the host to be AMD as CN5000 hosts are; 0 otherwise).
 */
export function padChoice(raw: unknown, driver: DriverName, chip: ChipName | null): PadChoice {
  if (raw !== undefined) {
    const v = parseIntArg('--pad-sdma-desc', raw, 0, 32);
    if (!PAD_SDMA_DESC_VALUES.includes(v)) {
      throw usageError(`--pad-sdma-desc must be one of ${PAD_SDMA_DESC_VALUES.join(', ')} (the driver's values), got ${v}`);
    }
    return {
      value: driver === 'upstream' ? 0 : v,
      why: driver === 'upstream' ? 'upstream hfi1 pads nothing' : '--pad-sdma-desc',
    };
  }
  if (driver === 'upstream') return { value: 0, why: 'upstream hfi1 pads nothing' };
  const value = defaultDriverSettings(driver, chip ?? 'wfr', true).padSdmaDesc;
  return {
    value,
    why: `the automatic value of ${driver} on ${chip ?? 'wfr'}${value ? ' (an AMD host)' : ''}; --pad-sdma-desc to give it`,
  };
}

/** One path's line: what it admits the request on, against what, and whether it goes in now. */
function pathLine(p: PathFit, what: string, against: string): string {
  const now = p.fits ? `fits, ${p.headroom} to spare` : p.canEverFit ? `${-p.headroom} short` : 'never (more than an empty ring)';
  return `${what} against ${p.room} ${against}: ${now}`;
}

function render(r: FitJson, where: string, driver: Chosen<DriverName>, pad: PadChoice): string {
  const ip = r.inProcess;
  const rule = r.driver === 'upstream' ? 'in flight + 1' : 'in flight';
  const counted = r.path === 'txreq' ? 'the sdma_send_txreq path' : 'the sdma_send_txlist path';
  const verdict = r.fits
    ? `yes, on ${counted}: ${r.headroom} descriptors to spare`
    : r.canEverFit
      ? `no, on ${counted}: ${-r.headroom} short; a sender would sleep on dmawait until the head moves`
      : `never, on ${counted}: more than the ring's largest free count ${r.descqCnt - 1} (descq_cnt − 1) offers`;
  const t = r.paths.txreq;
  const l = r.paths.txlist;
  return keyValues([
    ['engine', where],
    ['driver', `${r.driver} (in-process = ${rule})  ${chosenNote(driver, '--driver')}`],
    ['pads', `pad_sdma_desc ${r.padSdmaDesc} (${pad.why})`],
    ['ring', `${r.descqCnt} descriptors (descq_cnt)`],
    ['head', `${r.head} (slot ${slot(r.head, r.descqCnt)})`],
    ['tail', `${r.tail} (slot ${slot(r.tail, r.descqCnt)})`],
    ['in flight', String(r.inFlight)],
    ['free', `${r.free} (descq_cnt − in flight − 1)`],
    ['request', `${r.numDesc} descriptors`],
    ['txreq path', `sdma_send_txreq (verbs QPs, IPoIB): ${pathLine(t, `${r.numDesc} + ${r.numPad} pads = ${t.need}`, 'free')}`],
    [
      'txlist path',
      `sdma_send_txlist (PSM): ${pathLine(l, `${r.numDesc}`, r.padSdmaDesc ? `(free rounded down to ${r.padSdmaDesc})` : 'free')}${r.padSdmaDesc ? '; the batch is padded at its tail update' : ''}`,
    ],
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
      .option('pad-sdma-desc', {
        type: 'string',
        describe: "the device's pad_sdma_desc: 0, 4, 8, 16 or 32 (default: the build's automatic value on the chip)",
      })
      .option('path', {
        type: 'string',
        choices: ['txreq', 'txlist'],
        default: 'txreq',
        describe: 'the submission path the verdict and exit status count: txreq (verbs QPs, IPoIB) or txlist (PSM)',
      })
      .example('$0 fit --descq-cnt 2048 --head 10000 --tail 12040 --num-desc 9', 'explicit numbers, no backend')
      .example('$0 fit 3 --num-desc 9', 'engine 3 of the selected backend')
      .example('$0 fit --driver hfi2 --descq-cnt 2048 --head 0 --tail 255 --num-desc 1', 'the progress schedule of hfi2')
      .example('$0 fit 8 --num-desc 3 --path txlist', 'a PSM packet of 3 descriptors on engine 8')
      .epilogue(
        "The ring arithmetic is that of --driver when given, else of the engine's unit; with explicit numbers, upstream. Both submission paths are shown: sdma_send_txreq admits num_desc + num_pad against the free count, sdma_send_txlist admits num_desc against the free count rounded down to pad_sdma_desc and pads the batch. Exit status (of --path, default txreq): 0 when the descriptors fit now, 1 when they do not; usage and source errors as for every command.",
      ),
  async run(args, ctx: CliContext) {
    const numDesc = parseIntArg('--num-desc', args.numDesc, 1, MAX_DESC);
    const given = ctx.global.driver;
    let driver: Chosen<DriverName> =
      given === undefined ? { value: 'upstream', from: 'default', why: 'explicit numbers' } : { value: given, from: 'option' };
    const path: SubmitPath = args.path === 'txlist' ? 'txlist' : 'txreq';
    let report: FitJson;
    let where: string;
    let pad: PadChoice;
    let status = 0;
    let stamp = documentStamp(null, ctx);
    if (args.engine === undefined) {
      if (args.descqCnt === undefined || args.head === undefined || args.tail === undefined) {
        throw usageError('fit needs an engine, or all of --descq-cnt, --head and --tail');
      }
      pad = padChoice(args.padSdmaDesc, driver.value, ctx.global.chip ?? null);
      report = fitOnNumbers(
        parseDescqCnt(args.descqCnt),
        parseIntArg('--head', args.head, 0, U32_MAX),
        parseIntArg('--tail', args.tail, 0, U32_MAX),
        numDesc,
        driver.value,
        pad.value,
        path,
      );
      where = '(explicit numbers)';
    } else {
      if (args.head !== undefined || args.tail !== undefined)
        throw usageError('give either an engine or --head/--tail, not both');
      const backend = await ctx.openBackend();
      stamp = documentStamp(backend, ctx);
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
        pad = padChoice(args.padSdmaDesc, driver.value, ctx.global.chip ?? unit.info.flavour.chip);
        report = {
          ...fitReport(unit.info.descqCnt, s.sw.descqHead, s.sw.descqTail, numDesc, driver.value, pad.value, path),
          maxDescHeadroom: 0,
        };
        report.maxDescHeadroom = report.free - MAX_DESC;
        where = `${unit.info.name} sdma${engine}`;
      } finally {
        await backend.close();
      }
    }
    ctx.io.stdout(ctx.global.json ? `${JSON.stringify(stamped(stamp, report))}\n` : render(report, where, driver, pad));
    // As progress: 0 when the descriptors fit, 1 when they do not (a gone device's 69 comes first).
    return status !== 0 ? status : report.fits ? 0 : 1;
  },
};
