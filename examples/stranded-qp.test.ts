// A CI test of the lost wake-up, against the emulator: a QP left asleep on an idle engine by the
// sdma_check_progress window is judged stranded by the monitor, and named with its owner.
import { createMonitor } from 'hfi1-sdma';
import { createEmuBackend } from 'hfi1-sdma/emulator';
import { describe, expect, it } from 'vitest';

describe('a lost wake-up on engine 1', () => {
  it('leaves a QP stranded there, and the monitor says so (SD201)', async () => {
    const emu = await createEmuBackend({ engines: 4, workload: 'qp', faults: ['lost-wakeup:qp@50:1'] });
    const monitor = createMonitor(emu, { strandMs: 200 });
    try {
      let stranded = null;
      // Rounds 100 ms of virtual time apart: no wall-clock wait.
      for await (const round of monitor.rounds({ intervalMs: 100, count: 10 })) {
        stranded = round.findings.find((f) => f.code === 'SD201') ?? null;
        if (stranded) break;
      }
      expect(stranded?.engine).toBe(1);
      expect(stranded?.text).toMatch(/QP 0x\w+ RTS \(pid \d+ verbs_rank_\d+, user hpcuser\) stranded \(lost-wakeup\)/);
      expect(emu.totals().lostWakeups).toBe(1);
    } finally {
      await monitor.close();
      await emu.close();
    }
  });
});
