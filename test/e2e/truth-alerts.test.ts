// The shipped alert rules against what the exporter really serves: the series of a rendered host,
// read round by round through src/hw, held for 20 minutes as promtool's input. A QP stranded on
// engine 11 of an hfi2 window 8-11 fires the stranded alert for engine 11 and nothing else; a healthy
// host of each flavour fires nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { type EmuCliOptions as EmuOptions, emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { sysrootMetrics } from '../export/harness.js';
import { hasPromtool, promtoolAlertsEach } from '../support/promtool.js';
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

const STRANDED = 'a QP stranded on engine 11 of an hfi2 window 8-11';
const HEALTHY: [string, Partial<EmuOptions>][] = [
  ['upstream hfi1 on WFR', { engines: 4 }],
  ['the Cornelis hfi1 on a CN5000 with two ports', { chip: 'jkr', driver: 'cornelis', ports: 2, engines: 2 }],
  ['hfi2 on engines 8-11 of a CN5000', HFI2],
  ['hfi2 on WFR', { chip: 'wfr', driver: 'hfi2', engines: 4 }],
];

describe.skipIf(!hasPromtool)(
  'the shipped alert rules on what the exporter serves (skipped only when promtool is not installed)',
  () => {
    // Every host's series, and the rules run over all of them in one promtool run (a test group each).
    const texts = new Map<string, string>();
    const verdicts = new Map<string, { ok: boolean; out: string }>();
    beforeAll(async () => {
      texts.set(STRANDED, await exported({ ...HFI2, fault: ['lost-wakeup@500:11'] }, 700, 4));
      // A light load: every engine busy, few descriptors to emulate (a CN5000 pads each request to 32).
      for (const [what, opts] of HEALTHY) texts.set(what, await exported({ workload: 'qp:gbps=1', ...opts }, 200, 4));
      const cases = [
        {
          what: STRANDED,
          alerts: [{ alertname: 'Hfi1SdmaStrandedWaiter', engine: '11', severity: 'critical', unit: 'hfi2_0' }],
        },
        ...HEALTHY.map(([what]) => ({ what, alerts: [] })),
      ];
      const each = promtoolAlertsEach(
        tmp(),
        cases.map((c) => ({ text: texts.get(c.what) as string, alerts: c.alerts })),
      );
      for (const [i, c] of cases.entries()) verdicts.set(c.what, each[i] as { ok: boolean; out: string });
    });

    it(`${STRANDED} fires the stranded alert for engine 11, and nothing else`, () => {
      expect(texts.get(STRANDED)).toMatch(/^hfi1_sdma_stranded_waiters\{unit="hfi2_0",engine="11"\} 1$/m);
      const r = verdicts.get(STRANDED);
      expect(r?.ok, r?.out).toBe(true);
    });

    for (const [what] of HEALTHY) {
      it(`${what}, healthy: no alert fires`, () => {
        const r = verdicts.get(what);
        expect(r?.ok, r?.out).toBe(true);
      });
    }
  },
);
