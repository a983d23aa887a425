// The emulator's warm-up (--at-ms) never holds the process: it runs in steps of bounded wall time
// with the event loop between them, ends early once a stop is requested, and stepping changes
// nothing the model does. A child `emu write --at-ms` a day away ends at once on SIGTERM and
// writes nothing, and a read command stopped there prints nothing and exits 143.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/unit.js';
import { WARM_UP_STEP_WALL_MS, warmUp } from '../../src/emu/warm-up.js';
import { BIN, startChild } from '../support/child.js';
import { tempDirs } from '../support/temp.js';

const temp = tempDirs('hfi1-warm-');

/** A clock that moves 10 ms at every look: every slice seems to take 10 ms, a fifth of WARM_UP_STEP_WALL_MS. */
function tickingClock(): () => number {
  let t = 0;
  return () => {
    t += 10;
    return t;
  };
}

describe('warmUp', () => {
  it('yields between bounded steps and stops early when a stop is requested', async () => {
    const u = new EmuUnit({ seed: 1, workload: 'line-rate', engines: 2 });
    let looks = 0;
    let turned = 0;
    const spin = () => {
      turned++;
      if (turned < 1000) setImmediate(spin);
    };
    setImmediate(spin);
    const done = await warmUp(u, 60_000, { nowMs: tickingClock(), stopped: () => ++looks > 3 });
    expect(done).toBe(false);
    // Three steps of three slices, each slice twice the last, since each took under half of a step's
    // WARM_UP_STEP_WALL_MS (1 + 2 + 4, then 8 + 16 + 32, then 64 + 128 + 256 virtual ms).
    expect(WARM_UP_STEP_WALL_MS).toBe(50);
    expect(u.nowMs).toBe(511);
    expect(turned).toBeGreaterThanOrEqual(2); // the event loop ran between the steps
  });

  it('a warm-up in steps leaves the model exactly where one run to the same time does', async () => {
    const whole = new EmuUnit({ seed: 3, workload: 'mixed', engines: 4 });
    whole.runUntilMs(40);
    const stepped = new EmuUnit({ seed: 3, workload: 'mixed', engines: 4 });
    expect(await warmUp(stepped, 40, { nowMs: tickingClock(), stopped: () => false })).toBe(true);
    expect(stepped.nowMs).toBe(40);
    expect(stepped.logHash()).toBe(whole.logHash());
  });
});

/** CPU seconds a process has used (utime + stime from /proc), or 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds a child has used once it is surely in its warm-up (start-up takes about 0.35 s of it). */
const WARM_CPU_S = 0.5;

// Children: a signal ends a process, and the exit status it leaves is the process's own.
describe('a child in a warm-up a day long', () => {
  it('emu write --at-ms 86400000: SIGTERM ends it at once (143) and nothing is written', async () => {
    const dir = join(temp(), 'tree');
    const child = spawn(
      process.execPath,
      [BIN, 'emu', 'write', '--sysroot', dir, '--workload', 'line-rate', '--at-ms', '86400000'],
      {
        stdio: 'ignore',
      },
    );
    const exited = new Promise<{ code: number | null; ms: number }>((resolve) => {
      child.on('exit', (code) => resolve({ code, ms: performance.now() - signalledAt }));
    });
    let signalledAt = 0;
    // Wait for the warm-up itself (a few of its 50 ms steps in: start-up, to the emulator built, takes about 0.35 s of
    // CPU); nothing is written before the end.
    while (child.exitCode === null && cpuSeconds(child.pid as number) < WARM_CPU_S) await new Promise((r) => setTimeout(r, 20));
    expect(child.exitCode).toBeNull();
    signalledAt = performance.now();
    child.kill('SIGTERM');
    const r = await exited;
    expect(r.code).toBe(143);
    expect(r.ms).toBeLessThan(10_000); // a step is 50 ms of wall time; unstepped, the warm-up would take hours
    expect(existsSync(dir)).toBe(false);
  });
});

describe('a read command stopped in its warm-up', () => {
  it('engines --at-ms 86400000: SIGTERM ends it with 143 and prints nothing of the model where it got to', async () => {
    const { child, exited, out, err } = startChild([
      '--backend',
      'emu',
      '--workload',
      'line-rate',
      '--at-ms',
      '86400000',
      'engines',
    ]);
    while (child.exitCode === null && cpuSeconds(child.pid as number) < WARM_CPU_S) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(out() + err()).toBe('');
  });
});
