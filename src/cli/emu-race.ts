// `emu race`: explore the interleavings of the sleep/wake-up protocol (sdma_check_progress and the
// sleep callbacks against sdma_desc_avail) on the emulator's engine, report lost and wasted
// wake-ups and what the reductions saved, and print the shortest lost wake-up as a reproduction.
import type { Argv } from 'yargs';
import { DEFAULT_BOUND, defaultBound, explore, MAX_SUBMITTERS, type RaceResult } from '../emu/race/explorer.js';
import { REDUCTIONS, type Reduction } from '../emu/race/search.js';
import { type Replay, replaySchedule, type TraceRow, whyStuck } from '../emu/race/trace.js';
import { isVariant, VARIANT_ORDER, VARIANTS, type Variant } from '../emu/race/variants.js';
import { RACE_DESCQ_CNT, RACE_IN_FLIGHT, RACE_NUM_DESC, SENDER_KINDS, type SenderKind } from '../emu/race/world.js';
import { usageError } from '../errors.js';
import { checkOutputTarget } from '../output-file.js';
import { parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { keyValues, table } from './format.js';
import { documentStamp, stamped } from './stamp.js';
import { version } from './version.js';

/**
 * The `emu race --json` shape: the documented fields first (states and wake-up counts are of the
 * unreduced state space whatever the reduction), then what the search did and saved.
 */
export interface RaceJson {
  variant: Variant;
  submitters: number;
  bound: number;
  seed: number;
  schedules: number;
  states: number;
  lostWakeups: number;
  wastedWakeups: number;
  trace: TraceRow[];
  /** `random` for seeded random schedules, else the reduction of the exhaustive search. */
  reduce: Reduction | 'random';
  /** States the search stored (canonical ones under symmetry). */
  statesExplored: number;
  /** Steps the search took. */
  steps: number;
  /** Steps of the unreduced state graph (Σ over its states of the steps enabled there); 0 when sampling. */
  graphSteps: number;
  /** Each sender's kind in actor order (S1, S2, …). */
  senders: SenderKind[];
  /** Lost wake-up states with a QP / a PSM / an IPoIB sender left asleep (a state with several counts in each). */
  lostWakeupsByKind: Record<SenderKind, number>;
  /**
   * Of the lost wake-ups, the states where no actor has a step left (the other senders placed their requests or
   * sleep too): nothing will ever wake the sender (SPIN's invalid end state).
   */
  lostForGood: number;
}

/** The options `emu race` adds (the seed is the global --seed). */
export function raceOptions(y: Argv): Argv {
  return y
    .option('variant', {
      type: 'string',
      describe: `race: ${VARIANTS.join(' | ')}; twin: kernel | kernel-sample-first (default kernel)`,
    })
    .option('submitters', {
      type: 'string',
      describe: `race: submitters, 1-${MAX_SUBMITTERS} (default 2; 3 take seconds and about 150 MB, 4 take minutes and about 2 GB)`,
    })
    .option('senders', {
      type: 'string',
      describe: `race: the senders' kinds in order, comma-separated, each with an optional count: qp | psm | ipoib (e.g. qp,psm or 2qp,1ipoib; 1-${MAX_SUBMITTERS} in all); a QP's harvest need is its request's descriptors, a PSM or IPoIB queue's 0 (default: --submitters PSM senders)`,
    })
    .option('bound', {
      type: 'string',
      describe: `race: depth bound of the exhaustive search in steps (default ${DEFAULT_BOUND}, ${defaultBound(4)} with 4 submitters)`,
    })
    .option('reduce', {
      type: 'string',
      describe: `race: what the exhaustive search reduces: ${REDUCTIONS.join(' | ')} (default all: symmetric submitters and sleep sets; the counts are the same)`,
    })
    .option('schedules', { type: 'string', describe: 'race: sample N seeded random schedules instead of the exhaustive search' })
    .option('trace', {
      type: 'string',
      describe:
        'race: also write the shortest lost wake-up as a timeline to FILE (Chrome trace-event JSON: Perfetto, chrome://tracing)',
    });
}

/** Run the exploration the arguments describe; the trace is that of the shortest lost wake-up. */
export function runRace(
  args: Record<string, unknown>,
  seed: number,
): { result: RaceResult; json: RaceJson; why: string; replay: Replay | null } {
  const name = args.variant === undefined ? 'kernel' : String(args.variant);
  if (!isVariant(name)) throw usageError(`--variant must be one of ${VARIANTS.join(', ')}, got ${JSON.stringify(name)}`);
  if (args.senders !== undefined && args.submitters !== undefined)
    throw usageError('--senders already gives the number of senders: drop --submitters');
  const senders =
    args.senders === undefined
      ? Array.from(
          { length: args.submitters === undefined ? 2 : parseIntArg('--submitters', args.submitters, 1, MAX_SUBMITTERS) },
          () => 'psm' as const,
        )
      : parseSenders(String(args.senders));
  const submitters = senders.length;
  const bound = args.bound === undefined ? defaultBound(submitters) : parseIntArg('--bound', args.bound, 1, 10_000);
  const schedules = args.schedules === undefined ? undefined : parseIntArg('--schedules', args.schedules, 1, 100_000_000);
  const reduce = args.reduce === undefined ? 'all' : String(args.reduce);
  if (!isReduction(reduce)) throw usageError(`--reduce must be one of ${REDUCTIONS.join(', ')}, got ${JSON.stringify(reduce)}`);
  if (schedules !== undefined && args.reduce !== undefined)
    throw usageError(
      '--reduce applies to the exhaustive search; random sampling (--schedules) reduces nothing: drop one of them',
    );
  const result = explore({ variant: name, submitters, senders, bound, seed, schedules, reduce });
  const replay = result.lostSchedule ? replaySchedule(name, senders, result.lostSchedule) : null;
  const json: RaceJson = {
    variant: name,
    submitters,
    bound,
    seed,
    schedules: result.schedules,
    states: result.states,
    lostWakeups: result.lostWakeups,
    wastedWakeups: result.wastedWakeups,
    trace: replay ? replay.rows : [],
    reduce: result.mode === 'random' ? 'random' : reduce,
    statesExplored: result.statesExplored,
    steps: result.steps,
    graphSteps: result.graphSteps,
    senders: result.senders,
    lostWakeupsByKind: result.lostByKind,
    lostForGood: result.lostForGood,
  };
  return { result, json, why: replay ? whyStuck(replay) : '', replay };
}

const SENDER_ITEM = /^([1-9][0-9]*)?(qp|psm|ipoib)$/;

/** Parse `--senders`: comma-separated kinds, each with an optional count (`qp,psm`, `2qp,1psm`), in actor order. */
export function parseSenders(raw: string): SenderKind[] {
  const items = raw.split(',').map((item) => {
    const m = SENDER_ITEM.exec(item.trim().toLowerCase());
    if (!m)
      throw usageError(
        `--senders takes comma-separated kinds (${SENDER_KINDS.join(', ')}), each with an optional count, e.g. qp,psm or 2qp,1psm; got ${JSON.stringify(raw)}`,
      );
    return { n: m[1] === undefined ? 1 : Number(m[1]), kind: m[2] as SenderKind };
  });
  const total = items.reduce((sum, x) => sum + x.n, 0);
  if (total > MAX_SUBMITTERS) throw usageError(`--senders must name from 1 to ${MAX_SUBMITTERS} senders, got ${total}`);
  return items.flatMap((x) => Array.from({ length: x.n }, () => x.kind));
}

/** "S1 qp, S2 psm": each sender's name and kind, with the harvest need of each kind. */
function sendersLine(senders: readonly SenderKind[]): string {
  const names = senders.map((k, i) => `S${i + 1} ${k}`).join(', ');
  return `${names} (harvest need: qp ${RACE_NUM_DESC}, psm 0, ipoib 0)`;
}

function isReduction(name: string): name is Reduction {
  return (REDUCTIONS as readonly string[]).includes(name);
}

const count = (x: number): string => x.toLocaleString('en-US');

/** What the reductions saved: states stored against the distinct states, steps against the state graph's. */
function reductionLine(r: RaceResult): string {
  const states = `${count(r.statesExplored)} states stored for ${count(r.states)} distinct`;
  const steps = `${count(r.steps)} steps taken, the state graph has ${count(r.graphSteps)}`;
  const pct = (part: number, whole: number): string => `${Math.round((100 * (whole - part)) / Math.max(whole, 1))}%`;
  return `${r.reduce}: ${states} (${pct(r.statesExplored, r.states)} saved), ${steps} (${pct(r.steps, r.graphSteps)} saved)`;
}

function searchLine(r: RaceResult): string {
  if (r.mode === 'random')
    return `${r.schedules} seeded random schedules (seed ${r.seed}), each run to its end (longest ${r.maxDepth} steps)`;
  return r.cut === 0
    ? `exhaustive to ${r.bound} steps: every schedule ran to its end (longest ${r.maxDepth} steps)`
    : `exhaustive to ${r.bound} steps: ${r.cut} schedules cut at the bound`;
}

function render(j: RaceJson, r: RaceResult, why: string): string {
  let out = keyValues([
    ['variant', `${j.variant}: ${VARIANT_ORDER[j.variant]}`],
    [
      'scenario',
      `descq_cnt ${RACE_DESCQ_CNT}, ${RACE_IN_FLIGHT.reduce((a, b) => a + b, 0)} descriptors in flight (packets of ${RACE_IN_FLIGHT.join(', ')}), free ${RACE_DESCQ_CNT - 1 - RACE_IN_FLIGHT.reduce((a, b) => a + b, 0)}; ${j.submitters} submitter${j.submitters === 1 ? '' : 's'} of ${RACE_NUM_DESC} descriptors`,
    ],
    ['search', searchLine(r)],
    ...(r.mode === 'exhaustive' ? [['reduction', reductionLine(r)] as [string, string]] : []),
    ['schedules', `${j.schedules}${r.mode === 'exhaustive' ? ' explored' : ''}`],
    ['states', `${j.states} distinct`],
    ['senders', sendersLine(j.senders)],
    [
      'lost wake-ups',
      `${j.lostWakeups} (distinct states): ${j.lostWakeupsByKind.qp} with a QP left asleep, ${j.lostWakeupsByKind.psm} with a PSM sender, ${j.lostWakeupsByKind.ipoib} with an IPoIB queue`,
    ],
    [
      'for good',
      `${j.lostForGood} of them with no step left anywhere: the other senders' traffic can no longer wake the sleeper`,
    ],
    ['wasted wake-ups', `${j.wastedWakeups} (woken, still no room)`],
  ]);
  if (j.trace.length === 0) return `${out}\nNo lost wake-up: every sender asleep on dmawait is woken.\n`;
  out += `\nShortest lost wake-up, step by step (seq, head, tail, free after each step):\n`;
  out += table(
    ['step', 'actor', 'action', 'seq', 'head', 'tail', 'free'],
    j.trace.map((t) => [String(t.step), t.actor, t.action, String(t.seq), String(t.head), String(t.tail), String(t.free)]),
    new Set([0, 3, 4, 5, 6]),
  );
  return `${out}\n${why}\n`;
}

/** `emu race` as a subcommand definition (registered under `emu` in emu.ts). */
export const emuRaceCommand: CommandSpec = {
  command: 'race',
  describe:
    'explore interleavings of the sleep/wake-up protocol (sdma_check_progress vs sdma_desc_avail): lost and wasted wake-ups',
  builder: raceOptions,
  async run(args, ctx: CliContext) {
    const target = args.trace === undefined ? undefined : String(args.trace);
    if (target !== undefined && !/\.json$/i.test(target))
      throw usageError(`--trace must name a .json file (Chrome trace-event JSON), got ${JSON.stringify(target)}`);
    // Before a search that may take minutes: a target that cannot be written is said at once.
    if (target !== undefined) checkOutputTarget(target, '--trace');
    const { result, json, why, replay } = runRace(args, ctx.global.seed);
    ctx.io.stdout(ctx.global.json ? `${JSON.stringify(stamped(documentStamp(null, ctx), json))}\n` : render(json, result, why));
    if (target !== undefined) {
      if (!replay) {
        ctx.io.stderr(`hfi1-sdma: no lost wake-up to draw: ${target} was not written\n`);
        return 0;
      }
      const [{ raceEvents }, { writeTrace }] = await Promise.all([import('../trace/race.js'), import('../trace/file.js')]);
      const events = raceEvents(replay, { variant: json.variant, senders: json.senders }, why);
      const header = {
        tool: `hfi1-sdma ${version()}`,
        clock: 'steps' as const,
        source: `emu race --variant ${json.variant} --senders ${json.senders.join(',')}`,
      };
      const n = await writeTrace(target, events, header, documentStamp(null, ctx));
      ctx.io.stderr(`hfi1-sdma: wrote ${target} (${n} trace events: the shortest lost wake-up, one track per actor)\n`);
    }
    return 0;
  },
};
