// `watch --trace FILE`: the rounds drawn as they come into a trace file written beside its target and put in place
// when watch ends (stopped, counted out, or its device gone); a watch that saw no round writes nothing.
import type { Round } from '../monitor/round.js';
import { TraceFile } from '../trace/file.js';
import type { TraceStamp } from '../trace/format.js';
import { RoundTimeline, roundTimeMs } from '../trace/rounds.js';
import { provenanceText } from './observe.js';
import { version } from './version.js';

/** The trace of one watch. */
export interface WatchTrace {
  readonly target: string;
  add(round: Round): void;
  /** A snapshot kept by --capture-dir, as an instant at the round that triggered it. */
  capture(round: Round, line: string): void;
  /** Close the document (`last`: the last round, null when none came); the events written. */
  close(last: Round | null): Promise<number>;
}

/** Check `target` and start its trace (a refused target is E_CANT_CREATE before watch reads anything). */
export async function openWatchTrace(target: string, stamp: TraceStamp, inputs: readonly string[]): Promise<WatchTrace> {
  const file = TraceFile.open(target, stamp, inputs);
  const timeline = new RoundTimeline(file);
  return {
    target,
    add: (round) => timeline.add(round),
    capture(round, line) {
      const unit = round.units[0]?.info;
      if (unit) timeline.mark(unit, roundTimeMs(round), 'capture', 'capture', { line });
    },
    async close(last) {
      if (!last) {
        await file.abandon();
        return 0;
      }
      try {
        timeline.finish();
        await file.close({
          tool: `hfi1-sdma ${version()}`,
          clock: timeline.clockName ?? 'epoch',
          source: provenanceText(last.provenance),
        });
      } catch (e) {
        await file.abandon();
        throw e;
      }
      return file.count;
    },
  };
}
