// The shipped alert rules against what the exporter really serves: the series of a rendered host,
// read round by round through src/hw, held for 20 minutes as promtool's input. A QP stranded on
// engine 11 of an hfi2 window 8-11 fires the stranded alert for engine 11 and nothing else; a healthy
// host of each flavour fires nothing.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type EmuCliOptions as EmuOptions, emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { sysrootMetrics } from '../export/harness.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('truth-alerts-');

const RULES = fileURLToPath(new URL('../../deploy/prometheus/hfi1-sdma.rules.yml', import.meta.url));
const hasPromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;

/** The exporter's text after stepping the emulated host `rounds` times, 150 ms apart, through a rendered sysroot. */
async function exported(opts: Partial<EmuOptions>, fromMs: number, rounds: number): Promise<string> {
  const root = tmp();
  const u = emuUnitFromOptions({
    seed: 5,
    engines: undefined,
    firstEngine: undefined,
    chip: undefined,
    driver: undefined,
    ports: undefined,
    descqCnt: undefined,
    workload: 'qp:gbps=10',
    atMs: undefined,
    fault: [],
    ...opts,
  } as EmuOptions);
  u.runUntilMs(fromMs);
  await writeSysroot(u, root);
  return sysrootMetrics(root, rounds, 150, fromMs, async (now) => {
    u.runUntilMs(now);
    await writeSysroot(u, root);
  });
}

/** Run promtool on `text` held for 20 minutes, expecting exactly `alerts` firing at 15 minutes; its verdict. */
function promtool(text: string, alerts: Record<string, string>[]): { ok: boolean; out: string } {
  const series = text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      const labels = [m[2], 'job="hfi1-sdma"', 'instance="n1"'].filter(Boolean).join(',');
      return { series: `${m[1]}{${labels}}`, values: `${m[3]}x20` };
    });
  series.push({ series: 'up{job="hfi1-sdma",instance="n1"}', values: '1x20' });
  const sample = (a: Record<string, string>) => {
    const all = { ...a, alertstate: 'firing', instance: 'n1', job: 'hfi1-sdma' };
    const labels = Object.keys(all)
      .sort()
      .map((k) => `${k}="${all[k as keyof typeof all]}"`)
      .join(',');
    return { labels: `ALERTS{${labels}}`, value: 1 };
  };
  const test = {
    rule_files: [RULES],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: series,
        promql_expr_test: [{ expr: 'ALERTS{alertstate="firing"}', eval_time: '15m', exp_samples: alerts.map(sample) }],
      },
    ],
  };
  const file = join(tmp(), 'test.yml');
  writeFileSync(file, JSON.stringify(test));
  const r = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

const HFI2 = { chip: 'jkr', driver: 'hfi2', ports: 2, engines: 4, firstEngine: 8 } as const;

describe.skipIf(!hasPromtool)(
  'the shipped alert rules on what the exporter serves (skipped only when promtool is not installed)',
  () => {
    it('a QP stranded on engine 11 of an hfi2 window 8-11 fires the stranded alert for engine 11, and nothing else', async () => {
      const text = await exported({ ...HFI2, fault: ['lost-wakeup@500:11'] }, 700, 4);
      expect(text).toMatch(/^hfi1_sdma_stranded_waiters\{unit="hfi2_0",engine="11"\} 1$/m);
      const r = promtool(text, [{ alertname: 'Hfi1SdmaStrandedWaiter', engine: '11', severity: 'critical', unit: 'hfi2_0' }]);
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
        const r = promtool(await exported({ workload: 'qp:gbps=1', ...opts }, 200, 4), []);
        expect(r.ok, r.out).toBe(true);
      });
    }
  },
);
