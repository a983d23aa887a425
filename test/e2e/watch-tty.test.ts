// `watch` on a terminal: run under a pseudo-terminal (util-linux `script`) and read the screen.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/child.js';

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

describe('watch on a pseudo-terminal', () => {
  it.skipIf(!hasScript)('redraws in place and shows a stop-fetch stall in red (skipped only without util-linux script)', () => {
    const cmd = `${process.execPath} ${BIN} --backend emu --engines 4 --at-ms 20 --fault stop-fetch@30:3 watch --count 6 --interval-ms 100 --stall-ms 200`;
    const r = spawnSync('script', ['-qfec', cmd, '/dev/null'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: '' },
    });
    expect(r.status).toBe(0);
    const screens = r.stdout.split('\u001b[H\u001b[2J').filter((s) => s.trim() !== '');
    expect(screens).toHaveLength(6);
    const last = screens[5] ?? '';
    const row3 = last.split('\n').find((l) => l.includes('hfi1_0/3')) ?? '';
    expect(row3).toContain('STALLED (CHIP-NOT-FETCHING)');
    expect(row3).toContain('\u001b[31m'); // red
    for (const e of [0, 1, 2]) expect(last.split('\n').find((l) => l.includes(`hfi1_0/${e} `)) ?? '').not.toContain('STALLED');
  });
});
