// The shipped alert rules against what the exporter really serves: the series of a rendered host,
// read round by round through src/hw, held for 20 minutes as promtool's input. A QP stranded on
// engine 11 of an hfi2 window 8-11 fires the stranded alert for engine 11 and nothing else; a healthy
// host of each flavour fires nothing.
import { describe, expect, it } from 'vitest';
import { type EmuCliOptions as EmuOptions, emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { sysrootMetrics } from '../export/harness.js';
import { hasPromtool, promtoolAlerts } from '../support/promtool.js';
import { emuOptions } from '../support/rendered-host.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('truth-alerts-');

/** The exporter's text after stepping the emulated host `rounds` times, 150 ms apart, through a rendered sysroot. */
async function exported(opts: Partial<EmuOptions>, fromMs: number, rounds: number): Promise<string> {
  const root = tmp();
  const u = emuUnitFromOptions(emuOptions({ seed: 5, workload: 'qp:gbps=10', ...opts }));
  u.runUntilMs(fromMs);
  await writeSysroot(u, root);
  return sysrootMetrics(root, rounds, 150, fromMs, async (now) => {
    u.runUntilMs(now);
    await writeSysroot(u, root);
  });
}

const HFI2 = { chip: 'jkr', driver: 'hfi2', ports: 2, engines: 4, firstEngine: 8 } as const;

describe.skipIf(!hasPromtool)(
  'the shipped alert rules on what the exporter serves (skipped only when promtool is not installed)',
  () => {
    it('a QP stranded on engine 11 of an hfi2 window 8-11 fires the stranded alert for engine 11, and nothing else', async () => {
      const text = await exported({ ...HFI2, fault: ['lost-wakeup@500:11'] }, 700, 4);
      expect(text).toMatch(/^hfi1_sdma_stranded_waiters\{unit="hfi2_0",engine="11"\} 1$/m);
      const r = promtoolAlerts(tmp(), text, [
        { alertname: 'Hfi1SdmaStrandedWaiter', engine: '11', severity: 'critical', unit: 'hfi2_0' },
      ]);
      expect(r.ok, r.out).toBe(true);
    });

    const healthy: [string, Partial<EmuOptions>][] = [
      ['upstream hfi1 on WFR', { engines: 4 }],
      ['the Cornelis hfi1 on a CN5000 with two ports', { chip: 'jkr', driver: 'cornelis', ports: 2, engines: 2 }],
      ['hfi2 on engines 8-11 of a CN5000', HFI2],
      ['hfi2 on WFR', { chip: 'wfr', driver: 'hfi2', engines: 4 }],
    ];
    for (const [what, opts] of healthy) {
      it(`${what}, healthy: no alert fires`, async () => {
        // A light load: every engine busy, few descriptors to emulate (a CN5000 pads each request to 32).
        const r = promtoolAlerts(tmp(), await exported({ workload: 'qp:gbps=1', ...opts }, 200, 4), []);
        expect(r.ok, r.out).toBe(true);
      });
    }
  },
);
