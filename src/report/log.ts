// The kernel log of a capture on the capture's time axis: the `log` command's decoder reads the hfi1/hfi2
// lines (dmesg form), and each event's timestamp (seconds since boot) is moved by the offset the instants'
// /proc/uptime gives, so an engine error sits where the engine's verdict changed.

import { readKernelLog } from '../kmsg/stream.js';
import type { ChipName } from '../progress/chip.js';
import type { PlacedEvent, ReportLog } from './model.js';

/** Where the log comes from: its text, or why there is none. */
export type LogText = { text: string } | { reason: string };

/** A dmesg timestamp (`5.000000`) in seconds; null for any other form (a journal's wall-clock time). Pure. */
export function kernelSeconds(ts: string | null): number | null {
  if (ts === null || !/^\d{1,12}\.\d{1,9}$/.test(ts)) return null;
  return Number(ts);
}

async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

/**
 * Decode `log` and place each event: `offsetMs` is what to add to a kernel time in ms to get ms from the
 * first round (null when the capture holds no uptime, then no event is placed).
 */
export async function placeLog(log: LogText, offsetMs: number | null, chip: ChipName): Promise<ReportLog> {
  if ('reason' in log) {
    return { missing: log.reason, unplaced: null, byUnit: new Map(), units: [], linesRead: 0, eventsDropped: 0 };
  }
  const parsed = await readKernelLog(once(log.text), { chip });
  const byUnit = new Map<string, PlacedEvent[]>();
  for (const event of parsed.events) {
    const kernelSec = kernelSeconds(event.ts);
    const tMs = kernelSec === null || offsetMs === null ? null : kernelSec * 1000 + offsetMs;
    const list = byUnit.get(event.unit) ?? [];
    list.push({ event, kernelSec, tMs });
    byUnit.set(event.unit, list);
  }
  return {
    missing: null,
    unplaced:
      offsetMs === null
        ? "the capture holds no /proc/uptime (an older hfi1-sdma made it), so the log's times since boot cannot be placed on the instants' axis"
        : null,
    byUnit,
    units: parsed.units,
    linesRead: parsed.linesRead,
    eventsDropped: parsed.eventsDropped,
  };
}
