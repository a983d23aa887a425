// `watch` in a real terminal of every height: tmux panes of 80×8, 80×12, 80×20 and 200×50 over 16 engines, one
// stalled and one with a stranded QP. The sick engines are always on screen (the others give way, counted on a
// last line), the title and the column header never scroll away, no line is stale or shown twice.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/child.js';
import { onPath } from '../support/on-path.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('watch-tmux-');
const hasTmux = onPath('tmux');

/** Run `watch` in a detached tmux pane of `cols` × `rows` until it ends, and return the pane's text. */
function pane(cols: number, rows: number): string[] {
  const socket = join(tmp(), 'tmux.sock');
  const watch = [
    process.execPath,
    BIN,
    '--backend emu --workload mixed:gbps=1 --descq-cnt 256 --at-ms 200',
    '--fault lost-wakeup@100:5 --fault stop-fetch@150:13',
    'watch --count 8 --interval-ms 100 --stall-ms 200',
  ].join(' ');
  const tmux = (...args: string[]) => spawnSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  // The pane signals a tmux channel when watch has ended (a channel signalled before anyone waits stays signalled).
  const started = tmux(
    'new-session',
    '-d',
    '-x',
    String(cols),
    '-y',
    String(rows),
    `${watch}; tmux -S ${socket} wait-for -S watch-ended; sleep 60`,
  );
  expect(started.status, started.stderr).toBe(0);
  try {
    // Wait on the condition (the command ended), not on a guess of how long it takes.
    const ended = spawnSync('tmux', ['-S', socket, 'wait-for', 'watch-ended'], { timeout: 60_000 });
    if (ended.status !== 0) throw new Error(`watch did not end within 60 s (${ended.error ?? ended.stderr})`);
    return tmux('capture-pane', '-p').stdout.split('\n').slice(0, rows);
  } finally {
    tmux('kill-server');
  }
}

describe.skipIf(!hasTmux)('watch at any terminal height (skipped only when tmux is not installed)', () => {
  for (const [cols, rows] of [
    [80, 8],
    [80, 12],
    [80, 20],
    [200, 50],
  ] as const) {
    it(`${cols}×${rows}: the title, the header and the sick engines are on screen, nothing stale or twice`, () => {
      const lines = pane(cols, rows);
      expect(lines[0]).toMatch(/^hfi1-sdma watch /);
      expect(lines.some((l) => /sample 8$/.test(l))).toBe(true);
      expect(lines.some((l) => /^engine\s/.test(l))).toBe(true);
      const engines = lines.filter((l) => l.startsWith('hfi1_0/')).map((l) => l.split(/\s+/)[0]);
      expect(new Set(engines).size).toBe(engines.length);
      expect(lines.find((l) => l.startsWith('hfi1_0/13 '))).toMatch(/STALLED \(CHIP-NOT-FETCHING\)/);
      expect(lines.find((l) => l.startsWith('hfi1_0/5 '))).toMatch(/STRANDED \(1 WAITER\)/);
      if (engines.length < 16) expect(lines.some((l) => new RegExp(`^… ${16 - engines.length} more engines`).test(l))).toBe(true);
      else expect(lines.some((l) => l.startsWith('…'))).toBe(false);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(cols);
      // Nothing below the frame: the last non-empty line is the table's last line or the "more" line.
      const last = lines.filter((l) => l.trim() !== '').at(-1) ?? '';
      expect(last).toMatch(/^(hfi1_0\/\d+ |… )/);
    });
  }
});
