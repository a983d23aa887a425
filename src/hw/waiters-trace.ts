// The hfi1_tx user-SDMA trace events (hfi1_usdma_defer, hfi1_usdma_activate, hfi1_usdma_we; trace_tx.h), read only
// when someone already enabled them, from the non-consuming `trace` file (never `trace_pipe`, which would take the
// events from whoever enabled them). Nothing here enables tracing or writes anywhere.
import { join } from 'node:path';
import type { SourceStatus } from '../backend.js';
import { traceEnableFix } from '../progress/waiters.js';
import { errnoCode, type HwFs } from './fsio.js';
import type { UnitPaths } from './paths.js';
import type { WarningLog } from './warnings.js';

/** The events that tie a PSM writer to its engine (defer_packet_queue, activate_packet_queue, the timed wait). */
export const USDMA_EVENTS = ['hfi1_usdma_defer', 'hfi1_usdma_activate', 'hfi1_usdma_we'] as const;
/** The trace buffer is per CPU (1.4 MB each by default): read at most this much. */
export const TRACE_CAP_BYTES = 64 << 20;

export { traceEnableFix };

/** Where the events are enabled: the tracefs directory, or null with why not. */
export async function usdmaTraceStatus(fs: HwFs, p: UnitPaths): Promise<SourceStatus & { dir?: string }> {
  const m = p.module;
  let why = `tracefs is not mounted here (neither sys/kernel/tracing nor sys/kernel/debug/tracing has ${m}_tx events)`;
  for (const dir of p.tracingDirs) {
    const file = join(dir, `events/${p.module}_tx/${p.module}_usdma_defer/enable`); // hfi2: system hfi2_tx, events hfi2_*
    try {
      const on = Buffer.from(await fs.readFile(file, 64))
        .toString('latin1')
        .trim();
      if (on === '1') return { source: 'trace', readable: true, path: join(dir, 'trace'), dir };
      return {
        source: 'trace',
        readable: false,
        path: file,
        reason: `the ${m}_usdma_* trace events are not enabled`,
        fix: traceEnableFix(m),
      };
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'EACCES' || code === 'EPERM') {
        return {
          source: 'trace',
          readable: false,
          path: file,
          reason: 'tracefs is readable by root only',
          fix: 'run as root (e.g. sudo hfi1-sdma …)',
        };
      }
      if (code !== 'ENOENT' && code !== 'ENOTDIR') why = `${file}: ${code || String(e)}`;
    }
  }
  const since = m === 'hfi1' ? ' (kernels before v5.13 lack the hfi1_usdma_* events)' : '';
  return { source: 'trace', readable: false, reason: `${why}${since}` };
}

// `comm-pid [cpu] flags timestamp: event: [BDF] pq <addr> …` (the default trace output; the flags column is optional).
const LINE =
  /^\s*.+?-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[\d+\]\s+(?:[^\s:]+\s+)?\d+\.\d+: hfi[12]_(usdma_defer|usdma_activate|usdma_we): \[([^\]]+)\] pq [0-9a-f]+ (.*)$/;
const DEFER_ENGINE = / engine (\d+) empty [01]$/;

/** From the text of `trace`: the engine each writer thread of device `pci` last deferred on (hfi1_usdma_defer). */
export function usdmaEngines(text: string, pci: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.includes('_usdma_defer')) continue;
    const m = LINE.exec(line);
    if (m?.[2] !== 'usdma_defer' || (pci !== '' && m[3] !== pci)) continue;
    const e = DEFER_ENGINE.exec(` ${m[4]}`);
    if (e) out.set(Number(m[1]), Number(e[1]));
  }
  return out;
}

/** Read `trace` (never trace_pipe) and give each writer thread its engine; a failed read is a warning. */
export async function readUsdmaEngines(fs: HwFs, dir: string, pci: string, log: WarningLog): Promise<Map<number, number>> {
  const file = join(dir, 'trace');
  try {
    return usdmaEngines(Buffer.from(await fs.readFile(file, TRACE_CAP_BYTES)).toString('utf8'), pci);
  } catch (e) {
    log.add({
      source: 'trace',
      path: file,
      key: 'trace:unreadable',
      message: `${file}: ${errnoCode(e) || String(e)}: the engines of PSM writers stay unknown`,
    });
    return new Map();
  }
}
