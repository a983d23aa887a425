// `report [SNAPSHOT] -o FILE.html`: one self-contained HTML page of a capture (a snapshot's every instant, or
// --samples rounds of this host, a sysroot or the emulator), rendered from the monitor's rounds: findings
// first, every engine over time on one scale, waiters, ports and the kernel log on the same time axis.
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import type { Backend } from '../backend.js';
import { usageError } from '../errors.js';
import type { Round } from '../monitor/round.js';
import { checkOutputTarget } from '../output-file.js';
import { MAX_INTERVAL_MS, MAX_SAMPLES, MIN_INTERVAL_MS } from '../snapshot/format.js';
import { parseIntArg } from './args.js';
import { checkSysroot, openBackend, sysrootOf } from './backend-select.js';
import type { CliContext, CommandSpec } from './context.js';
import { commandMonitor, provenanceJson } from './observe.js';
import { documentStamp, stamped } from './stamp.js';
import { version } from './version.js';
import { strandMsArg } from './waiters-observe.js';

const DEFAULT_SAMPLES = 10;
const DEFAULT_INTERVAL_MS = 500;

/** The backend the report reads: the snapshot named, else the global selection (never a fallback to the emulator). */
async function openSource(ctx: CliContext, snapshot: string | undefined): Promise<Backend> {
  if (snapshot === undefined) return ctx.openBackend();
  if (ctx.global.sysroot !== undefined && ctx.global.sysroot !== '') {
    throw usageError(`report ${snapshot} names its snapshot already: leave out --sysroot ${ctx.global.sysroot}`);
  }
  if (ctx.global.backend === 'emu') throw usageError(`report ${snapshot} reads a snapshot: leave out --backend emu`);
  if (checkSysroot(snapshot) !== 'snapshot') {
    throw usageError(`report ${snapshot}: a directory is read with --sysroot ${snapshot}; name a snapshot .tar.gz here`);
  }
  return openBackend({ ...ctx.global, sysroot: snapshot }, ctx.io, { fallback: false });
}

/** Where the report says its numbers come from, and how it reads their clock and kernel log. */
async function sourceOf(backend: Backend, ctx: CliContext, snapshot: string | undefined) {
  const g = await import('../report/gather.js');
  if (backend.recording) return g.snapshotSource(backend, `snapshot ${snapshot ?? backend.recording.source}`);
  if (backend.kind === 'emu') {
    const [{ kmsgText }, { hfi1Lines }] = await Promise.all([import('../emu/kmsg.js'), import('../snapshot/kmsg.js')]);
    const unit = (await backend.unit((await backend.units())[0]?.name ?? 0)) as unknown as {
      nowMs: number;
      host: Parameters<typeof kmsgText>[0];
    };
    return {
      label: "the emulator (in process, not this host's adapter)",
      uptimeSec: () => unit.nowMs / 1000,
      kernelLog: () => ({ text: hfi1Lines(kmsgText(unit.host).split('\n')).text }),
    };
  }
  const sysroot = sysrootOf(ctx.global);
  return g.treeSource(sysroot, sysroot === '/' ? 'this host, read live' : `sysroot ${sysroot}, read live`);
}

export const reportCommand: CommandSpec = {
  command: 'report [snapshot]',
  describe: 'one self-contained HTML page of a capture: findings, every engine over time, waiters, the kernel log',
  // A report goes to support as this host's: it never passes the emulator off as the host.
  fallback: false,
  builder: (y: Argv) =>
    y
      .positional('snapshot', {
        type: 'string',
        describe: "a snapshot written by 'hfi1-sdma snapshot' (else the host or --sysroot)",
      })
      .option('o', { alias: 'output', type: 'string', describe: 'the page to write (FILE.html)' })
      .option('trace', {
        type: 'string',
        describe:
          'also (or only) write the capture as a timeline to FILE.json (Chrome trace-event JSON: Perfetto, chrome://tracing)',
      })
      .option('samples', {
        type: 'string',
        describe: `a live read: rounds to take (1-${MAX_SAMPLES}; default ${DEFAULT_SAMPLES}); a snapshot gives its own instants`,
      })
      .option('interval-ms', {
        type: 'string',
        describe: `a live read: ms between rounds (${MIN_INTERVAL_MS}-${MAX_INTERVAL_MS}; default ${DEFAULT_INTERVAL_MS})`,
      })
      .option('stall-ms', { type: 'string', default: '1000', describe: 'no head movement this long while in flight is a stall' })
      .option('strand-ms', {
        type: 'string',
        default: '200',
        describe: 'a waiter asleep on a running, empty, quiet engine this long (and 3 samples) is stranded',
      })
      .example('$0 report node17.tar.gz -o node17.html', 'the page of a snapshot, every recorded instant')
      .example('sudo $0 report -o node17.html --samples 20', 'read this host 20 times, 500 ms apart, and draw it')
      .example('$0 --backend emu --fault stop-fetch@300:3 report -o stall.html', 'the emulator with a stalled engine')
      .example('$0 report node17.tar.gz --trace node17.json', 'the capture as a timeline to open in Perfetto'),
  async run(args, ctx) {
    const out = args.o === undefined ? undefined : String(args.o);
    const trace = args.trace === undefined ? undefined : String(args.trace);
    if (out === undefined && trace === undefined)
      throw usageError('name what to write: -o FILE.html (the page), --trace FILE.json (a timeline), or both');
    // The kind of file first: a directory, a device or a FIFO in its place is left as it is (73), whatever its name.
    if (out !== undefined) checkOutputTarget(out, '-o');
    if (trace !== undefined) checkOutputTarget(trace, '--trace');
    if (out !== undefined && !/\.html?$/i.test(out)) throw usageError(`-o must name an .html file, got ${JSON.stringify(out)}`);
    if (trace !== undefined && !/\.json$/i.test(trace))
      throw usageError(`--trace must name a .json file (Chrome trace-event JSON), got ${JSON.stringify(trace)}`);
    const snapshot = args.snapshot === undefined ? undefined : String(args.snapshot);
    for (const [option, file] of [
      ['-o', out],
      ['--trace', trace],
    ] as const) {
      if (file !== undefined && snapshot !== undefined && resolve(snapshot) === resolve(file))
        throw usageError(`${option} ${file} would overwrite the snapshot`);
    }
    const live = snapshot === undefined && !/\.(tar\.gz|tgz)$/.test(ctx.global.sysroot ?? '');
    if (!live && (args.samples !== undefined || args.intervalMs !== undefined)) {
      throw usageError("a snapshot's instants are its own: --samples and --interval-ms are for a live read");
    }
    const count = args.samples === undefined ? DEFAULT_SAMPLES : parseIntArg('--samples', args.samples, 1, MAX_SAMPLES);
    const intervalMs =
      args.intervalMs === undefined
        ? DEFAULT_INTERVAL_MS
        : parseIntArg('--interval-ms', args.intervalMs, MIN_INTERVAL_MS, MAX_INTERVAL_MS);
    const stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 86_400_000);
    const strandMs = strandMsArg(args.strandMs);
    const [{ gatherReport }, { renderReport }, { checkReportTarget, writeOutputFile }, { reportTimeline }] = await Promise.all([
      import('../report/gather.js'),
      import('../report/html.js'),
      import('../report/write.js'),
      import('../trace/report.js'),
    ]);
    // Before a read that may take minutes: a target that cannot be written is said at once.
    const inputs = [snapshot ?? sysrootOf(ctx.global)];
    if (out !== undefined) checkReportTarget(out, inputs);
    if (trace !== undefined) checkOutputTarget(trace, '--trace', inputs);
    const backend = await openSource(ctx, snapshot);
    let html: string | null = null;
    let data: Awaited<ReturnType<typeof gatherReport>>;
    const timeline = trace === undefined ? null : reportTimeline();
    try {
      const monitor = commandMonitor(backend, ctx, { stallMs, strandMs });
      const source = await sourceOf(backend, ctx, snapshot);
      data = await gatherReport(monitor, source, {
        count,
        intervalMs,
        // The emulator's time is virtual: its rounds need no wall-clock wait.
        sleep: backend.kind === 'emu' ? async () => {} : ctx.io.sleep,
        meta: {
          sourceLabel: source.label,
          toolVersion: version(),
          renderedAtMs: ctx.io.nowMs?.() ?? Date.now(),
          stallMs,
          strandMs,
        },
        ...(timeline ? { observe: (round: Round) => timeline.add(round) } : {}),
      });
      await monitor.close();
      if (out !== undefined) html = renderReport(data);
    } finally {
      await backend.close();
    }
    if (out !== undefined && html !== null) await writeOutputFile(out, html, inputs);
    const traced =
      trace !== undefined && timeline
        ? { file: trace, events: await timeline.write(trace, data, documentStamp(backend, ctx), inputs) }
        : null;
    const bytes = html === null ? null : Buffer.byteLength(html);
    const findings = data.units.flatMap((u) => u.findings.filter((s) => s.current).map((s) => s.finding));
    if (ctx.global.json) {
      const doc = stamped(documentStamp(backend, ctx), {
        file: out ?? null,
        bytes,
        ...(traced ? { trace: traced } : {}),
        provenance: provenanceJson(data.provenance),
        instants: data.rounds,
        spanMs: data.spanMs,
        units: data.units.map((u) => ({
          name: u.info.name,
          status: u.status[u.status.length - 1]?.status ?? 'up',
          findings: u.findings
            .filter((s) => s.current)
            .map((s) => ({
              code: s.finding.code,
              severity: s.finding.severity,
              engine: s.finding.engine,
              text: s.finding.text,
              action: s.finding.action,
            })),
        })),
      });
      ctx.io.stdout(`${JSON.stringify(doc)}\n`);
      return 0;
    }
    const worst = findings.filter((f) => f.severity === 'critical' || f.severity === 'warning');
    const span = data.rounds > 1 ? ` over ${(data.spanMs / 1000).toFixed(1)} s` : '';
    const what = `${data.units.map((u) => u.info.name).join(', ')}, ${data.rounds} instant${data.rounds === 1 ? '' : 's'}${span}, ${worst.length} finding${worst.length === 1 ? '' : 's'} to act on${worst[0] ? ` (worst: ${worst[0].code} ${worst[0].text})` : ''}`;
    if (out !== undefined && bytes !== null) ctx.io.stdout(`wrote ${out} (${Math.ceil(bytes / 1024)} KiB): ${what}\n`);
    if (traced) ctx.io.stdout(`wrote ${traced.file} (${traced.events} trace events${out === undefined ? `: ${what}` : ''})\n`);
    return 0;
  },
};
