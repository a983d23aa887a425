// Shared by the stranded-sender end-to-end tests: step the emulator, render its host, read it
// through src/hw and judge the waiters round by round.
import type { EngineSample } from '../../src/backend.js';
import type { EmuUnit } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { openHwBackend } from '../../src/hw/index.js';
import { judgeWaiters, newStrandTrack, type WaiterJudgement } from '../../src/progress/strand.js';

/** Virtual ms between rounds. */
export const INTERVAL_MS = 100;

/** Step the emulator, render its host, read it through src/hw and judge the waiters, round by round. */
export async function observe(
  u: EmuUnit,
  dir: string,
  fromMs: number,
  untilMs: number,
  onRound: (t: number, js: WaiterJudgement[]) => void,
): Promise<void> {
  u.runUntilMs(fromMs);
  await writeSysroot(u, dir);
  const hw = await openHwBackend({ sysroot: dir });
  const track = newStrandTrack();
  try {
    const unit = await hw.unit(0);
    for (let t = fromMs; t <= untilMs; t += INTERVAL_MS) {
      if (t > fromMs) {
        u.runUntilMs(t);
        await writeSysroot(u, dir);
      }
      // The rendered files carry no clock: time the samples with the emulator's.
      const engines: EngineSample[] = (await unit.sample()).map((s) => ({ ...s, timeMs: t }));
      const w = await unit.waiters?.();
      if (!w) throw new Error('the live backend lists no waiters');
      onRound(t, judgeWaiters(track, { ...w, timeMs: t }, engines, { strandMs: 200 }));
    }
  } finally {
    await hw.close();
  }
}
