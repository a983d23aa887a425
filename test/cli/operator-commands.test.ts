// The operator commands against a scripted backend whose time moves only when a command paces.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { screenOf } from './vt.js';

// Engine 0 idle, 1 progressing (100 descriptors/100 ms), 2 stuck with 300 in flight, 3 halted.
const script: Script = (e, t) => {
  const moving = Math.floor(t / 100) * 100;
  switch (e) {
    case 0:
      return { dh: 500, dt: 500 };
    case 1:
      return { dh: moving, dt: moving + 200, txh: moving / 2, txt: moving / 2 + 100, seq: 2 * Math.floor(t / 100) };
    case 2:
      return { dh: 1000, dt: 1300, fetched: 1000, seq: 8 };
    default:
      return { dh: 0, dt: 0, state: 's50_HwHaltWait', err: 1n << 1n };
  }
};

const run = (argv: string[], backend = new FakeBackend(script), isTTY = false) => runCli(argv, {}, isTTY, '', backend);

describe('engines', () => {
  it('prints a table with units, decoded error bits and no colour off a TTY', async () => {
    const r = await run(['engines']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /hfi1_0 \(0000:05:00\.0\)\s+wfr \(Omni-Path 100\)\s+driver upstream\s+ports 1\s+engines 0-3\s+descq_cnt 2048/,
    );
    expect(r.stdout).toMatch(/hfi1_0\/2\s+s99_Running.*300/);
    expect(r.stdout).toMatch(/SDmaGenMismatchErr!/);
    expect(r.stdout).not.toContain('\u001b[');
  });

  it('prints the documented JSON', async () => {
    const r = await run(['engines', '--json']);
    const j = JSON.parse(r.stdout);
    expect(j.backend).toBe('emu');
    expect(j.units[0]).toMatchObject({ unit: 'hfi1_0', name: 'hfi1_0', index: 0, descqCnt: 2048 });
    const e2 = j.units[0].engines[2];
    expect(e2).toMatchObject({
      engine: 2,
      state: 's99_Running',
      running: true,
      descqHead: 1000,
      descqTail: 1300,
      inFlight: 300,
      free: 1747,
    });
    expect(e2.csr.ctrl).toBe('0x9');
    expect(j.units[0].engines[3].errors).toEqual([{ bit: 1, name: 'SDmaGenMismatchErr', halts: true }]);
  });

  it('colours on a TTY unless NO_COLOR or --no-color', async () => {
    expect((await run(['engines'], new FakeBackend(script), true)).stdout).toContain('\u001b[');
    expect((await run(['engines', '--no-color'], new FakeBackend(script), true)).stdout).not.toContain('\u001b[');
    const nc = await runCli(['engines'], { NO_COLOR: '1' }, true, '', new FakeBackend(script));
    expect(nc.stdout).not.toContain('\u001b[');
  });

  it('--color forces colour into a pipe, over NO_COLOR too; without it a pipe gets none', async () => {
    expect((await run(['engines'], new FakeBackend(script), false)).stdout).not.toContain('\u001b[');
    expect((await run(['engines', '--color'], new FakeBackend(script), false)).stdout).toContain('\u001b[');
    const forced = await runCli(['engines', '--color'], { NO_COLOR: '1' }, false, '', new FakeBackend(script));
    expect(forced.stdout).toContain('\u001b[');
  });

  it('closes the backend and exits 66 for a unit that does not exist', async () => {
    const b = new FakeBackend(script);
    const r = await run(['engines', '--unit', '3'], b);
    expect(r.code).toBe(66);
    expect(r.stderr).toMatch(/no unit hfi1_3 or hfi2_3: this host has hfi1_0/);
    expect(b.closed).toBe(1);
  });
});

describe('show and ring', () => {
  it('shows one engine with decoded bits', async () => {
    const r = await run(['show', '3']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/state\s+s50_HwHaltWait/);
    expect(r.stdout).toMatch(/ENG_ERR_STATUS\s+0x2 SDmaGenMismatchErr\(1, halts\)/);
    expect(r.stdout).toMatch(/CTRL\s+0x9 ENABLE\|INT_ENABLE/);
  });

  it('refuses an engine the unit does not have with exit 66', async () => {
    const r = await run(['show', '9']);
    expect(r.code).toBe(66);
    expect(r.stderr).toMatch(/engines 0-3; there is no engine 9/);
  });

  it('lists the ring as text and JSON', async () => {
    const t = await run(['ring', '2']);
    expect(t.stdout).toMatch(/300 descriptors from slot 1000 to 1300/);
    const j = JSON.parse((await run(['ring', '2', '--json'])).stdout);
    expect(j.descriptors).toHaveLength(300);
    expect(j.descriptors[0]).toEqual({
      slot: 1000,
      flags: '--F-',
      addr: '0x0000000000001000',
      gen: 1,
      len: 64,
      ahgIdx: 0,
      ahgMode: 0,
    });
  });
});

describe('watch', () => {
  it('prints NDJSON per engine per sample with verdicts; the stuck engine is stalled once confirmed', async () => {
    const r = await run(['watch', '--count', '4', '--interval-ms', '500', '--stall-ms', '1000']);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(16);
    const last = lines.slice(12);
    // Engine 3 halted from the first sample: inside the recovery window (--stall-ms, as health judges it) it is no
    // verdict yet, past it halted.
    expect(lines[3]).toMatchObject({ verdict: 'unknown', reason: 'recovering' });
    expect(last.map((l) => l.verdict)).toEqual(['idle', 'progressing', 'stalled', 'halted']);
    expect(last[2]).toMatchObject({ reason: 'chip-not-fetching', stallCount: 1, t: 1500 });
    expect(last[1].descPerSec).toBe(1000);
    // Not reported at the first sample that meets the condition (t = 1000).
    expect(lines[10]).toMatchObject({ verdict: 'unknown', reason: 'stall-suspected' });
    // Before a verdict is confirmed the stuck engine is never shown as healthy.
    expect(lines[2]).toMatchObject({ verdict: 'unknown', reason: 'warming-up' });
  });

  it('redraws a screen on a TTY with the stall highlighted', async () => {
    const r = await run(['watch', '--count', '4', '--interval-ms', '500'], new FakeBackend(script), true);
    // One full redraw, then only changed lines: the screen as the terminal shows it at the end.
    expect(r.stdout.split('\x1b[H\x1b[2J')).toHaveLength(2);
    const screen = screenOf(r.stdout).join('\n');
    expect(screen).toMatch(/STALLED \(CHIP-NOT-FETCHING\)/);
    expect(screen).toMatch(/hfi1_0\/2 .* ≥1\.5s +- +STALLED/);
  });

  it('halted shows after the recovery window', async () => {
    const r = await run(['watch', '--json', '--count', '6', '--interval-ms', '500']);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ engine: 3, verdict: 'halted' });
  });
});

describe('progress', () => {
  it('exits 0 as soon as the head moved and N fits', async () => {
    const r = await run(['progress', '1', '--num-desc', '9', '--interval-ms', '50', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      satisfied: true,
      result: 1,
      reason: 'fits',
      waitedMs: 100,
      seqAtSleep: 0,
      seq: 2,
    });
  });

  it('exits 1 on timeout saying nothing moved', async () => {
    const r = await run(['progress', '2', '--num-desc', '9', '--timeout-ms', '300']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/timeout after 300 ms: no movement/);
  });
});

describe('health', () => {
  it('is CRITICAL (2) for a stalled and a halted engine, with perfdata', async () => {
    const r = await run(['health', '--stall-ms', '1000']);
    expect(r.code).toBe(2);
    const [first, ...rest] = r.stdout.trim().split('\n');
    expect(first).toMatch(/^HFI1-SDMA CRITICAL - emulator: SD10[12] hfi1_0 sdma[23] (stalled|halted) .* \(\+1 more: SD10[12]\)$/);
    expect(first?.length).toBeLessThanOrEqual(200);
    expect(rest).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^CRITICAL: SD101 hfi1_0 sdma2 stalled \(chip-not-fetching\)/),
        expect.stringMatching(/^CRITICAL: SD102 hfi1_0 sdma3 halted/),
      ]),
    );
    // The perfdata follows the last line, as Nagios takes it from long output.
    expect(rest.at(-1)).toMatch(/ \| engines=4 gone=0;;0 stranded=0;;0 stalled=1;;0 halted=1;;0 /);
  });

  it('is OK (0) on healthy engines', async () => {
    const healthy: Script = (e, t) => ({ dh: Math.floor(t / 10) * 10 + e, dt: Math.floor(t / 10) * 10 + e + 50 });
    const r = await run(['health'], new FakeBackend(healthy));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^HFI1-SDMA OK - emulator: 4 engines on 1 unit healthy/);
  });

  it('with -w full=0, WARNING (1) only for a ring full in every sample, not for a full ring now and then', async () => {
    const always: Script = (e, t) => ({ dh: t, dt: t + 2040, dqf: t + e });
    const r = await run(['health', '--stall-ms', '1000', '-w', 'full=0'], new FakeBackend(always, 1));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/WARNING: SD106 hfi1_0 sdma0 ring persistently full/);
    const once: Script = (_e, t) => ({ dh: t, dt: t + 2040, dqf: t >= 1000 ? 1 : 0 });
    expect((await run(['health', '--stall-ms', '1000', '-w', 'full=0'], new FakeBackend(once, 1))).code).toBe(0);
    // Without a threshold a full ring that keeps retiring is a saturated link: healthy.
    expect((await run(['health', '--stall-ms', '1000'], new FakeBackend(always, 1))).code).toBe(0);
  });

  it('is UNKNOWN (3) when no unit can be read', async () => {
    const r = await run(['health', '--unit', '5']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^HFI1-SDMA UNKNOWN - no unit hfi1_5/);
  });
});

describe('fit on an engine', () => {
  it('uses the engine’s descq_head and descq_tail', async () => {
    const r = await run(['fit', '2', '--num-desc', '9', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ descqCnt: 2048, head: 1000, tail: 1300, free: 1747, fits: true });
    expect(r.code).toBe(0);
  });

  it('exits 1 when the descriptors do not fit the engine now', async () => {
    const full = new FakeBackend(() => ({ dh: 10000, dt: 12040 }));
    const r = await run(['fit', '2', '--num-desc', '9'], full);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/free\s+7/);
  });
});
