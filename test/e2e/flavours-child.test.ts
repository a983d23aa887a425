// A CN5000 under hfi2 with an SR-IOV-style window of engines 8-15, and the Cornelis hfi1 build, as a
// user runs them: the emulator's own view and the same host written by `emu write` and read back with
// --sysroot agree, and a stall on engine 8 is reported as engine 8. The commands run in-process (main() with
// captured streams): what is compared is what they print, not how a process starts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface EngineRow {
  engine: number;
  state: string | null;
  sw: unknown;
  csr: { ctrl: string } | null;
}
interface UnitRow {
  name: string;
  module: string;
  chip: string;
  driver: string;
  ports: number;
  engineIds: number[];
  engines: EngineRow[];
}

/** `engines --json`, with the emulator's flags or a sysroot. */
async function enginesJson(args: string[]): Promise<UnitRow[]> {
  const r = await runCli([...args, 'engines', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).units as UnitRow[];
}

/** Write the emulated host once and return its directory. */
async function written(flags: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'flavour-child-'));
  dirs.push(dir);
  const w = await runCli(['emu', 'write', '--sysroot', dir, ...flags]);
  expect(w.code, w.stderr).toBe(0);
  return dir;
}

const comparable = (u: UnitRow) => ({
  name: u.name,
  module: u.module,
  chip: u.chip,
  driver: u.driver,
  ports: u.ports,
  engineIds: u.engineIds,
  engines: u.engines.map((e) => ({ engine: e.engine, state: e.state, sw: e.sw, ctrl: e.csr?.ctrl ?? null })),
});

describe.each([
  ['--chip', 'jkr', '--driver', 'hfi2', '--ports', '2', '--engines', '8-15'],
  ['--chip', 'jkr', '--driver', 'cornelis', '--engines', '4'],
  ['--chip', 'wfr', '--driver', 'cornelis', '--engines', '4'],
  ['--chip', 'wfr', '--driver', 'upstream', '--engines', '4'],
])('engines on the emulator and through --sysroot: %s %s %s %s', (...flavour) => {
  it('agree', async () => {
    const flags = [...flavour, '--seed', '5', '--at-ms', '40'];
    const emu = await enginesJson(['--backend', 'emu', ...flags]);
    const hw = await enginesJson(['--sysroot', await written(flags)]);
    expect(hw.map(comparable)).toEqual(emu.map(comparable));
    expect(hw[0]?.chip).toBe(flavour[1]);
    expect(hw[0]?.driver).toBe(flavour[3]);
  });
});

describe('a window of engines 8-15 on a CN5000 under hfi2', () => {
  it('an engine outside the window is refused, naming the window; engine 8 is shown as engine 8', async () => {
    const dir = await written(['--chip', 'jkr', '--driver', 'hfi2', '--engines', '8-15', '--seed', '5', '--at-ms', '40']);
    const show = await runCli(['--sysroot', dir, 'show', '3']);
    expect(show.code).toBe(66);
    expect(show.stderr).toMatch(/hfi2_0 has engines 8-15/);
    const ok = await runCli(['--sysroot', dir, 'show', '8', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ engine: 8 });
  });
});
