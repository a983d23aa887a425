// The operator commands over a hand-built live-host tree: full and reduced views.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeTree } from '../hw/sysroot.js';
import { runCli } from '../support/cli.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tree(o: Parameters<typeof writeTree>[1]): string {
  const d = mkdtempSync(join(tmpdir(), 'hw-views-'));
  dirs.push(d);
  writeTree(d, o);
  return d;
}

describe('engines on a live-host tree', () => {
  it('says nothing on stderr when sdes and counters are readable (a refused BAR is not worth a warning)', async () => {
    const r = await runCli(['--sysroot', tree({}), 'engines']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/backend hw\s+sources sdes, counters/);
  });

  it('shows the reduced view without debugfs and says what is missing and why', async () => {
    const r = await runCli(['--sysroot', tree({ debugfs: 'absent', hwCounters: { 'SDMAInt0,32': '5\n' } }), 'engines']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/hfi1_0: reduced view; not readable: sdes: .+; bar: .+\. Run 'hfi1-sdma doctor'/);
    expect(r.stdout).toMatch(/hfi1_0\/0\s+-/);
  });

  it('auto picks the live host when the tree has a unit, and says nothing about the emulator', async () => {
    const r = await runCli(['--sysroot', tree({}), 'engines', '--json']);
    expect(JSON.parse(r.stdout).backend).toBe('hw');
    expect(r.stderr).not.toMatch(/emulator/);
  });

  it('an explicit --sysroot without a unit never falls back to the emulator: exit 66 naming the tree', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'hw-views-'));
    dirs.push(empty);
    const r = await runCli(['--sysroot', empty, '--at-ms', '5', '--engines', '2', 'engines', '--json']);
    expect(r.code).toBe(66);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/no hfi1 or hfi2 unit/);
    expect(r.stderr).not.toMatch(/using the emulator/);
  });

  it.each([['/nonexistent-sysroot'], ['/etc/passwd']])('--sysroot %s exits 66 naming the path', async (path) => {
    const r = await runCli(['--sysroot', path, 'engines']);
    expect(r.code).toBe(66);
    expect(r.stderr).toContain(path);
    expect(r.stdout).toBe('');
  });
});
