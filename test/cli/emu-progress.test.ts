// emu run's progress line with an ETA on a terminal stderr (whatever stdout is), nothing on a
// non-terminal stderr; emu serve's announcement of each fault as its virtual time is reached.
import { describe, expect, it } from 'vitest';
import { etaMs, FaultAnnouncer, progressLine } from '../../src/cli/emu-progress.js';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import type { FaultSpec } from '../../src/emu/faults.js';

/** Run the CLI with stdout and stderr terminals as given; the wall clock advances 10 ms a look. */
async function emuRun(argv: string[], stdoutTTY: boolean, stderrTTY: boolean) {
  let stdout = '';
  let stderr = '';
  let clock = 0;
  const io: Io = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: {},
    isTTY: stdoutTTY,
    stderrIsTTY: stderrTTY,
    columns: 80,
    nowMs: () => {
      clock += 10;
      return clock;
    },
    sleep: async () => {},
    readStdin: async () => '',
  };
  const code = await main(['--backend', 'emu', '--engines', '2', ...argv], io);
  return { code, stdout, stderr };
}

describe('emu run progress', () => {
  it('shows progress with an ETA on a terminal stderr even when stdout is redirected (--json)', async () => {
    const r = await emuRun(['emu', 'run', '--duration-ms', '600', '--json'], false, true);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).virtualMs).toBe(600);
    const lines = r.stderr.replaceAll('\x1b[K', '<EL>').split('\r').filter(Boolean);
    expect(lines.length).toBe(12);
    expect(lines[0]).toMatch(/^\[#+ +\] 50\/600 ms virtual {3}8% {2}ETA 110ms<EL>$/);
    expect(lines.at(-1)).toMatch(/\] 600\/600 ms virtual 100% {2}ETA 0ms<EL>\n$/);
  });

  it('says nothing on a stderr that is not a terminal, even with stdout on one', async () => {
    const r = await emuRun(['emu', 'run', '--duration-ms', '600'], true, false);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('ETA follows the pace so far', () => {
    expect(etaMs(0, 1000, 5)).toBeNull();
    expect(etaMs(250, 1000, 1000)).toBe(3000);
    expect(progressLine(500, 1000, 2000)).toContain('ETA 2.0s');
  });
});

describe('emu serve fault announcements', () => {
  const fault = (text: string, atMs: number, engine: number | null): FaultSpec => ({
    name: text.startsWith('link-down') ? 'link-down' : 'stop-fetch',
    param: 0,
    atMs,
    engine: text.startsWith('link-down') ? null : engine,
    port: text.startsWith('link-down') ? engine : null,
    text,
  });

  it('says each fault once, when virtual time reaches it, with virtual and wall time', () => {
    const said: string[] = [];
    const wall = new Date(2026, 0, 2, 23, 1, 2, 345).getTime();
    const a = new FaultAnnouncer(
      [fault('stop-fetch@200:3', 200, 3), fault('link-down@500', 500, null)],
      (l) => said.push(l),
      () => wall,
    );
    a.reached(150);
    expect(said).toEqual([]);
    a.reached(230);
    a.reached(260);
    expect(said).toEqual([
      'emu serve: fault stop-fetch@200:3 fired at 200 ms virtual time on engine 3; wall clock 23:01:02.345 (seen at 230 ms virtual)\n',
    ]);
    a.reached(900);
    expect(said[1]).toMatch(/^emu serve: fault link-down@500 fired at 500 ms virtual time on every port;/);
    expect(said).toHaveLength(2);
    const one = new FaultAnnouncer(
      [fault('link-down@5:2', 5, 2)],
      (l) => said.push(l),
      () => wall,
    );
    one.reached(10);
    expect(said[2]).toMatch(/^emu serve: fault link-down@5:2 fired at 5 ms virtual time on port 2;/);
    // Every port fault names its port, never "every engine".
    const fabric = new FaultAnnouncer(
      [{ name: 'fabric-stall', param: 0, atMs: 5, engine: null, port: null, text: 'fabric-stall@5' }],
      (l) => said.push(l),
      () => wall,
    );
    fabric.reached(10);
    expect(said[3]).toMatch(/^emu serve: fault fabric-stall@5 fired at 5 ms virtual time on every port;/);
  });
});
