// A gone device is gone everywhere: no state, not running, exit 69 after printing what could be
// printed, one line on stderr saying what to do; health is CRITICAL with one line per unit.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';

// Every register reads all-ones; the software side (host memory) is still readable.
const gone: Script = () => ({ dh: 100, dt: 140, gone: true, err: 0xffff_ffffn });
const run = (argv: string[]) => runCli(argv, {}, false, '', new FakeBackend(gone, 16));

describe('device gone, in-process', () => {
  it('engines --json: state null, running false, no CSRs, exit 69 with one line on stderr', async () => {
    const r = await run(['engines', '--json']);
    expect(r.code).toBe(69);
    const engines = JSON.parse(r.stdout).units[0].engines;
    expect(engines).toHaveLength(16);
    for (const e of engines) expect(e).toMatchObject({ gone: true, state: null, running: false, csr: null, errors: [] });
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/hfi1_0: device gone: .*check 'dmesg' and 'lspci -s 0000:05:00\.0'/);
  });

  it.each([
    [['show', '3']],
    [['show', '3', '--json']],
    [['ring', '3']],
    [['fit', '3', '--num-desc', '4']],
    [['progress', '3', '--num-desc', '4']],
    [['watch', '--count', '3']],
  ])('%j prints what it can and exits 69', async (argv) => {
    const r = await run(argv);
    expect(r.code).toBe(69);
    expect(r.stdout).not.toBe('');
    expect(r.stderr).toMatch(/device gone/);
  });

  it('show --json says no state and not running', async () => {
    const r = await run(['show', '3', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ gone: true, state: null, running: false, csr: null });
  });

  it('health is CRITICAL with one line for the unit, not one per engine', async () => {
    const r = await run(['health']);
    expect(r.code).toBe(2);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^HFI1-SDMA CRITICAL - emulator: SD301 hfi1_0 \(0000:05:00\.0\) gone/);
    expect(lines.filter((l) => l.startsWith('CRITICAL:'))).toHaveLength(1);
    expect(r.stdout).toMatch(/gone=1;;0/);
  });
});
