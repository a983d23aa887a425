// The NHC check (deploy/nhc/hfi1_sdma.nhc) under bash, with stand-ins for NHC's die and log and NHC's own PATH,
// against emulated hosts: a stall dies with its code first (the drain reason `sinfo -R` groups by), a fabric stall
// is only logged unless HFI1_SDMA_DRAIN_OFF_HOST=1, a healthy host under full load says nothing, a warning and an
// unknown are logged without a die, and a command that cannot be found or run dies as NHC's checks do for a
// missing prerequisite. The command's answers are hfi1-sdma's own, run in this process and handed to the check by a
// stand-in command; the installed command run by the check under a real NHC setup is test/e2e/fleet-slurm.test.ts.

import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

const NHC = join(ROOT, 'deploy/nhc/hfi1_sdma.nhc');
const tempDir = tempDirs('hfi1-sdma-nhc-');
/** The PATH NHC sets before it runs any check (nhcmain_init_env, nhc 1.4). */
const NHC_PATH = '/sbin:/usr/sbin:/bin:/usr/bin';

/** Run check_hfi1_sdma under NHC's PATH with `setup` (shell lines) before it; what die and log were called with. */
function runCheck(setup: string[], args = ''): { status: number | null; died: string; logged: string } {
  const script = [
    'died=; logged=',
    'die() { died="$2"; }',
    'log() { logged="$logged$1|"; }',
    `PATH=${NHC_PATH}`,
    `. ${NHC}`,
    ...setup,
    `check_hfi1_sdma ${args}`,
    'rc=$?',
    'printf "%s\\n%s\\n" "$died" "$logged"',
    'exit $rc',
  ].join('\n');
  const r = spawnSync('/bin/bash', ['-c', script], { encoding: 'utf8', timeout: 60_000, env: { HOME: '/tmp' } });
  const [died = '', logged = ''] = r.stdout.split('\n');
  return { status: r.status, died, logged };
}

const words = (s: string) => s.split(' ').filter((w) => w !== '');

/**
 * The check with `hfi1-sdma` being the emulator with `emu` options. The check must call `hfi1-sdma health --brief`
 * with `--off-host warning` unless HFI1_SDMA_DRAIN_OFF_HOST=1, then its arguments: that command runs here, in
 * process (the same main() the installed command runs, the emulator in virtual time either way), and HFI1_SDMA is a
 * stand-in that records the arguments it is given, prints the answer (stderr first: a warning on stderr comes
 * before the status line) and exits with its status.
 */
async function check(emu: string, args = '', o: { drainOffHost?: boolean } = {}) {
  const argv = ['health', '--brief', ...(o.drainOffHost ? [] : ['--off-host', 'warning']), ...words(args)];
  const answer = await runCli(['--backend', 'emu', '--engines', '4', ...words(emu), ...argv]);
  const dir = tempDir();
  const standIn = join(dir, 'hfi1-sdma');
  writeFileSync(join(dir, 'answer'), answer.stderr + answer.stdout);
  writeFileSync(standIn, `#!/bin/sh\nprintf '%s\\n' "$@" > ${dir}/argv\ncat ${dir}/answer\nexit ${answer.code}\n`);
  chmodSync(standIn, 0o755);
  const r = runCheck([`HFI1_SDMA=${standIn}`, ...(o.drainOffHost ? ['HFI1_SDMA_DRAIN_OFF_HOST=1'] : [])], args);
  expect(readFileSync(join(dir, 'argv'), 'utf8'), 'the arguments the check gave hfi1-sdma').toBe(
    argv.map((a) => `${a}\n`).join(''),
  );
  return r;
}

describe('check_hfi1_sdma under NHC', () => {
  it('a stalled engine dies with the code and place first (the node is drained, sinfo -R groups by them)', async () => {
    const r = await check('--workload mixed:gbps=10 --fault stop-fetch@30:2', '--stall-ms 400 -t 60');
    expect(r.status).toBe(1);
    expect(r.died).toBe('SD101 hfi1_0 sdma2 stalled (emulator); hfi1-sdma explain SD101');
    // NHC's Slurm helper prefixes "NHC: ": the first 20 characters of the reason carry the code and the unit.
    expect(`NHC: ${r.died}`.slice(0, 20)).toBe('NHC: SD101 hfi1_0 sd');
  });

  it('a fabric stall is logged, not drained; HFI1_SDMA_DRAIN_OFF_HOST=1 drains for it', async () => {
    const kept = await check('--workload mixed:gbps=10 --fault fabric-stall@30', '--stall-ms 400 -t 60');
    expect(kept).toMatchObject({ status: 0, died: '' });
    expect(kept.logged).toBe('check_hfi1_sdma: WARNING SD109 hfi1_0 port1 fabric-stall (emulator)|');
    const drained = await check('--workload mixed:gbps=10 --fault fabric-stall@30', '--stall-ms 400 -t 60', {
      drainOffHost: true,
    });
    expect(drained.status).toBe(1);
    expect(drained.died).toMatch(/^SD109 hfi1_0 port1 fabric-stall /);
  });

  it('a healthy host at line rate says nothing and stays', async () => {
    expect(await check('--workload line-rate:gbps=10', '--stall-ms 400 -t 60')).toEqual({ status: 0, died: '', logged: '' });
  });

  it('a warning is logged and the node stays; so is an answer that cannot judge', async () => {
    const warn = await check('--workload idle --fault link-down@10', '--stall-ms 400 -t 60');
    expect(warn).toMatchObject({ status: 0, died: '' });
    expect(warn.logged).toMatch(/^check_hfi1_sdma: WARNING SD305 hfi1_0 no-active-port /);
    const unknown = await check('', '--stall-ms 5000 -t 2');
    expect(unknown).toMatchObject({ status: 0, died: '' });
    expect(unknown.logged).toMatch(/^check_hfi1_sdma: cannot judge the SDMA engines: UNKNOWN --stall-ms 5000 needs/);
    // A check line with a typo is logged, not taken for a command that cannot run.
    const typo = await check('', '--stal-ms 400');
    expect(typo).toMatchObject({ status: 0, died: '' });
    expect(typo.logged).toMatch(/^check_hfi1_sdma: cannot judge the SDMA engines: UNKNOWN .*--stal-ms/);
  });

  it('a command not on NHC’s PATH, or not runnable, dies saying so', () => {
    const missing = runCheck([]);
    expect(missing.status).toBe(1);
    expect(missing.died).toBe(
      `check_hfi1_sdma:  hfi1-sdma not found on PATH (${NHC_PATH}): install it with npm install -g --prefix /usr, or set HFI1_SDMA`,
    );
    const gone = runCheck(['HFI1_SDMA=/nonexistent/hfi1-sdma']);
    expect(gone.status).toBe(1);
    expect(gone.died).toMatch(/^check_hfi1_sdma: {2}\/nonexistent\/hfi1-sdma not found or not runnable \(exit 127\): /);
    // Installed where npm puts it with a shebang naming node, on a host whose node is not on NHC's PATH either.
    const dir = tempDir();
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin/hfi1-sdma'), '#!/usr/bin/env nodejs-not-here\n');
    chmodSync(join(dir, 'bin/hfi1-sdma'), 0o755);
    const noNode = runCheck([`PATH=${join(dir, 'bin')}:$PATH`]);
    expect(noNode.status).toBe(1);
    expect(noNode.died).toMatch(/not found or not runnable \(exit 127\): .*nodejs-not-here/);
  });
});
