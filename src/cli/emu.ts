// `emu run|write|serve|race`: the emulator headless (totals, per-engine figures, invariants), its
// sysroot written once, or kept live for other processes.
import { performance } from 'node:perf_hooks';
import type { Argv } from 'yargs';
import { onStop, stoppedStatus } from '../cleanup.js';
import { FAULT_NAMES, PORT_FAULTS } from '../emu/faults.js';
import { defaultAtMs, emuUnitFromOptions } from '../emu/index.js';
import { invariantViolations } from '../emu/invariants.js';
import { MAX_STEP_WALL_MS, runBounded, serveSysroot } from '../emu/serve.js';
import { closeSysroot, openSysroot, writeSysroot } from '../emu/sysroot.js';
import type { EmuUnit } from '../emu/unit.js';
import { warmUp, yieldToEventLoop } from '../emu/warm-up.js';
import { DEFAULT_WORKLOAD, WORKLOADS } from '../emu/workload.js';
import { usageError } from '../errors.js';
import { parseHostName } from '../hw/host-name.js';
import { freeCount, inFlight } from '../progress/ring.js';
import { parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { FaultAnnouncer, progressLine } from './emu-progress.js';
import { emuRaceCommand, raceOptions } from './emu-race.js';
import { emuTwin, twinOptions } from './emu-twin.js';
import { engineJson } from './engine-json.js';
import { keyValues, table } from './format.js';
import { documentStamp, stamped } from './stamp.js';

type Action = (args: Record<string, unknown>, ctx: CliContext) => Promise<number>;

const CHUNK_MS = 50;
const SPEED_MIN = 0.001;
const SPEED_MAX = 1000;
/** `emu run` without --duration-ms or --at-ms runs one virtual second. */
const RUN_DEFAULT_MS = 1000;

/**
 * Run a unit to `ms` in chunks, drawing a progress line with an ETA on stderr when stderr is a
 * terminal (whatever stdout is: a redirected --json still shows progress); nothing otherwise.
 * Between chunks the event loop runs, so SIGINT/SIGTERM end a long run at once; false when a stop
 * was requested before the end.
 */
async function runWithProgress(u: EmuUnit, ms: number, ctx: CliContext): Promise<boolean> {
  const bar = ctx.io.stderrIsTTY === true && ms >= 500;
  const now = ctx.io.nowMs ?? (() => Date.now());
  const wall0 = now();
  for (let t = Math.min(ms, u.nowMs + CHUNK_MS); ; t = Math.min(ms, t + CHUNK_MS)) {
    if (!(await warmUp(u, t))) return false;
    if (bar) ctx.io.stderr(progressLine(t, ms, now() - wall0));
    if (t >= ms) break;
    await yieldToEventLoop();
  }
  if (bar) ctx.io.stderr('\n');
  return true;
}

/** `emu run --json`: the shape in docs/json.md. */
export async function emuRunJson(u: EmuUnit, wallMs: number) {
  const t = u.totals();
  const samples = await u.sample();
  return {
    seed: u.seed,
    workload: u.workload.name,
    virtualMs: t.virtualMs,
    wallMs: Math.round(wallMs),
    descriptors: t.descriptors,
    txSubmitted: t.txSubmitted,
    txCompleted: t.txCompleted,
    txAborted: t.txAborted,
    txInFlight: t.txInFlight,
    waitersAsleep: t.waitersAsleep,
    lostWakeups: t.lostWakeups,
    ipoibDropped: t.ipoibDropped,
    invariantViolations: invariantViolations(u),
    logHash: u.logHash(),
    model: u.model,
    engines: samples.map((s) => engineJson(s, u.info)),
  };
}

const run: Action = async (args, ctx) => {
  const u = emuUnitFromOptions(ctx.global);
  const ms =
    args.durationMs === undefined
      ? (ctx.global.atMs ?? RUN_DEFAULT_MS)
      : parseIntArg('--duration-ms', args.durationMs, 1, 86_400_000);
  const t0 = performance.now();
  if (!(await runWithProgress(u, ms, ctx))) return stoppedStatus();
  const j = await emuRunJson(u, performance.now() - t0);
  if (ctx.global.json) {
    ctx.io.stdout(`${JSON.stringify(stamped(documentStamp(null, ctx), j))}\n`);
    return j.invariantViolations.length === 0 ? 0 : 1;
  }
  const secs = j.virtualMs / 1000;
  let out = keyValues([
    ['workload', `${j.workload} (seed ${j.seed})`],
    ['virtual time', `${j.virtualMs} ms in ${j.wallMs} ms wall (${(j.virtualMs / Math.max(1, j.wallMs)).toFixed(2)}× real time)`],
    ['descriptors', `${j.descriptors} (${(j.descriptors / secs / 1e6).toFixed(2)} M/s)`],
    ['txreqs', `${j.txSubmitted} submitted = ${j.txCompleted} completed + ${j.txAborted} aborted + ${j.txInFlight} in flight`],
    ['waiters asleep', String(j.waitersAsleep)],
    ['lost wake-ups', String(j.lostWakeups)],
    ...(j.ipoibDropped > 0
      ? [
          ['IPoIB dropped', `${j.ipoibDropped} txreqs (the netdev was unregistered: the sleep callback answered -EINVAL)`] as [
            string,
            string,
          ],
        ]
      : []),
    ['log hash', j.logHash],
    [
      'model',
      j.model === 'fast'
        ? `fast: ${((100 * u.skipped().skippedNs) / 1e6 / Math.max(1, j.virtualMs * u.engines.length)).toFixed(0)}% of the engines' time skipped in closed form`
        : 'stepped (every event)',
    ],
  ]);
  const rows = (await u.sample()).map((s) => {
    const w = s.sw;
    const c = s.counters;
    return [
      String(s.engine),
      s.state ?? '?',
      String(s.vl ?? '-'),
      String(s.cpu ?? '-'),
      w ? String(inFlight(w.descqHead, w.descqTail)) : '-',
      w ? String(freeCount(u.info.descqCnt, w.descqHead, w.descqTail)) : '-',
      w ? String(w.descqFullCount) : '-',
      c ? String(c.descFetched) : '-',
      c ? `${c.sdmaInt}/${c.progressInt}/${c.idleInt}` : '-',
      c ? String(c.errCount) : '-',
    ];
  });
  out += `\n${table(['engine', 'state', 'vl', 'cpu', 'in-flight', 'free', 'DQF', 'fetched', 'int/prog/idle', 'errors'], rows, new Set([0, 2, 3, 4, 5, 6, 7, 9]))}`;
  out +=
    j.invariantViolations.length === 0
      ? '\ninvariants: all hold (conservation, ring bounds, generations, transitions, DQF, no lost wake-up)\n'
      : `\ninvariants: ${j.invariantViolations.length} violated\n${j.invariantViolations.map((v) => `  ${v}\n`).join('')}`;
  ctx.io.stdout(out);
  return j.invariantViolations.length === 0 ? 0 : 1;
};

function sysrootDir(ctx: CliContext, action: string): string {
  const dir = ctx.global.sysroot;
  if (!dir) throw usageError(`emu ${action} needs --sysroot DIR (an empty or new directory to write the emulated host into)`);
  return dir;
}

/** `--speed`: virtual ms per wall ms, from a thousandth to a thousand times real time. */
export function parseSpeed(raw: unknown): number {
  if (raw === undefined) return 1;
  const speed = Number(raw);
  if (!(speed >= SPEED_MIN && speed <= SPEED_MAX))
    throw usageError(`--speed must be a number from ${SPEED_MIN} to ${SPEED_MAX} (virtual ms per wall ms), got ${String(raw)}`);
  return speed;
}

/** `--hostname`: the emulated host's name, as a host name may be spelled; undefined when not given. */
export function hostnameArg(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  const name = parseHostName(String(raw));
  if (name === null || name !== String(raw))
    throw usageError(`--hostname takes a host name (letters, digits, '.', '-', '_'), got ${JSON.stringify(String(raw))}`);
  return name;
}

const write: Action = async (args, ctx) => {
  const dir = sysrootDir(ctx, 'write');
  const hostname = hostnameArg(args.hostname);
  const u = emuUnitFromOptions(ctx.global);
  // Stopped during the warm-up: nothing is written.
  if (!(await warmUp(u, defaultAtMs(ctx.global)))) return stoppedStatus();
  try {
    openSysroot(u, dir, { hostname });
    await writeSysroot(u, dir);
  } finally {
    closeSysroot(u, dir);
  }
  const j = { sysroot: dir, virtualMs: u.nowMs, logHash: u.logHash() };
  const stamp = { ...documentStamp(null, ctx), ...(hostname === undefined ? {} : { host: hostname }) };
  ctx.io.stdout(
    ctx.global.json
      ? `${JSON.stringify(stamped(stamp, j))}\n`
      : `wrote ${u.info.name} at ${j.virtualMs} ms virtual time under ${dir}\n`,
  );
  // A still picture: what watches it longer than a stall window sees every engine with work in flight stalled.
  if (!ctx.global.json) {
    ctx.io.stderr(
      `hfi1-sdma: ${dir} is one instant: nothing in it moves, so health, watch or the exporter reading it for longer than --stall-ms see each engine with work in flight as stalled; 'hfi1-sdma emu serve --sysroot ${dir}' keeps it live\n`,
    );
  }
  return 0;
};

const serve: Action = async (args, ctx) => {
  const dir = sysrootDir(ctx, 'serve');
  const speed = parseSpeed(args.speed);
  const intervalMs = args.intervalMs === undefined ? 100 : parseIntArg('--interval-ms', args.intervalMs, 10, 60_000);
  const hostname = hostnameArg(args.hostname);
  const u = emuUnitFromOptions(ctx.global);
  openSysroot(u, dir, { hostname }); // refuses a place it must not write before anything else happens
  const ac = new AbortController();
  const unregister = onStop(() => ac.abort());
  const faults = new FaultAnnouncer(u.faults, ctx.io.stderr, ctx.io.nowMs ?? (() => Date.now()));
  try {
    // Catch up to --at-ms in bounded slices, letting a stop signal through between them.
    const atMs = ctx.global.atMs ?? 0;
    while (u.nowMs < atMs && !ac.signal.aborted) {
      runBounded(u, atMs, () => performance.now(), MAX_STEP_WALL_MS);
      faults.reached(u.nowMs);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (ac.signal.aborted) return 0;
    ctx.io.stderr(`serving ${u.info.name} under ${dir} (${speed}× real time); SIGINT or SIGTERM stops\n`);
    const writes = await serveSysroot(u, dir, {
      speed,
      intervalMs,
      signal: ac.signal,
      onWrite: (virtualMs) => faults.reached(virtualMs),
      onBehind: (lagMs) =>
        ctx.io.stderr(
          `emu serve: the emulator cannot keep up with ${speed}× real time (${Math.round(lagMs)} ms behind); virtual time now runs slower than wall time. If this lasts (no "caught up" line follows), lower --speed or use a lighter --workload (e.g. ${DEFAULT_WORKLOAD}:gbps=10)\n`,
        ),
      onCaughtUp: (behindMs) =>
        ctx.io.stderr(`emu serve: caught up with ${speed}× real time again (it was up to ${Math.round(behindMs)} ms behind)\n`),
    });
    ctx.io.stderr(`stopped at ${u.nowMs.toFixed(0)} ms virtual time after ${writes} writes\n`);
  } finally {
    unregister();
    closeSysroot(u, dir);
  }
  return 0;
};

/** The emu actions by name. */
export const EMU_ACTIONS: Record<string, Action> = { run, write, serve, race: emuRaceCommand.run, twin: emuTwin };

export const emuCommand: CommandSpec = {
  command: 'emu <action>',
  describe: "the emulator: run headless, write its sysroot once, keep it live, explore races, or run a capture's twin",
  builder: (y: Argv) =>
    twinOptions(raceOptions(y))
      .positional('action', { choices: Object.keys(EMU_ACTIONS), describe: 'run | write | serve | race | twin' })
      .option('duration-ms', { type: 'string', describe: 'run: virtual ms to run (default --at-ms, else 1000)' })
      .option('speed', { type: 'string', describe: 'serve: virtual ms per wall ms, 0.001-1000 (default 1)' })
      .option('interval-ms', { type: 'string', describe: 'serve: wall ms between sysroot refreshes (default 100)' })
      .option('hostname', {
        type: 'string',
        describe: "write, serve: the emulated host's name in proc/sys/kernel/hostname (default this host's)",
      })
      .example('$0 emu run --seed 7 --workload line-rate --duration-ms 1000 --json', 'totals, engines and invariants as JSON')
      .example('$0 emu run --fault engine-error:1@200', 'a halting engine error on every engine at 200 ms')
      .example('$0 emu write --sysroot /tmp/hfi1 --at-ms 500', 'an emulated host for --sysroot readers')
      .example('$0 emu serve --sysroot /tmp/hfi1 --speed 0.1', 'a live emulated host at a tenth of real time')
      .example('$0 emu race --variant psm-pre-2019', 'the pre-2019 PSM hang, step by step')
      .example('$0 emu twin --from node17.tar.gz', "the capture's twin: what it took, where it diverges, its verdict")
      .example(
        '$0 emu twin --from node17.tar.gz --variant kernel-sample-first',
        'does the sample-first order keep the finding away',
      )
      .epilogue(
        [
          `Workloads (--workload NAME[:key=value,…]; default ${DEFAULT_WORKLOAD}): ${WORKLOADS.map((w) => w.name).join(', ')}.`,
          `Faults (--fault NAME@MS[:ENGINE], repeatable; ${PORT_FAULTS.join(', ')} take NAME@MS[:PORT]): ${FAULT_NAMES.join(', ')}.`,
          "Each is described in the README's emulator section. emu run exits 1 when an invariant is violated.",
        ].join('\n'),
      ),
  async run(args, ctx) {
    const action = EMU_ACTIONS[String(args.action)];
    if (!action)
      throw usageError(`emu: unknown action ${JSON.stringify(args.action)}; use ${Object.keys(EMU_ACTIONS).join(', ')}`);
    return action(args, ctx);
  },
};
