// Recordings (snapshots of several instants, or of one) replayed in their own recorded time.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';

// Engine 0 moves 100 descriptors per 100 ms; engine 1 is stuck with 300 in flight.
const script: Script = (e, t) =>
  e === 0 ? { dh: Math.floor(t / 100) * 100, dt: Math.floor(t / 100) * 100 + 200 } : { dh: 1000, dt: 1300, fetched: 1000 };

const recorded = (timesMs: number[]) => new FakeBackend(script, 2, 2048, { recordingTimesMs: timesMs, kind: 'hw' });
const ndjson = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('a recording of several instants', () => {
  it('watch replays every instant in recorded time and ends at the end, advancing no clock', async () => {
    const b = recorded([0, 700, 1400, 2100]);
    const r = await runCli(['watch', '--json', '--interval-ms', '50'], {}, false, '', b);
    expect(r.code).toBe(0);
    const lines = ndjson(r.stdout);
    expect(lines).toHaveLength(8);
    expect(lines.map((l) => l.t)).toEqual([0, 0, 700, 700, 1400, 1400, 2100, 2100]);
    // Stuck from the first instant: unknown until a second sample confirms the stall.
    expect(lines.filter((l) => l.engine === 1).map((l) => l.verdict)).toEqual(['unknown', 'unknown', 'unknown', 'stalled']);
    expect(lines[2]).toMatchObject({ engine: 0, verdict: 'progressing', descPerSec: 1000 });
    expect(b.nowMs).toBe(0);
    expect(b.closed).toBe(1);
  });

  it('health judges the recording over its own window', async () => {
    const r = await runCli(['health'], {}, false, '', recorded([0, 700, 1400, 2100]));
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^HFI1-SDMA CRITICAL - snapshot node17\.tar\.gz: SD101 hfi1_0 sdma1 stalled/);
  });

  it('engines shows the last instant, with what was seen along the way', async () => {
    const halting: Script = (_e, t) => ({ err: t === 700 ? 0x2n : 0n, errCount: t >= 700 ? 3 : 2 });
    const b = new FakeBackend(halting, 1, 2048, { recordingTimesMs: [0, 700, 1400], kind: 'hw' });
    const r = await runCli(['engines', '--json'], {}, false, '', b);
    expect(r.code).toBe(0);
    const e = JSON.parse(r.stdout).units[0].engines[0];
    expect(e).toMatchObject({ timeMs: 1400, errors: [], errCount: 3, errCountRise: 1, halts: 1, recoveries: 1 });
    expect(e.lastErrors.map((x: { name: string }) => x.name)).toEqual(['SDmaGenMismatchErr']);
  });

  it('progress waits through the recording and says when it ended before the timeout', async () => {
    const r = await runCli(['progress', '1', '--num-desc', '9'], {}, false, '', recorded([0, 700, 1400]));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/the recording ended after 1400 ms: no movement/);
  });
});

describe('a recording of one instant (a frozen capture)', () => {
  it('watch gives no time-based verdict and says why, then ends', async () => {
    const r = await runCli(['watch', '--json'], {}, false, '', recorded([0]));
    expect(r.code).toBe(0);
    const lines = ndjson(r.stdout);
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l).toMatchObject({ verdict: 'unknown', reason: 'single-instant-capture' });
  });

  it('health is UNKNOWN (3) saying so, not CRITICAL for engines that cannot move', async () => {
    const r = await runCli(['health'], {}, false, '', recorded([0]));
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^HFI1-SDMA UNKNOWN - snapshot node17\.tar\.gz: a capture of a single instant/);
    expect(r.stdout).not.toMatch(/stalled/);
  });
});
