// The shipped alert rules run by promtool over what the exporter served: which alerts fire when those series are
// held for 20 minutes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onPath } from './on-path.js';
import { spawnSync } from './spawn.js';

const RULES = fileURLToPath(new URL('../../deploy/prometheus/hfi1-sdma.rules.yml', import.meta.url));

/** Whether promtool can be run here. */
export const hasPromtool = onPath('promtool');

/**
 * Run promtool on what the exporter served, expecting exactly `alerts` firing at 15 minutes; its verdict. One text
 * is held for 20 minutes; several (one per round) come a minute apart, the last held to 20 minutes, so counters that
 * rose between rounds rise in the rules' eyes too (a series missing from a round has no sample there). The
 * exporter's own counters start at 0 when it starts: each is given a 0 a minute before the first round.
 */
export function promtoolAlerts(
  dir: string,
  text: string | readonly string[],
  alerts: Record<string, string>[],
): { ok: boolean; out: string } {
  const test = { rule_files: [RULES], evaluation_interval: '1m', tests: [alertTest(text, alerts)] };
  const file = join(dir, 'test.yml');
  writeFileSync(file, JSON.stringify(test));
  const r = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

/**
 * promtoolAlerts for many hosts in one promtool run (one test group each, evaluated apart): each case's verdict, in
 * order. A failure promtool reports is the case's whose expression it quotes (each is marked with a comment naming
 * its case); one it cannot place (the file refused) fails every case, with the whole output.
 */
export function promtoolAlertsEach(
  dir: string,
  cases: readonly { text: string | readonly string[]; alerts: Record<string, string>[] }[],
): { ok: boolean; out: string }[] {
  const mark = (i: number) => `# case ${i}`;
  const tests = cases.map((c, i) => {
    const t = alertTest(c.text, c.alerts);
    for (const e of t.promql_expr_test) e.expr = `${e.expr} ${mark(i)}`;
    return t;
  });
  const file = join(dir, 'each.test.yml');
  writeFileSync(file, JSON.stringify({ rule_files: [RULES], evaluation_interval: '1m', tests }));
  const r = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const out = `${r.stdout}${r.stderr}`;
  if (r.status === 0) return cases.map(() => ({ ok: true, out }));
  // promtool lists each failed expectation as an `expr: "…"` line and the lines under it.
  const blocks = out.split(/(?=^\s*expr: )/m);
  const placed = cases.map((_, i) => blocks.filter((b) => b.includes(`${mark(i)}"`)).join(''));
  if (placed.every((b) => b === '')) return cases.map(() => ({ ok: false, out }));
  return placed.map((b) => ({ ok: b === '', out: b }));
}

/** One promtool test group: the rounds of `text` as input series, and `alerts` as exactly what fires at 15 minutes. */
function alertTest(text: string | readonly string[], alerts: Record<string, string>[]) {
  const texts = typeof text === 'string' ? [text] : text;
  const rounds = texts.map((t) => {
    const byName = new Map<string, string>();
    for (const l of t.split('\n')) {
      // build_info says whether the numbers are the emulator's: the rules' verdict on the engines is what is tested.
      if (l === '' || l.startsWith('#') || l.startsWith('hfi1_sdma_build_info')) continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      const labels = [m[2], 'job="hfi1-sdma"', 'instance="n1"'].filter(Boolean).join(',');
      byName.set(`${m[1]}{${labels}}`, m[3] as string);
    }
    return byName;
  });
  const names = [...new Set(rounds.flatMap((r) => [...r.keys()]))];
  const OWN = /^hfi1_sdma_(psm_stalls|stalls)_total\{/;
  const series = names.map((name) => {
    const values = [...(OWN.test(name) ? ['0'] : []), ...rounds.map((r) => r.get(name) ?? '_')];
    const hold = 21 - values.length;
    const last = values.at(-1) as string;
    return { series: name, values: `${values.slice(0, -1).join(' ')} ${last === '_' ? `_x${hold}` : `${last}x${hold}`}`.trim() };
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
  return {
    interval: '1m',
    input_series: series,
    promql_expr_test: [{ expr: 'ALERTS{alertstate="firing"}', eval_time: '15m', exp_samples: alerts.map(sample) }],
  };
}
