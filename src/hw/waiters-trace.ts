// The hfi1_tx user-SDMA trace events (hfi1_usdma_defer, hfi1_usdma_activate, hfi1_usdma_we; trace_tx.h) and the QP
// sleep and wake-up events (hfi1_qpsleep, hfi1_qpwakeup), read only when someone already enabled them, from the
// non-consuming `trace` file (never `trace_pipe`, which would take the events from whoever enabled them). Nothing
// here enables tracing or writes anywhere.
import { join } from 'node:path';
import type { SourceStatus } from '../backend.js';
import { parseWaitTraceLine } from '../kmsg/trace-wait.js';
import { type QpSleep, traceEnableFix } from '../progress/waiters.js';
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

/** From the text of `trace`: the engine each writer thread of device `pci` last deferred on (hfi1_usdma_defer). */
export function usdmaEngines(text: string, pci: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.includes('_usdma_defer')) continue;
    const e = parseWaitTraceLine(line);
    if (e?.kind !== 'psm-defer' || e.pid === null || e.engine === null || e.engine < 0) continue;
    if (pci !== '' && e.device.toLowerCase() !== pci) continue;
    out.set(e.pid, e.engine);
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

/** Where the QP sleep events (hfi1_qpsleep; hfi2_qpsleep) are enabled: the tracefs directory, or null. */
export async function qpTraceDir(fs: HwFs, p: UnitPaths): Promise<string | null> {
  for (const dir of p.tracingDirs) {
    const on = await fs.readFile(join(dir, `events/${p.module}_tx/${p.module}_qpsleep/enable`), 64).catch(() => null);
    if (on !== null && Buffer.from(on).toString('latin1').trim() === '1') return dir;
  }
  return null;
}

/** From the text of `trace`: each QP of device `pci` by its last hfi1_qpsleep or hfi1_qpwakeup event. */
export function qpSleeps(text: string, pci: string): Map<number, QpSleep> {
  const out = new Map<number, QpSleep>();
  for (const line of text.split('\n')) {
    if (!line.includes('_qpsleep: ') && !line.includes('_qpwakeup: ')) continue;
    const e = parseWaitTraceLine(line);
    if ((e?.kind !== 'qp-sleep' && e?.kind !== 'qp-wakeup') || e.ts === null) continue;
    if (pci !== '' && e.device.toLowerCase() !== pci) continue;
    out.set(e.qpn, { qpn: e.qpn, asleep: e.kind === 'qp-sleep', flags: e.flags, atSec: Number(e.ts) });
  }
  return out;
}

/** Read `trace` (never trace_pipe): each QP's last sleep or wake-up event; a failed read is a warning. */
export async function readQpSleeps(fs: HwFs, dir: string, pci: string, log: WarningLog): Promise<Map<number, QpSleep>> {
  const file = join(dir, 'trace');
  try {
    return qpSleeps(Buffer.from(await fs.readFile(file, TRACE_CAP_BYTES)).toString('utf8'), pci);
  } catch (e) {
    log.add({
      source: 'trace',
      path: file,
      key: 'trace:qp-unreadable',
      message: `${file}: ${errnoCode(e) || String(e)}: the QPs' sleep times stay unknown`,
    });
    return new Map();
  }
}

/** The kernel's uptime (s) from /proc/uptime, or null when it cannot be read. */
export async function readUptimeSec(fs: HwFs, p: UnitPaths): Promise<number | null> {
  const text = await fs.readFile(p.uptime, 64).catch(() => null);
  const m = text === null ? null : /^(\d{1,12}(?:\.\d{1,9})?) /.exec(Buffer.from(text).toString('latin1'));
  return m ? Number(m[1]) : null;
}
