// `snapshot -o FILE.tar.gz [--samples N --interval-ms T]`: capture the sources hfi1-sdma reads, at
// one or more instants, for a bug report.
import { hostname } from 'node:os';
import type { Argv } from 'yargs';
import { stoppedStatus } from '../cleanup.js';
import { usageError } from '../errors.js';
import { hwFsFor } from '../hw/fsio.js';
import { readHostName } from '../hw/host-name.js';
import { isEmulatedSysroot } from '../hw/paths.js';
import { checkOutputTarget } from '../output-file.js';
import type { CaptureOptions } from '../snapshot/capture.js';
import type { ManifestV2 } from '../snapshot/format.js';
import { MAX_INTERVAL_MS, MAX_SAMPLES, MIN_INTERVAL_MS } from '../snapshot/format.js';
import { defaultRedactMapPath } from '../snapshot/redact-map-path.js';
import { parseIntArg } from './args.js';
import { checkSysroot, sysrootOf } from './backend-select.js';
import type { CommandSpec, GlobalOptions } from './context.js';
import { version } from './version.js';

type Meta = { host: string; toolVersion: string; now: Date; emulated?: boolean };
type Pace = Pick<CaptureOptions, 'samples' | 'intervalMs' | 'redact'>;

/** Run the emulator the options describe to its start, then capture its host (null when stopped first). */
async function captureEmulated(global: GlobalOptions, out: string, meta: Meta, pace: Pace): Promise<ManifestV2 | null> {
  const [{ emuUnitFromOptions, defaultAtMs }, { captureEmulatedUnit }, { warmUp }] = await Promise.all([
    import('../emu/index.js'),
    import('../snapshot/capture-emu.js'),
    import('../emu/warm-up.js'),
  ]);
  const u = emuUnitFromOptions(global);
  if (!(await warmUp(u, defaultAtMs(global)))) return null; // stopped: nothing written
  return captureEmulatedUnit(u, out, meta, pace);
}

export const snapshotCommand: CommandSpec = {
  command: 'snapshot',
  describe: 'capture sysfs/debugfs/procfs and the SDMA CSR block into a .tar.gz (read back with --sysroot FILE)',
  builder: (y: Argv) =>
    y
      .option('o', { alias: 'output', type: 'string', demandOption: true, describe: 'archive to write (FILE.tar.gz)' })
      .option('samples', { type: 'string', describe: `instants to record (1-${MAX_SAMPLES}; default 1)` })
      .option('interval-ms', {
        type: 'string',
        describe: `ms between instants (${MIN_INTERVAL_MS}-${MAX_INTERVAL_MS}; default 1000)`,
      })
      .option('redact', {
        type: 'boolean',
        describe:
          "mask host names, user names, process names, the kernel log's addresses and serials, the same way every time (the map stays on this host)",
      })
      .option('redact-map', {
        type: 'string',
        describe: `with --redact: the site's map of masks (default ${defaultRedactMapPath()}; env HFI1_SDMA_REDACT_MAP)`,
      })
      .example('sudo $0 snapshot -o node17.tar.gz', 'capture this host')
      .example('sudo $0 snapshot -o node17.tar.gz --samples 5', 'five instants a second apart, replayed in their own time')
      .example('$0 --sysroot node17.tar.gz engines', 'inspect the capture elsewhere')
      .example('sudo $0 snapshot -o node17.tar.gz --redact', 'a capture that can leave the site'),
  async run(args, ctx) {
    const out = String(args.o ?? '');
    // What is there already decides first: a directory, a device or a link is refused (73), untouched.
    checkOutputTarget(out, '-o', ctx.global.backend === 'emu' ? [] : [sysrootOf(ctx.global)]);
    if (!/\.(tar\.gz|tgz)$/.test(out)) throw usageError(`-o must name a .tar.gz (or .tgz) file, got ${JSON.stringify(out)}`);
    const pace: Pace = {
      samples: args.samples === undefined ? 1 : parseIntArg('--samples', args.samples, 1, MAX_SAMPLES),
      intervalMs:
        args.intervalMs === undefined ? 1000 : parseIntArg('--interval-ms', args.intervalMs, MIN_INTERVAL_MS, MAX_INTERVAL_MS),
    };
    if (args.redactMap !== undefined && args.redact !== true) throw usageError('--redact-map applies to --redact: add --redact');
    if (args.redact === true) {
      const { Redactor } = await import('../snapshot/redact.js');
      const file = args.redactMap === undefined ? defaultRedactMapPath() : String(args.redactMap);
      if (file === '') throw usageError('--redact-map needs a file');
      pace.redact = Redactor.open(file);
    }
    const { captureSnapshot } = await import('../snapshot/capture.js');
    const sysroot = sysrootOf(ctx.global);
    const explicit = ctx.global.sysroot !== undefined && ctx.global.sysroot !== '';
    if (explicit && ctx.global.backend !== 'emu' && checkSysroot(sysroot) === 'snapshot') {
      throw usageError(`--sysroot ${sysroot} is a snapshot already: snapshot captures a host or a sysroot directory`);
    }
    // A tree other than this host's is captured under the name it shows (its proc/sys/kernel/hostname), where it has one.
    const shown = sysroot === '/' || ctx.global.backend === 'emu' ? null : await readHostName(hwFsFor(sysroot), sysroot);
    // The instants are dated by the clock their waits are paced on (the wall clock as a user runs it): a run whose
    // sleeps move a virtual clock dates them on that clock, never on one its waits do not move.
    const clock = { nowMs: ctx.io.nowMs ?? (() => Date.now()) };
    const meta = { host: shown ?? hostname(), toolVersion: version(), now: new Date(clock.nowMs()) };
    // A capture goes to support as this host's: it never falls back to the emulator; only an
    // explicit --backend emu captures the emulator's host.
    const emulated = ctx.global.backend === 'emu';
    const m = emulated
      ? await captureEmulated(ctx.global, out, meta, pace)
      : await captureSnapshot(
          sysroot,
          out,
          { ...meta, emulated: isEmulatedSysroot(sysroot) },
          {
            ...pace,
            clock,
            sleep: ctx.io.sleep,
          },
        );
    if (m === null) return stoppedStatus();
    if (ctx.global.json) {
      ctx.io.stdout(`${JSON.stringify({ file: out, ...m })}\n`); // the manifest opens with host, time and toolVersion
      return 0;
    }
    const all = m.instants.flatMap((i) => i.sources);
    const captured = all.filter((s) => s.captured).length;
    const missing = new Map<string, string>();
    for (const s of all) if (!s.captured) missing.set(s.path, s.reason ?? 'unknown');
    const n = m.instants.length;
    const spanMs = m.instants[n - 1]?.timeMs ?? 0;
    const when = n === 1 ? '' : `, ${n} instants over ${(spanMs / 1000).toFixed(1)} s`;
    const masked = pace.redact ? ` (redacted: the masks are kept in ${pace.redact.path}, which stays on this host)` : '';
    ctx.io.stdout(
      `wrote ${out}${masked}: ${m.units.map((u) => u.name).join(', ')}${when}, ${captured} files captured` +
        (missing.size
          ? `, ${missing.size} not readable:\n${[...missing].map(([p, why]) => `  ${p}: ${why}`).join('\n')}\n`
          : '\n'),
    );
    return 0;
  },
};
