// Gathering a report: the monitor's rounds over the whole capture (every instant of a snapshot, or N rounds of
// a live read paced like watch), the kernel's uptime at each round, then the kernel log placed on the rounds'
// time axis. Where the uptime and the log come from depends on the source: a snapshot holds both; a tree
// (a host, a sysroot) is read at /proc/uptime and /dev/kmsg; the emulator's are its own.
import { join } from 'node:path';
import type { Backend } from '../backend.js';
import { containmentOf } from '../hw/contain.js';
import { readRegularFile } from '../hw/read-file.js';
import type { Monitor } from '../monitor/monitor.js';
import { rounds } from '../monitor/monitor.js';
import type { Sleep } from '../monitor/pace.js';
import type { Round } from '../monitor/round.js';
import { parseUptime, snapshotExtras } from '../snapshot/backend.js';
import { UPTIME_FILE } from '../snapshot/format.js';
import { readKmsgHfi1 } from '../snapshot/kmsg.js';
import { ReportCollector, type ReportMeta } from './collect.js';
import { type LogText, placeLog } from './log.js';
import type { ReportData } from './model.js';

/** Where a report's clock and kernel log come from. */
export interface ReportSource {
  /** How the report names where its numbers were read. */
  label: string;
  /** The kernel's uptime (s) at the round just read, or null when unknown. */
  uptimeSec(): number | null;
  /** The kernel log's hfi1/hfi2 lines (dmesg form), read once the rounds are done, or why there are none. */
  kernelLog(): LogText;
}

/** The clock and log of a snapshot played back by `backend`. */
export function snapshotSource(backend: Backend, label: string): ReportSource {
  const extras = snapshotExtras(backend);
  const rec = backend.recording;
  return {
    label,
    uptimeSec: () => (extras && rec ? extras.uptimeSec(rec.position()) : null),
    kernelLog: () => extras?.kernelLog() ?? { reason: 'this source holds no kernel log' },
  };
}

/**
 * `/proc/uptime` under `sysroot`, read as every source is (a regular file, at most 4 KiB, never a
 * device; under a sysroot other than `/` inside the tree, links out of it refused); null when not readable.
 */
function readUptime(sysroot: string): number | null {
  try {
    return parseUptime(readRegularFile(join(sysroot, UPTIME_FILE), 4096, containmentOf(sysroot)).toString('latin1'));
  } catch {
    return null;
  }
}

/** The clock and log of a tree read live: this host (`/`) or a sysroot directory. */
export function treeSource(sysroot: string, label: string): ReportSource {
  return {
    label,
    uptimeSec: () => readUptime(sysroot),
    kernelLog: () => {
      const log = readKmsgHfi1(sysroot);
      if ('reason' in log) return { reason: `the kernel log was not read: ${log.reason}` };
      return { text: log.text };
    },
  };
}

/** How the rounds are paced, and what the report says about them. */
export interface GatherOptions {
  /** Rounds of a live read (a recording gives every instant). */
  count: number;
  intervalMs: number;
  sleep: Sleep;
  meta: ReportMeta;
  /** Called after each round (a progress line). */
  onRound?: (index: number) => void;
  /** Given each round as it is gathered (another renderer of the same rounds: a timeline). */
  observe?: (round: Round) => void;
}

/** Run the monitor over the capture and gather its report. */
export async function gatherReport(monitor: Monitor, source: ReportSource, o: GatherOptions): Promise<ReportData> {
  const c = new ReportCollector();
  const recorded = monitor.backend.recording !== undefined;
  let chip: 'wfr' | 'jkr' = 'wfr';
  let n = 0;
  for await (const round of rounds(monitor, {
    intervalMs: o.intervalMs,
    sleep: o.sleep,
    ...(recorded ? {} : { count: o.count }),
  })) {
    c.add(round, source.uptimeSec());
    o.observe?.(round);
    n += 1;
    o.onRound?.(n);
    if (n === 1) chip = round.units[0]?.info.flavour.chip ?? 'wfr';
    // A gone device does not come back: a live read ends there, a recording plays to its end.
    if (!recorded && (round.units.some((u) => u.status === 'gone') || round.vanished.length > 0)) break;
  }
  const log = await placeLog(source.kernelLog(), c.logOffsetMs(), chip);
  return c.finish(o.meta, log);
}
