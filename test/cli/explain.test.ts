// `explain`: every code any output can print (findings, alert annotations, the manual page) is explained, codes
// are unique, and an unknown code is a usage error that says where the list is.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FINDING_KINDS } from '../../src/monitor/codes.js';
import { EXPLANATIONS } from '../../src/monitor/explain.js';
import { ROOT } from '../support/child.js';
import { runCli } from '../support/cli.js';

const CODES: string[] = Object.values(FINDING_KINDS).map((k) => k.code);

/** Every SDnnn written anywhere in `dir` (recursively), with the file. */
function codesIn(dir: string): [string, string][] {
  const out: [string, string][] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...codesIn(p));
    else for (const m of readFileSync(p, 'utf8').matchAll(/\bSD\d{3}\b/g)) out.push([m[0], p]);
  }
  return out;
}

describe('explain', () => {
  it('every code is unique and has each part of its explanation', () => {
    expect(new Set(CODES).size).toBe(CODES.length);
    for (const [kind, e] of Object.entries(EXPLANATIONS)) {
      for (const part of ['meaning', 'kernel', 'confirm', 'action', 'capture'] as const)
        expect(e[part].length, `${kind}.${part}`).toBeGreaterThan(8);
    }
  });

  it('every code printed by the program, the alert rules or the manual page is one explain knows', () => {
    const seen = [...codesIn(join(ROOT, 'src')), ...codesIn(join(ROOT, 'deploy')), ...codesIn(join(ROOT, 'man'))];
    expect(seen.length).toBeGreaterThan(20);
    expect(seen.filter(([c]) => !CODES.includes(c))).toEqual([]);
    const man = readFileSync(join(ROOT, 'man/hfi1-sdma.8.md'), 'utf8');
    expect(man).toContain('<!-- findings -->');
    const page = readFileSync(join(ROOT, 'man/hfi1-sdma.8'), 'utf8');
    for (const c of CODES) expect(page, c).toContain(c);
  });

  it('lists every code, explains one in five parts, and refuses an unknown one (64)', async () => {
    const list = await runCli(['explain']);
    expect(list.code).toBe(0);
    for (const c of CODES) expect(list.stdout).toContain(c);
    const one = await runCli(['explain', 'sd201']);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^SD201 sender stranded \(lost wake-up\) \(critical by default; health count stranded\)/);
    for (const head of ['What it means:', 'In the kernel:', 'To confirm:', 'What to do:', 'What to capture:'])
      expect(one.stdout).toContain(head);
    const json = JSON.parse((await runCli(['--json', 'explain', 'SD101'])).stdout);
    expect(json).toMatchObject({ code: 'SD101', kind: 'stalled', severity: 'critical', count: 'stalled' });
    const bad = await runCli(['explain', 'SD999']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/no finding has the code "SD999": 'hfi1-sdma explain' lists them/);
    // The range it gives runs to the last code there is.
    const last = [...CODES].sort().at(-1) as string;
    expect(bad.stderr).toContain(`(SD101 … ${last})`);
  });

  it('emu --help lists every workload and fault by name', async () => {
    const help = (await runCli(['emu', '--help'])).stdout;
    for (const w of ['mixed', 'line-rate', 'qp', 'psm']) expect(help).toMatch(new RegExp(`Workloads [^]*\\b${w}\\b`));
    for (const f of ['stop-fetch', 'lost-wakeup', 'fabric-stall', 'device-gone', 'ipoib-timeout'])
      expect(help).toMatch(new RegExp(`Faults [^]*\\b${f}\\b`));
  });
});
