// The shipped alert rules over a long virtual horizon: an emulated host rendered as a sysroot and read back by the
// exporter's sampler (through src/hw, as on a host) at every scrape of a Prometheus that scrapes it every SCRAPE_MS
// of virtual time; every scrape's series become promtool's input (one value per scrape, `_` where a series was not
// served), the rules are evaluated every SCRAPE_MS, and promtool is asked which alerts were pending or firing at any
// time. Time is the emulator's: nothing here waits on the wall clock.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type EmuCliOptions, emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { Sampler } from '../../src/export/sampler.js';
import { openHwBackend } from '../../src/hw/index.js';
import { RULES } from './prometheus.js';
import { emuOptions } from './rendered-host.js';
import { spawnSync } from './spawn.js';

/** Prometheus's scrape and rule evaluation interval in the shipped prometheus.yml (ms). */
export const SCRAPE_MS = 15_000;

/** The `for:` of each alert of the shipped rules (ms; 0 when it fires at once). */
export function alertFors(rules = RULES): Map<string, number> {
  const out = new Map<string, number>();
  let current: string | null = null;
  for (const line of readFileSync(rules, 'utf8').split('\n')) {
    const a = /^\s+- alert: (\S+)/.exec(line);
    if (a) {
      current = a[1] as string;
      out.set(current, 0);
      continue;
    }
    const f = /^\s+for: (\d+)([smh])$/.exec(line);
    if (f && current) out.set(current, Number(f[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[f[2] as 's' | 'm' | 'h']);
  }
  return out;
}

/** Every scrape's sample lines, parsed: series (name and labels, as served) → value. */
type Scrape = Map<string, string>;

function parseScrape(text: string): Scrape {
  const out: Scrape = new Map();
  for (const line of text.split('\n')) {
    // The exporter serves an emulated tree, so build_info says emulated and Hfi1SdmaExporterEmulated fires on every
    // scenario by design: the rules' verdict on the engines and ports is what is asked.
    if (line === '' || line.startsWith('#') || line.startsWith('hfi1_sdma_build_info')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    out.set(`${m[1]}${m[2] ?? '{}'}`, m[3] as string);
  }
  return out;
}

/** How a horizon is run: the host, from when, for how long (all virtual ms). */
export interface HorizonRun {
  opts: Partial<EmuCliOptions>;
  /** The virtual time of the first scrape (the exporter starts then). */
  startMs: number;
  /** How long Prometheus scrapes it: the one parameter that sets how much of every `for:` is reached. */
  horizonMs: number;
}

/** What the exporter served at each scrape, SCRAPE_MS apart from `startMs` to `startMs + horizonMs`. */
export async function scrapesOver(root: string, run: HorizonRun): Promise<Scrape[]> {
  const u = emuUnitFromOptions(emuOptions(run.opts));
  u.runUntilMs(run.startMs);
  await writeSysroot(u, root);
  const hw = await openHwBackend({ sysroot: root, clock: { nowMs: () => u.nowMs } });
  // The sampler's own samples within a scrape (a waiter being confirmed) move the emulator on, as wall time would.
  const host = Object.assign(Object.create(hw) as typeof hw, {
    async advanceMs(ms: number) {
      u.runUntilMs(u.nowMs + ms);
      await writeSysroot(u, root);
    },
  });
  const sampler = new Sampler({
    backend: host,
    buildInfo: { version: '0.0.0', backend: 'hw', emulated: true },
    minIntervalMs: 1000,
    stallMs: 1000,
    strandMs: 200,
    nowMs: () => u.nowMs,
    log: () => {},
    sleep: async () => {},
  });
  const out: Scrape[] = [];
  try {
    for (let t = run.startMs; t <= run.startMs + run.horizonMs; t += SCRAPE_MS) {
      if (t > u.nowMs) {
        u.runUntilMs(t);
        await writeSysroot(u, root);
      }
      await sampler.refresh();
      out.push(parseScrape(await sampler.metrics.text.metrics()));
    }
  } finally {
    await sampler.close();
    await hw.close();
  }
  return out;
}

/** One alert as promtool reports it: its name, state and the labels that say where. */
export interface AlertSeen {
  alertname: string;
  alertstate: 'pending' | 'firing';
  where: Record<string, string>;
}

/** The labels that say where an alert is (the rest are the rule's own, or the expression's verdict labels). */
const WHERE = ['unit', 'engine', 'device', 'port'] as const;

/** Parse promtool's `got:` list of `{labels} value` items. */
function parseGot(out: string): AlertSeen[] | null {
  const m = /got: (nil|\{.*)$/m.exec(out);
  if (!m) return null;
  if (m[1] === 'nil') return [];
  return [...(m[1] as string).matchAll(/\{([^}]*)\} [0-9.E+-]+/g)].map((g) => {
    const labels = Object.fromEntries([...(g[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const where = Object.fromEntries(WHERE.filter((k) => labels[k] !== undefined).map((k) => [k, labels[k] as string]));
    return { alertname: labels.alertname ?? '', alertstate: labels.alertstate as 'pending' | 'firing', where };
  });
}

/**
 * Every alert that was pending or firing at some evaluation over the scrapes, as promtool evaluates the shipped rules
 * (every SCRAPE_MS, as prometheus.yml does). Throws with promtool's output when it cannot tell.
 */
export function alertsOver(dir: string, scrapes: readonly Scrape[]): AlertSeen[] {
  const names = [...new Set(scrapes.flatMap((s) => [...s.keys()]))].sort();
  const input_series = names.map((name) => {
    const brace = name.indexOf('{');
    const labels = name.slice(brace + 1, -1);
    const series = `${name.slice(0, brace)}{${[labels, 'job="hfi1-sdma"', 'instance="n1"'].filter(Boolean).join(',')}}`;
    return { series, values: scrapes.map((s) => s.get(name) ?? '_').join(' ') };
  });
  input_series.push({ series: 'up{job="hfi1-sdma",instance="n1"}', values: scrapes.map(() => '1').join(' ') });
  const endS = ((scrapes.length - 1) * SCRAPE_MS) / 1000;
  const by = `alertname, alertstate, ${WHERE.join(', ')}`;
  const test = {
    rule_files: [RULES],
    evaluation_interval: `${SCRAPE_MS / 1000}s`,
    tests: [
      {
        interval: `${SCRAPE_MS / 1000}s`,
        input_series,
        // An expectation nothing meets: promtool then lists what it got, which is the answer.
        promql_expr_test: [
          {
            expr: `group by (${by}) (max_over_time(ALERTS[${endS + SCRAPE_MS / 1000}s]))`,
            eval_time: `${endS}s`,
            exp_samples: [{ labels: '{alertname="none"}', value: 1 }],
          },
        ],
      },
    ],
  };
  const file = join(dir, 'horizon.test.yml');
  writeFileSync(file, JSON.stringify(test));
  const r = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const out = `${r.stdout}${r.stderr}`;
  const got = parseGot(out);
  if (got === null) throw new Error(`promtool gave no answer to read:\n${out}`);
  return got;
}
