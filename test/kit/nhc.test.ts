// The NHC check (deploy/nhc/hfi1_sdma.nhc) under bash, with stand-ins for NHC's die and log, against emulated hosts:
// a stall dies with its code and text (the node is drained), a healthy host under full load says nothing, a
// warning and an unknown are logged without a die.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../support/child.js';

const NHC = join(ROOT, 'deploy/nhc/hfi1_sdma.nhc');

/** Run check_hfi1_sdma with `hfi1-sdma` being `emu…` on the emulator; what die and log were called with, and the status. */
function check(emu: string, args = ''): { status: number | null; died: string; logged: string } {
  const script = [
    'died=; logged=',
    'die() { died="$2"; }',
    'log() { logged="$logged$1|"; }',
    `. ${NHC}`,
    `HFI1_SDMA="${process.execPath} ${BIN} --backend emu --engines 4 ${emu}"`,
    `check_hfi1_sdma ${args}`,
    'rc=$?',
    'printf "%s\\n%s\\n" "$died" "$logged"',
    'exit $rc',
  ].join('\n');
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  const [died = '', logged = ''] = r.stdout.split('\n');
  return { status: r.status, died, logged };
}

describe('check_hfi1_sdma under NHC', () => {
  it('a stalled engine dies with the finding (the node is drained)', () => {
    const r = check('--fault stop-fetch@30:2', '--stall-ms 400');
    expect(r.status).toBe(1);
    expect(r.died).toMatch(/^check_hfi1_sdma: HFI1-SDMA CRITICAL - emulator: SD101 hfi1_0 sdma2 stalled \(chip-not-fetching\)/);
    expect(r.died).not.toContain('|');
  });

  it('a healthy host at line rate says nothing and stays', () => {
    expect(check('--workload line-rate', '--stall-ms 400')).toEqual({ status: 0, died: '', logged: '' });
  });

  it('a warning is logged and the node stays; so is an answer that cannot judge', () => {
    const warn = check('--workload idle --fault link-down@10', '--stall-ms 400');
    expect(warn).toMatchObject({ status: 0, died: '' });
    expect(warn.logged).toMatch(/^check_hfi1_sdma: HFI1-SDMA WARNING - emulator: SD305 /);
    const unknown = check('', '--stall-ms 5000 -t 2');
    expect(unknown).toMatchObject({ status: 0, died: '' });
    expect(unknown.logged).toMatch(/^check_hfi1_sdma: cannot judge the SDMA engines: HFI1-SDMA UNKNOWN/);
  });
});
