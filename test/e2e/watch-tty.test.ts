// `watch` on a terminal: run under a pseudo-terminal (util-linux `script`) and read the screen.
import { describe, expect, it } from 'vitest';
import { screenOf } from '../cli/vt.js';
import { BIN } from '../support/child.js';
import { onPath } from '../support/on-path.js';
import { spawnSync } from '../support/spawn.js';

const hasScript = onPath('script');

describe('watch on a pseudo-terminal', () => {
  it.skipIf(!hasScript)('redraws in place and shows a stop-fetch stall in red (skipped only without util-linux script)', () => {
    const cmd = `${process.execPath} ${BIN} --backend emu --engines 4 --at-ms 20 --fault stop-fetch@30:3 watch --count 6 --interval-ms 100 --stall-ms 200`;
    // The pseudo-terminal's width, as stty reports it under script (80 when it reports none).
    const size = spawnSync('script', ['-qfec', 'stty size', '/dev/null'], { encoding: 'utf8' }).stdout.trim().split(/\s+/);
    const columns = Number(size[1]) > 0 ? Number(size[1]) : 80;
    const r = spawnSync('script', ['-qfec', cmd, '/dev/null'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: '' },
    });
    expect(r.status).toBe(0);
    // One full redraw, then only the lines that changed: replay the output on a small terminal.
    expect(r.stdout.split('\u001b[H\u001b[2J')).toHaveLength(2);
    const screen = screenOf(r.stdout);
    const row3 = screen.find((l) => l.startsWith('hfi1_0/3')) ?? '';
    expect(row3).toContain('STALLED (CHIP-NOT-FETCHING)');
    for (const line of screen) expect(line.length).toBeLessThanOrEqual(columns);
    // Red: the stalled row's verdict is written inside a red escape.
    const red = r.stdout.split('\u001b[31m').slice(1);
    expect(red.some((after) => after.split('\n')[0]?.includes('STALLED (CHIP-NOT-FETCHING)'))).toBe(true);
    for (const e of [0, 1, 2]) expect(screen.find((l) => l.startsWith(`hfi1_0/${e} `)) ?? '').not.toContain('STALLED');
  });
});
