// `export`: the Prometheus exporter. Binds loopback unless told otherwise; never falls back to the
// emulator (no unit is `hfi1_sdma_up 0`); with --backend emu it serves the emulator and says so.
// Runs until SIGINT or SIGTERM, then closes the listener and the backend and exits 0.
import { join } from 'node:path';
import type { Argv } from 'yargs';
import type { Backend } from '../backend.js';
import { onStop } from '../cleanup.js';
import { usageError } from '../errors.js';
import { bindError, exposureWarning, parseListen, resolveListenHost } from '../export/listen.js';
import type { BuildInfo } from '../export/metrics.js';
import type { Captures } from '../monitor/capture.js';
import { checkOutputTarget } from '../output-file.js';
import { parseIntArg } from './args.js';
import { sysrootOf } from './backend-select.js';
import { captureOptions, openCaptures } from './capture.js';
import type { CliContext, CommandSpec } from './context.js';
import { version } from './version.js';
import { strandMsArg } from './waiters-observe.js';

export { parseListen } from '../export/listen.js';

/** Wall time the emulator may simulate per scrape, at most (ms). */
const EMU_WALL_BUDGET_MS = 500;
/** Virtual ms the emulator runs between two turns of the event loop. */
const EMU_SLICE_MS = 5;

function backendLabel(b: Backend): string {
  return b.recording ? 'snapshot' : b.kind;
}

/** On a recording, the before-round hook that reads the next recorded instant each round (the last one stays). */
function replayHook(backend: Backend): (() => Promise<unknown>) | undefined {
  const recording = backend.recording;
  if (!recording) return undefined;
  let first = true;
  return async () => {
    if (first) first = false;
    else await recording.advance();
  };
}

/** The before-round hook that paces the emulator, or nothing for other backends. */
async function emuHook(backend: Backend, ctx: CliContext, capMs: number, stopped: () => boolean) {
  const advance = (backend as { advanceMs?: (ms: number) => void }).advanceMs?.bind(backend);
  if (!advance) return undefined;
  const { emuPacer } = await import('../export/emu-pace.js');
  return emuPacer({
    advanceMs: advance,
    maxVirtualMsPerRound: capMs,
    wallBudgetMs: EMU_WALL_BUDGET_MS,
    sliceMs: EMU_SLICE_MS,
    wallNowMs: () => performance.now(),
    stopped,
    onBehind: (lagMs, o) =>
      ctx.io.stderr(
        `hfi1-sdma export: the emulator runs at most ${o.maxVirtualMsPerRound} ms of virtual time (and ${o.wallBudgetMs} ms of work) per scrape; its virtual time now runs behind wall time (${Math.round(lagMs)} ms behind)\n`,
      ),
  });
}

export const exportCommand: CommandSpec = {
  fallback: false,
  command: 'export',
  describe: 'Prometheus exporter: per-engine metrics on /metrics',
  builder: (y: Argv) =>
    captureOptions(y)
      .option('listen', { type: 'string', default: '127.0.0.1:9469', describe: 'address to listen on (loopback by default)' })
      .option('min-interval-ms', { type: 'string', default: '1000', describe: 'scrapes within this interval share one sample' })
      .option('stall-ms', { type: 'string', default: '1000', describe: 'no head movement this long while in flight is a stall' })
      .option('strand-ms', {
        type: 'string',
        default: '200',
        describe: 'a waiter asleep on a running, empty, quiet engine this long (and 3 scrapes) is stranded',
      })
      .option('textfile', {
        type: 'string',
        describe:
          'write the metrics to FILE, atomically (node_exporter textfile collector), from 3 samples spanning --strand-ms, and exit',
      })
      .option('state', {
        type: 'string',
        describe:
          'with --textfile: carry the observation between runs in FILE (none: do not), so stalls and strands span runs; default /run/hfi1-sdma/textfile.state as root',
      })
      .example('$0 export', 'serve http://127.0.0.1:9469/metrics')
      .example('$0 export --listen 0.0.0.0:9469', 'serve every interface (put a firewall in front)')
      .example(
        'sudo $0 export --capture-dir /var/lib/hfi1-sdma/captures',
        'and keep a snapshot of each first stall, halt or strand',
      ),
  async run(args, ctx) {
    const { host, port } = parseListen(String(args.listen));
    const minIntervalMs = parseIntArg('--min-interval-ms', args.minIntervalMs, 0, 3_600_000);
    const stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 3_600_000);
    const strandMs = strandMsArg(args.strandMs);
    if (args.textfile !== undefined && args.captureDir !== undefined)
      throw usageError('--capture-dir is for the served exporter (and watch): --textfile takes its samples and exits');
    if (args.textfile !== undefined)
      return writeTextfile(String(args.textfile), { minIntervalMs, stallMs, strandMs }, args.state, ctx);
    const address = await resolveListenHost(host);
    const { startExporter } = await import('../export/server.js');
    const stop = new AbortController();
    const unregister = onStop(() => stop.abort());
    const backend = await ctx.openBackend();
    const buildInfo = buildInfoOf(backend);
    let started: Awaited<ReturnType<typeof startExporter>> | undefined;
    let captures: Captures | null = null;
    try {
      captures = openCaptures(args, ctx, backend, (line) => ctx.io.stderr(`hfi1-sdma export: ${line}\n`));
      const capMs = 2 * Math.max(minIntervalMs, stallMs);
      const beforeSample = replayHook(backend) ?? (await emuHook(backend, ctx, capMs, () => stop.signal.aborted));
      try {
        started = await startExporter(
          {
            backend,
            buildInfo,
            minIntervalMs,
            stallMs,
            strandMs,
            nowMs: () => Date.now(),
            log: (line) => ctx.io.stderr(`${line}\n`),
            processMetrics: true,
            ...(captures ? { captures } : {}),
            ...(beforeSample ? { beforeSample } : {}),
            // The live host's units are found when it is opened: open it again to see one that appears or comes back.
            ...(backend.kind === 'hw' && !backend.recording ? { reopen: () => ctx.openBackend() } : {}),
          },
          address,
          port,
        );
      } catch (e) {
        throw bindError(e, host, port) ?? e;
      }
      const warning = exposureWarning(address, port);
      if (warning) ctx.io.stderr(warning);
      ctx.io.stderr(
        `hfi1-sdma export: serving http://${address.includes(':') ? `[${address}]` : address}:${started.port}/metrics ${await describeSource(backend, ctx)}\n`,
      );
      if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }));
      ctx.io.stderr('hfi1-sdma export: stopping\n');
      return 0;
    } finally {
      unregister();
      const s = started;
      if (s) {
        await new Promise<void>((resolve) => {
          s.server.close(() => resolve());
          s.server.closeAllConnections();
        });
        // A round still reading the backend must finish before its mappings go away.
        await s.sampler.settled();
      }
      // A capture under way when the exporter stops is abandoned: nothing of it is kept.
      await captures?.finish(true);
      if (s) await s.sampler.close();
      await backend.close();
    }
  },
};

/** What hfi1_sdma_build_info says: the version, the backend, and whether the numbers are the emulator's. */
function buildInfoOf(backend: Backend): BuildInfo {
  return {
    version: version(),
    backend: backendLabel(backend),
    emulated: backend.kind === 'emu' || backend.origin?.emulated === true,
  };
}

/** `--textfile FILE`: 3 samples of every unit (carrying the previous run's tracks), written atomically for node_exporter. */
async function writeTextfile(
  target: string,
  timing: { minIntervalMs: number; stallMs: number; strandMs: number },
  stateArg: unknown,
  ctx: CliContext,
): Promise<number> {
  const [{ writeMetricsTextfile }, stateFile, { hostname, tmpdir }] = await Promise.all([
    import('../export/textfile.js'),
    import('../monitor/state-file.js'),
    import('node:os'),
  ]);
  // Refused before anything is read: a device, a link, a directory, or a file inside the tree read.
  const inputs = ctx.global.backend === 'emu' ? [] : [sysrootOf(ctx.global)];
  checkOutputTarget(target, '--textfile', inputs);
  stateFile.checkStateOption(stateArg === undefined ? undefined : String(stateArg), inputs);
  const backend = await ctx.openBackend();
  try {
    const log = (line: string) => ctx.io.stderr(`${line}\n`);
    const given = stateArg === undefined ? undefined : String(stateArg);
    // The emulator and recordings keep no state; an emulated sysroot only when --state names a file.
    const keep =
      given !== 'none' && backend.kind !== 'emu' && !backend.recording && (given !== undefined || !backend.origin?.emulated);
    const sysroot = sysrootOf(ctx.global);
    const uid = process.getuid?.() ?? 0;
    const path = given ?? stateFile.defaultStatePath('textfile', sysroot, { uid, env: ctx.io.env, tmpdir: tmpdir() });
    const key = keep
      ? await stateFile.stateKey(sysroot, sysroot === '/' ? hostname() : null, await backend.units().catch(() => []))
      : null;
    const loaded = key ? await stateFile.loadState(path, key, Date.now()) : null;
    if (loaded?.note) log(`hfi1-sdma export: ${loaded.note}`);
    await writeMetricsTextfile(
      { backend, buildInfo: buildInfoOf(backend), ...timing, nowMs: () => Date.now(), log },
      target,
      {
        sleep: ctx.io.sleep,
        ...(loaded ? { tracks: loaded.tracks } : {}),
        done: async (sampler) => {
          if (!key) return;
          const note = await stateFile.saveState(path, key, sampler.monitor.state(), Date.now(), {
            uid,
            createDir: given === undefined,
          });
          if (note) log(`hfi1-sdma export: ${note}`);
        },
      },
      undefined,
      inputs,
    );
    return 0;
  } finally {
    await backend.close();
  }
}

/** The banner's account of what is served: the backend, and whether any unit was found. */
async function describeSource(backend: Backend, ctx: CliContext): Promise<string> {
  if (backend.kind === 'emu') return '(backend emu: the emulator, not this host\'s adapter; build_info says backend="emu")';
  if (backend.recording) return `(backend snapshot: ${backend.recording.source}, a recording, not this host live)`;
  let n = 0;
  try {
    n = (await backend.units()).length;
  } catch {
    // the sampler reports why on the first scrape
  }
  if (n > 0) return `(backend hw, ${n} unit${n === 1 ? '' : 's'})`;
  return `(backend hw: no hfi1 or hfi2 unit under ${join(sysrootOf(ctx.global), 'sys/class/infiniband')}; hfi1_sdma_up is 0 until one appears; the exporter never falls back to the emulator)`;
}
