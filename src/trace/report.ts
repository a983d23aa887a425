// The timeline of a report (`report --trace FILE`): the rounds of the capture as rounds.ts draws them, then the
// kernel log's events the report could place on the same axis, as instants on their engine's track (or the
// unit's), and the capture itself as an instant at its first round.
import type { Round } from '../monitor/round.js';
import type { ReportData } from '../report/model.js';
import { version } from '../version.js';
import { writeTrace } from './file.js';
import type { TraceEvent, TraceStamp } from './format.js';
import { RoundTimeline, roundTimeMs } from './rounds.js';

/** Kernel-log fields worth carrying onto an instant. */
const LOG_FIELDS = ['state', 'value', 'text', 'netdev', 'txq', 'port', 'head', 'tail', 'freecnt'] as const;

/** A report's timeline: fed its rounds while they are gathered, written once the report is. */
export function reportTimeline(): {
  add(round: Round): void;
  write(target: string, data: ReportData, stamp: TraceStamp, inputs: readonly string[]): Promise<number>;
} {
  const events: TraceEvent[] = [];
  const timeline = new RoundTimeline({ add: (e) => events.push(e) });
  let first: Round | null = null;
  return {
    add(round) {
      first ??= round;
      timeline.add(round);
    },
    async write(target, data, stamp, inputs) {
      if (first) {
        const t0 = roundTimeMs(first);
        const unit = first.units[0]?.info;
        if (unit) timeline.mark(unit, t0, 'capture', 'capture', { source: data.sourceLabel, instants: data.rounds });
        for (const [name, placed] of data.log.byUnit) {
          for (const p of placed) {
            if (p.tMs === null) continue;
            const e = p.event;
            const args: Record<string, unknown> = { line: e.line, kernelTime: e.ts };
            for (const f of LOG_FIELDS) if (e[f] !== undefined) args[f] = e[f];
            if (e.errors) args.errors = e.errors.map((b) => b.name);
            timeline.mark(name, t0 + p.tMs, e.kind, 'kmsg', args, e.engine);
          }
        }
      }
      timeline.finish();
      return writeTrace(
        target,
        events,
        { tool: `hfi1-sdma ${version()}`, clock: timeline.clockName ?? 'epoch', source: data.sourceLabel },
        stamp,
        inputs,
      );
    },
  };
}
