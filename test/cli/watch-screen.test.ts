// `watch` on a terminal: every line fits the width (80 and 120 columns), wall-clock and virtual
// time, a "stuck for" column, and redraws that write only what changed.
import { describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { fitLine, ScreenPainter, shortDuration } from '../../src/cli/watch-screen.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { screenOf, stripAnsi } from './vt.js';

// Engine 0 idle, 1 progressing, 2 stuck with work in flight, 3 halted.
const busy: Script = (e, t) => {
  const moving = Math.floor(t / 100) * 100;
  if (e === 0) return { dh: 500, dt: 500 };
  if (e === 1) return { dh: moving, dt: moving + 200, seq: 2 * Math.floor(t / 100) };
  if (e === 2) return { dh: 1000, dt: 1300, fetched: 1000, seq: 8 };
  return { dh: 0, dt: 0, state: 's50_HwHaltWait', err: 1n << 1n };
};
const still: Script = () => ({ dh: 500, dt: 500 });

interface Screen {
  io: Io;
  writes: string[];
}

/** A terminal of `columns` whose clock stands at 12:34:56 plus one second per frame. */
function terminal(columns: number): Screen {
  const writes: string[] = [];
  let clock = new Date(2026, 0, 2, 12, 34, 56).getTime();
  const io: Io = {
    stdout: (t) => writes.push(t),
    stderr: () => {},
    env: {},
    isTTY: true,
    columns,
    nowMs: () => {
      const t = clock;
      clock += 1000;
      return t;
    },
    sleep: async () => {},
    readStdin: async () => '',
  };
  return { io, writes };
}

async function watch(t: Screen, script: Script, argv: string[] = []): Promise<number> {
  const backend = new FakeBackend(script, 4, 2048, {
    link: { state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' },
  });
  return main(['watch', '--no-color', '--interval-ms', '500', ...argv], t.io, { openBackend: async () => backend });
}

describe('watch screen width', () => {
  for (const columns of [80, 120]) {
    it(`no line is longer than ${columns} columns, and the stall still reads in full`, async () => {
      const t = terminal(columns);
      expect(await watch(t, busy, ['--count', '5'])).toBe(0);
      const out = t.writes.join('');
      // biome-ignore lint/suspicious/noControlCharactersInRegex: split at the cursor moves
      for (const line of out.split(/\n|\x1b\[\d+;1H/).map(stripAnsi)) expect(line.length).toBeLessThanOrEqual(columns);
      const screen = screenOf(out);
      for (const line of screen) expect(line.length).toBeLessThanOrEqual(columns);
      expect(screen.find((l) => l.startsWith('hfi1_0/2'))).toMatch(/ ≥2\.0s +(\d+ +)?(-|\d+!?) +STALLED \(CHIP-NOT-FETCHING\)$/);
      expect(screen.find((l) => l.startsWith('engine'))).toMatch(/\bstuck\b/);
      expect(screen).toContain('hfi1_0 link ACTIVE LinkUp 100 Gb/sec (4X EDR)');
    });
  }

  it('120 columns show the heads and the ring bar; 80 columns leave them out', async () => {
    const wide = terminal(120);
    await watch(wide, busy, ['--count', '1']);
    expect(screenOf(wide.writes.join('')).find((l) => l.startsWith('engine'))).toMatch(/H\(SW\).*ring.*stuck/);
    const narrow = terminal(80);
    await watch(narrow, busy, ['--count', '1']);
    const head = screenOf(narrow.writes.join('')).find((l) => l.startsWith('engine'));
    expect(head).not.toMatch(/H\(SW\)/);
    expect(screenOf(narrow.writes.join('')).find((l) => l.startsWith('hfi1_0/3'))).toMatch(/^hfi1_0\/3\s+HwHaltWait/);
  });

  it('a terminal that reports 0 columns gets the 80-column layout, not a cut one', async () => {
    const t = terminal(0);
    await watch(t, busy, ['--count', '5']);
    const screen = screenOf(t.writes.join(''));
    expect(screen.find((l) => l.startsWith('hfi1_0/2'))).toMatch(/STALLED \(CHIP-NOT-FETCHING\)$/);
    for (const line of screen) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('shows the wall-clock time and, for the emulator, virtual time', async () => {
    const t = terminal(80);
    await watch(t, busy, ['--count', '2']);
    const screen = screenOf(t.writes.join(''));
    expect(screen).toContain('12:34:57  virtual 500 ms  sample 2');
  });
});

describe('watch redraws only what changed', () => {
  it('a second identical frame writes the time line and the cursor, nothing else', async () => {
    const t = terminal(80);
    // The first frame has no verdict yet (one sample); the second and third show the same engines.
    await watch(t, still, ['--count', '3']);
    expect(t.writes).toHaveLength(3);
    expect(t.writes[0]?.startsWith('\x1b[H\x1b[2J')).toBe(true);
    // Line 3 is the time line (title, link, time); then the cursor parks under the frame.
    const lines = (t.writes[0] ?? '').trimEnd().split('\n').length;
    expect(t.writes[2]).toBe(`\x1b[3;1H12:34:58  virtual 1000 ms  sample 3\x1b[K\x1b[${lines + 1};1H`);
  });

  it('a changed engine line is rewritten in place; a new width or height redraws everything', () => {
    const writes: string[] = [];
    const p = new ScreenPainter((t) => writes.push(t));
    p.frame(['title', 'time 1', 'row a', 'row b'], 80, 24);
    p.frame(['title', 'time 1', 'row a', 'row B'], 80, 24);
    expect(writes[1]).toBe('\x1b[4;1Hrow B\x1b[K\x1b[5;1H');
    p.frame(['title', 'time 1', 'row a', 'row B'], 80, 24);
    expect(writes).toHaveLength(2);
    p.frame(['title', 'time 1', 'row a'], 80, 24);
    expect(writes[2]).toBe('\x1b[4;1H\x1b[J\x1b[4;1H');
    p.frame(['title', 'time 1', 'row a'], 100, 24);
    expect(writes[3]).toBe('\x1b[H\x1b[2Jtitle\ntime 1\nrow a\n');
    expect(screenOf(writes.join(''))).toEqual(['title', 'time 1', 'row a']);
    // Only the height changed (a pane made shorter scrolls the old frame up): still everything, from the top.
    p.frame(['title', 'time 1', 'row a'], 100, 12);
    expect(writes[4]).toBe('\x1b[H\x1b[2Jtitle\ntime 1\nrow a\n');
  });

  it('a terminal made shorter between frames gets a full redraw: the title and the worst finding stay on top', async () => {
    const t = terminal(80);
    (t.io as { rows?: number }).rows = 24;
    const stdout = t.io.stdout;
    t.io.stdout = (s) => {
      stdout(s);
      if (t.writes.length === 3) (t.io as { rows?: number }).rows = 8;
    };
    await watch(t, busy, ['--count', '4']);
    expect(t.writes).toHaveLength(4);
    expect(t.writes[3]?.startsWith('\x1b[H\x1b[2J')).toBe(true);
    const screen = screenOf(t.writes[3] ?? '');
    expect(screen[0]).toMatch(/^hfi1-sdma watch/);
    expect(screen.some((l) => /^CRITICAL SD10[12] /.test(l))).toBe(true);
    expect(screen.length).toBeLessThanOrEqual(8);
  });

  it('a terminal resized between frames gets a full redraw at the new width', async () => {
    const t = terminal(120);
    let frames = 0;
    const stdout = t.io.stdout;
    t.io.stdout = (s) => {
      stdout(s);
      frames += 1;
      (t.io as { columns?: number }).columns = 80;
    };
    await watch(t, busy, ['--count', '2']);
    expect(frames).toBe(2);
    expect(t.writes[1]?.startsWith('\x1b[H\x1b[2J')).toBe(true);
    for (const line of screenOf(t.writes[1] ?? '')) expect(line.length).toBeLessThanOrEqual(80);
  });
});

describe('screen helpers', () => {
  it('cuts a coloured line to the width without splitting an escape', () => {
    expect(fitLine('\x1b[31mabcdef\x1b[39m', 3)).toBe('\x1b[31mabc\x1b[0m');
    expect(fitLine('abc', 3)).toBe('abc');
  });

  it('says durations briefly', () => {
    expect([850, 12_300, 245_000, 7_620_000].map(shortDuration)).toEqual(['850ms', '12.3s', '4m05s', '2h07m']);
  });
});
