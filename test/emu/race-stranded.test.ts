// A lost wake-up the explorer found, replayed on the emulator and left to run: the emulator's own
// waiters (EmuUnit.waiters) and engine samples, judged by the stall rule shared with the live host
// (judgeWaiters), name the QP stranded on its idle engine once the rule's 3 samples over 200 ms hold.
import { describe, expect, it } from 'vitest';
import { DEFAULT_BOUND, explore } from '../../src/emu/race/explorer.js';
import { lostWaiter } from '../../src/emu/race/steps.js';
import { replaySchedule } from '../../src/emu/race/trace.js';
import type { SenderKind } from '../../src/emu/race/world.js';
import { DEFAULT_STRAND_MS, judgeWaiters, newStrandTrack, type WaiterJudgement } from '../../src/progress/strand.js';

/** Replay the shortest lost wake-up of the kernel order with `senders`, then sample every `stepMs` of virtual time. */
async function judgeReplay(senders: SenderKind[], stepMs: number, samples: number): Promise<WaiterJudgement[][]> {
  const r = explore({ variant: 'kernel', submitters: senders.length, senders, bound: DEFAULT_BOUND, seed: 1 });
  if (r.lostSchedule === null) throw new Error('the kernel order lost no wake-up');
  const { world } = replaySchedule('kernel', senders, r.lostSchedule);
  expect(lostWaiter(world)?.kind).toBe('qp');
  const unit = world.unit;
  unit.resume(); // the chip runs again: nothing is left for it to fetch
  const track = newStrandTrack();
  const rounds: WaiterJudgement[][] = [];
  for (let i = 0; i < samples; i++) {
    if (i > 0) unit.advance(stepMs);
    rounds.push(judgeWaiters(track, await unit.waiters(), await unit.sample(), { strandMs: DEFAULT_STRAND_MS }));
  }
  return rounds;
}

describe('a race trace replayed on the emulator', () => {
  for (const senders of [['qp'], ['qp', 'psm']] as SenderKind[][]) {
    it(`senders ${senders.join(',')}: the QP left asleep is stranded on engine 0 (lost-wakeup) after 3 samples over 200 ms`, async () => {
      const rounds = await judgeReplay(senders, 100, 4); // samples at +0, +100, +200, +300 ms
      const last = rounds.at(-1) ?? [];
      expect(last.map((j) => [j.waiter.kind, j.waiter.engine, j.verdict, j.reason])).toEqual([
        ['qp', 0, 'stranded', 'lost-wakeup'],
      ]);
      expect(last[0]?.waiter.ownPending).toBe(0);
      // Before the rule's span has passed the same waiter is only being confirmed.
      expect(rounds.slice(0, 2).map((js) => js.map((j) => [j.verdict, j.reason]))).toEqual([
        [['waiting', 'confirming']],
        [['waiting', 'confirming']],
      ]);
    });
  }

  it('three samples spanning less than 200 ms are not enough', async () => {
    const rounds = await judgeReplay(['qp'], 60, 4); // +0 … +180 ms
    expect(rounds.at(-1)?.map((j) => j.verdict)).toEqual(['waiting']);
  });
});
