// `progress <engine> --num-desc N`: what a sender that found the ring full would see. Sample seq
// (bit 0 cleared, the head_lock seqlock, sdma.h), then poll until sdma_progress (sdma_progress, sdma.h) would return 1. Exit 0 with the
// satisfying sample; exit 1 on timeout, saying whether nothing moved or it moved without room.
import type { Argv } from 'yargs';
import type { EngineSample, UnitInfo } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import { MAX_DESC } from '../progress/constants.js';
import { freeCount } from '../progress/ring.js';
import { type ProgressOutcome, sampleSeq, sdmaProgressOutcome } from '../progress/seq.js';
import { parseIntArg } from './args.js';
import type { CommandSpec } from './context.js';
import { keyValues } from './format.js';
import { goneStatus, WarningSayer } from './observe.js';
import { nextInstant, watchForStop } from './pace.js';
import { documentStamp, stamped } from './stamp.js';
import { engineArg, sampleOne, singleUnit, unreadableCode, withBackend } from './units.js';

/** Exit codes of `progress`. */
export const PROGRESS_EXIT = { satisfied: 0, timeout: 1 } as const;

function ringOf(s: EngineSample, descqCnt: number, info: UnitInfo): { head: number; tail: number } {
  if (s.sw) return { head: s.sw.descqHead, tail: s.sw.descqTail };
  if (s.csr) {
    // Slots only: rebuild a consistent pair from the hardware head and the in-flight distance.
    const head = Number(s.csr.hwHead);
    return { head, tail: head + Number((s.csr.hwTail - s.csr.hwHead) & BigInt(descqCnt - 1)) };
  }
  throw new Hfi1SdmaError(
    unreadableCode(info, ['sdes', 'bar']),
    `engine ${s.engine}: neither debugfs sdes nor the BAR is readable, so the free count is unknown; run 'hfi1-sdma doctor'`,
  );
}

export const progressCommand: CommandSpec = {
  command: 'progress <engine>',
  describe: 'sample seq, then wait until sdma_progress would return 1 (head moved and N fits)',
  builder: (y: Argv) =>
    y
      .positional('engine', { type: 'string', describe: 'engine number' })
      .option('num-desc', { type: 'string', demandOption: true, describe: `descriptors the request needs (1-${MAX_DESC})` })
      .option('timeout-ms', { type: 'string', default: '5000', describe: 'give up after this long (exit 1)' })
      .option('interval-ms', { type: 'string', default: '50', describe: 'time between polls' })
      .example('$0 progress 3 --num-desc 9 --timeout-ms 2000', 'would a 9-descriptor sender on engine 3 be woken within 2 s?')
      .epilogue(
        'Exit codes: 0 sdma_progress returned 1; 1 timeout (no movement, or movement without room); others as hfi1-sdma --help.',
      ),
  async run(args, ctx) {
    const numDesc = parseIntArg('--num-desc', args.numDesc, 1, MAX_DESC);
    const timeoutMs = parseIntArg('--timeout-ms', args.timeoutMs, 0, 86_400_000);
    const intervalMs = parseIntArg('--interval-ms', args.intervalMs, 1, 60_000);
    return withBackend(ctx, async (backend) => {
      const unit = await singleUnit(backend, ctx.global.unit);
      const engine = engineArg(args.engine, unit.info);
      const cnt = unit.info.descqCnt;
      const first = await sampleOne(unit, engine);
      new WarningSayer(ctx.io).say([unit]);
      if (first.gone) {
        ctx.io.stdout(
          ctx.global.json
            ? `${JSON.stringify(stamped(documentStamp(backend, ctx), { unit: unit.info.name, engine, numDesc, gone: true, satisfied: false, reason: 'device-gone' }))}\n`
            : keyValues([
                ['engine', `${unit.info.name} sdma${engine}`],
                ['result', 'device gone: registers read all-ones, no sender on this engine will be woken'],
              ]),
        );
        return goneStatus(ctx.io, [{ unit, s: first }]);
      }
      if (first.seq === null) {
        throw new Hfi1SdmaError(
          unreadableCode(unit.info, ['counters', 'hwCounters', 'interrupts']),
          `engine ${engine}: no progress sequence is readable (needs debugfs counters or /proc/interrupts); run 'hfi1-sdma doctor'`,
        );
      }
      const seqAtSleep = sampleSeq(first.seq);
      const r0 = ringOf(first, cnt, unit.info);
      let everMoved = false;
      let polls = 0;
      let s = first;
      let o: ProgressOutcome = { result: 0, reason: 'no-movement', moved: false, descAvail: null };
      const stop = watchForStop();
      let goneAt: EngineSample | null = null;
      for (;;) {
        const r = ringOf(s, cnt, unit.info);
        o = sdmaProgressOutcome(
          { seq: s.seq ?? seqAtSleep, descqCnt: cnt, descqHead: r.head, descqTail: r.tail },
          seqAtSleep,
          numDesc,
        );
        everMoved ||= o.moved;
        if (o.result === 1 || s.timeMs - first.timeMs >= timeoutMs) break;
        if (!(await nextInstant(backend, ctx.io, intervalMs, stop))) break;
        const next = await sampleOne(unit, engine);
        if (next.gone) {
          goneAt = next;
          break;
        }
        s = next;
        polls += 1;
      }
      // Stopped by a signal, or a recording that ended, before the timeout: say so, not "timeout".
      const ended = o.result !== 1 && !goneAt && s.timeMs - first.timeMs < timeoutMs;
      const endedWhy = stop.stopped() ? 'stopped by a signal' : 'the recording ended';
      stop.dispose();
      const r = ringOf(s, cnt, unit.info);
      const free = freeCount(cnt, r.head, r.tail);
      const waitedMs = s.timeMs - first.timeMs;
      const satisfied = o.result === 1;
      const why = satisfied
        ? `sdma_progress returned 1 after ${waitedMs} ms: seq ${seqAtSleep} → ${s.seq}, free ${free} ≥ ${numDesc}`
        : everMoved
          ? `${ended ? endedWhy : 'timeout'} after ${waitedMs} ms: the head moved (seq ${seqAtSleep} → ${s.seq}) but free is ${free} < ${numDesc}; a sender would be woken and sleep again`
          : `${ended ? endedWhy : 'timeout'} after ${waitedMs} ms: no movement (seq still ${seqAtSleep}, source ${s.seqSource}); a sender asleep now would wait for an interrupt that has not come`;
      if (ctx.global.json) {
        ctx.io.stdout(
          `${JSON.stringify(stamped(documentStamp(backend, ctx), { unit: unit.info.name, engine, numDesc, seqAtSleep, seq: s.seq, seqSource: s.seqSource, moved: everMoved, free, freeAtSleep: freeCount(cnt, r0.head, r0.tail), result: o.result, satisfied, waitedMs, polls, reason: satisfied ? 'fits' : everMoved ? 'no-room' : 'no-movement' }))}\n`,
        );
      } else {
        ctx.io.stdout(
          keyValues([
            ['engine', `${unit.info.name} sdma${engine}`],
            ['seq at sleep', `${seqAtSleep} (${first.seqSource}; bit 0 cleared)`],
            ['free at sleep', String(freeCount(cnt, r0.head, r0.tail))],
            ['request', `${numDesc} descriptors`],
            ['result', why],
          ]),
        );
      }
      // A device gone while waiting ends the wait; the last sample before it is shown above.
      if (goneAt) return goneStatus(ctx.io, [{ unit, s: goneAt }]);
      return satisfied ? PROGRESS_EXIT.satisfied : PROGRESS_EXIT.timeout;
    });
  },
};
