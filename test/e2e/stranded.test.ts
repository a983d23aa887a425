// Stranded senders end to end: the emulator's lost-wakeup fault, rendered into a sysroot and read
// by src/hw, judged by the one rule of src/progress, in the commands and the exporter.
import { describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { sysrootMetrics } from '../export/harness.js';
import { runCli } from '../support/cli.js';
import { stillHost } from '../support/rendered-host.js';
import { tempDirs } from '../support/temp.js';
import { INTERVAL_MS, observe } from './strand-support.js';

const tmp = tempDirs('stranded-e2e-');

// Eight engines serve eight VLs, one each: a waiter's printed engine is then certainly the one it
// sleeps on, and the rule can call it stranded rather than probably stranded.
const HOST = { seed: 5, engines: 8, workload: 'qp:gbps=2' };

describe('a lost wake-up through the rendered sysroot', () => {
  it('lost-wakeup@1000:5 leaves one QP stranded on engine 5, found within --strand-ms + 2 intervals, and nowhere else', async () => {
    const u = new EmuUnit({ ...HOST, faults: ['lost-wakeup@1000:5'] });
    const found: { t: number; engine: number | null; probable: boolean }[] = [];
    await observe(u, tmp(), 500, 2500, (t, js) => {
      for (const j of js) if (j.verdict === 'stranded') found.push({ t, engine: j.waiter.engine, probable: j.probable });
    });
    expect(new Set(found.map((f) => f.engine))).toEqual(new Set([5]));
    expect(found.every((f) => !f.probable)).toBe(true);
    // The fault opens the window at 1000 ms; the retirement that should have woken the QP runs
    // within a few ms after: confirmed by 200 ms of quiet plus two intervals.
    expect(Math.min(...found.map((f) => f.t))).toBeLessThanOrEqual(1000 + 50 + 200 + 2 * INTERVAL_MS);
  });

  it('waiters, health and the exporter, each reading the tree in rounds of its own, name the stranded QP on engine 5', async () => {
    const dir = tmp();
    const u = new EmuUnit({ ...HOST, faults: ['lost-wakeup@1000:5'] });
    u.runUntilMs(2000);
    await writeSysroot(u, dir);
    // The tree no longer moves: every reader sees the same idle engine and sleeping QP. The commands read it through
    // src/hw as with --sysroot, their rounds on a virtual clock.
    const w = await runCli(['waiters', '--json', '--count', '4', '--interval-ms', '100'], {}, false, '', await stillHost(dir));
    expect(w.code, w.stderr).toBe(0);
    const wj = JSON.parse(w.stdout);
    const stranded = wj.units[0].waiters.filter((x: { verdict: string }) => x.verdict === 'stranded');
    expect(stranded.map((x: { engine: number; kind: string }) => `${x.kind}@${x.engine}`)).toEqual(['qp@5']);
    const h = await runCli(['health', '--stall-ms', '500', '--strand-ms', '200'], {}, false, '', await stillHost(dir));
    expect(h.code, h.stdout).toBe(2);
    expect(h.stdout).toMatch(/CRITICAL: SD201 hfi1_0 sdma5 QP 0x[0-9a-f]+ RTS \(pid \d+ verbs_rank_\d+, user hpcuser\) stranded/);

    // The exporter's rounds are timed by the backend's clock: 150 ms apart here.
    const text = await sysrootMetrics(dir, 4, 150);
    expect(text).toMatch(/^hfi1_sdma_stranded_waiters\{unit="hfi1_0",engine="5"\} 1$/m);
    expect(text.match(/^hfi1_sdma_stranded_waiters\{[^}]*\} 1$/gm)).toHaveLength(1);
  });
});
