// report reads the kernel's uptime under a sysroot as every source is read: with `proc/uptime` a link to
// /dev/ptmx, strace shows no pty opened (a plain open would allocate one; one to /dev/watchdog would arm it).
// It runs a traced child for a few seconds, so it runs under `npm run soak`; npm test checks the same read
// without strace (edges-four.test.ts).
import { readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/child.js';
import { onPath } from '../support/on-path.js';
import { SOAK } from '../support/runs.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';
import { emulatedHost } from './canary.js';

const temp = tempDirs('hfi1-uptime-strace-');
const HAS_STRACE = onPath('strace');

describe.runIf(SOAK && HAS_STRACE)('report under strace (runs with SOAK=1 where strace is installed)', () => {
  it('a tree whose proc/uptime links to /dev/ptmx: report opens no pty', async () => {
    const host = join(temp(), 'host');
    await emulatedHost(host);
    const up = join(host, 'proc/uptime');
    renameSync(up, `${up}.aside`);
    symlinkSync('/dev/ptmx', up);
    try {
      const log = join(temp(), 'st.txt');
      const args = ['--sysroot', host, 'report', '-o', join(temp(), 'r.html'), '--samples', '2', '--interval-ms', '100'];
      spawnSync('strace', ['-f', '-qq', '-y', '-e', 'trace=openat,openat2', '-o', log, process.execPath, BIN, ...args], {
        env: { ...process.env, HFI1_SDMA_SYSROOT: '' },
        timeout: 60_000,
      });
      const lines = readFileSync(log, 'utf8').split('\n');
      expect(lines.some((l) => l.includes('proc/uptime'))).toBe(true);
      expect(lines.filter((l) => /ptmx|\/dev\/pts/.test(l) && !l.includes('O_PATH'))).toEqual([]);
    } finally {
      rmSync(up);
      renameSync(`${up}.aside`, up);
    }
  });
});
