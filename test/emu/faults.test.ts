// Each fault produces the documented sequence of __sdma_process_event, sdma.c; read back from the event log.
import { describe, expect, it } from 'vitest';
import { parseFault } from '../../src/emu/faults.js';
import { invariantViolations } from '../../src/emu/invariants.js';
import type { LogRecord, LogRetention } from '../../src/emu/log.js';
import { readCsr } from '../../src/emu/sample.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { Hfi1SdmaError } from '../../src/errors.js';
import { SEND_DMA_HEAD } from '../../src/progress/constants.js';
import { EVENT_NAMES, STATE_NAMES } from '../../src/progress/state.js';

/** The engine's state events from `fromMs` as "event from → to" strings, plus marker kinds. */
function story(u: EmuUnit, engine: number, fromMs = 0): string[] {
  return u
    .events(['event', 'engineError', 'swCleanUp', 'fault'])
    .filter((r: LogRecord) => r.engine === engine && r.timeNs >= fromMs * 1e6)
    .map((r) => {
      if (r.kind === 'event') return `${EVENT_NAMES[r.a]} ${STATE_NAMES[r.b]} → ${r.c < 0 ? '(unlisted)' : STATE_NAMES[r.c]}`;
      if (r.kind === 'engineError') return `engine error 0x${r.a.toString(16)}${r.b ? ' halts' : ''}`;
      return r.kind;
    });
}

function unit(faults: string[], workload = 'qp', ms = 30, retainLog: LogRetention = 'rare'): EmuUnit {
  const u = new EmuUnit({ seed: 3, engines: 4, workload, faults, retainLog });
  u.runUntilMs(ms);
  return u;
}

describe('faults (__sdma_process_event, sdma.c life cycles)', () => {
  it('driver load: e10 → s10, halt reported, halt-wait e15 → s15, clean-up e25 → s20, port ACTIVE e30 → s99', () => {
    expect(story(unit([], 'idle', 2), 1)).toEqual([
      'e10_GoHwStart s00_HwDown → s10_HwStartUpHaltWait',
      'engine error 0x40 halts',
      'e60_HwHalted s10_HwStartUpHaltWait → s10_HwStartUpHaltWait',
      'e15_HwHaltDone s10_HwStartUpHaltWait → s15_HwStartUpCleanWait',
      'e25_HwCleanUpDone s15_HwStartUpCleanWait → s20_Idle',
      'e30_GoRunning s20_Idle → s99_Running',
    ]);
  });

  it('engine-error:1 (halt class): e60 → s50, e15 → s30, sw clean-up, e40 → s40, e25 → s99; ABORTED completions', () => {
    const u = unit(['engine-error:1@10:2'], 'line-rate:gbps=10', 30, 'all'); // its aborted completions are read back
    expect(story(u, 2, 5)).toEqual([
      'fault',
      'engine error 0x2 halts',
      'e60_HwHalted s99_Running → s50_HwHaltWait',
      'e15_HwHaltDone s50_HwHaltWait → s30_SwCleanUpWait',
      'swCleanUp',
      'e40_SwCleaned s30_SwCleanUpWait → s40_HwCleanUpWait',
      'e25_HwCleanUpDone s40_HwCleanUpWait → s99_Running',
    ]);
    expect(story(u, 1, 5)).toEqual([]);
    const aborted = u.events(['aborted']).filter((r) => r.engine === 2);
    expect(aborted.length).toBeGreaterThan(0);
    expect(u.events(['aborted']).every((r) => r.engine === 2)).toBe(true);
    expect(u.host.kernelLog.some((l) => l.includes('SDMA (2) engine error: 0x2 state s50_HwHaltWait'))).toBe(true);
    expect(u.engines.map((e) => e.state)).toEqual(Array(4).fill('s99_Running'));
  });

  it('engine-error:6 alone halts but is not logged; a correctable bit (19) is logged and does not halt', () => {
    const u = unit(['engine-error:6@10:0', 'engine-error:DescTableCor@10:1']);
    expect(story(u, 0, 5)).toContain('e60_HwHalted s99_Running → s50_HwHaltWait');
    expect(u.host.kernelLog.some((l) => l.includes('SDMA (0) engine error'))).toBe(false);
    expect(story(u, 1, 5)).toEqual(['fault', 'engine error 0x80000']);
    expect(u.host.kernelLog.some((l) => l.includes('SDMA (1) engine error: 0x80000 state s99_Running'))).toBe(true);
    expect(u.engines[1]?.errCnt).toBe(2); // the load-time halt report and this one
  });

  it('link-down: e85 → s80, e81 → s82, sw clean-up, e40, e82 → s20_Idle; link-up: e30 → s99', () => {
    const u = unit(['link-down@10', 'link-up@20']);
    expect(story(u, 3, 5)).toEqual([
      'fault',
      'e85_LinkDown s99_Running → s80_HwFreeze',
      'e81_HwFrozen s80_HwFreeze → s82_FreezeSwClean',
      'swCleanUp',
      'e40_SwCleaned s82_FreezeSwClean → s82_FreezeSwClean',
      'e82_HwUnfreeze s82_FreezeSwClean → s20_Idle',
      'fault',
      'e30_GoRunning s20_Idle → s99_Running',
    ]);
  });

  it('freeze: e80 → s80, e81 → s82, e40, e82 → s99 (go kept)', () => {
    expect(story(unit(['freeze@10:0']), 0, 5)).toEqual([
      'fault',
      'e80_HwFreeze s99_Running → s80_HwFreeze',
      'e81_HwFrozen s80_HwFreeze → s82_FreezeSwClean',
      'swCleanUp',
      'e40_SwCleaned s82_FreezeSwClean → s82_FreezeSwClean',
      'e82_HwUnfreeze s82_FreezeSwClean → s99_Running',
    ]);
  });

  it('a freeze while frozen joins the handling under way: one sdma_freeze, one unfreeze, generations right', () => {
    // Found by the soak: freeze@9 then link-down@10 used to unfreeze (and reset) the chip twice.
    const u = new EmuUnit({ seed: 0, engines: 4, workload: 'mixed', descqCnt: 64, faults: ['freeze@9', 'link-down@10'] });
    u.runUntilMs(18);
    expect(invariantViolations(u)).toEqual([]);
    expect(story(u, 0, 5)).toEqual([
      'fault',
      'e80_HwFreeze s99_Running → s80_HwFreeze',
      'e81_HwFrozen s80_HwFreeze → s82_FreezeSwClean',
      'swCleanUp',
      'e40_SwCleaned s82_FreezeSwClean → s82_FreezeSwClean',
      'fault',
      'e85_LinkDown s82_FreezeSwClean → (unlisted)',
      'e82_HwUnfreeze s82_FreezeSwClean → s99_Running',
    ]);
    expect(u.engines.map((e) => e.state)).toEqual(Array(4).fill('s99_Running'));
  });

  it('stop-fetch: HEAD stops, software fills the ring, the engine stays in s99', async () => {
    const u = unit(['stop-fetch@10:1'], 'line-rate:gbps=10', 11);
    const [before] = await u.sample([1]);
    u.runUntilMs(20);
    const [after] = await u.sample([1]);
    expect(after?.csr?.hwHead).toBe(before?.csr?.hwHead);
    expect(after?.sw?.descqTail).toBeGreaterThanOrEqual(before?.sw?.descqTail ?? 0);
    expect(u.engines[1]?.freecnt()).toBeLessThan(64);
    expect(u.engines[1]?.dmawait.length).toBe(2); // both QPs asleep, waiting for a head that never moves
    expect(after?.state).toBe('s99_Running');
    expect(u.engines[0]?.descqHead).toBeGreaterThan(before?.sw?.descqHead ?? 0);
  });

  it('lost-interrupt: the chip drains the ring, software never retires it, waiters stay asleep', async () => {
    const u = unit(['lost-interrupt@10:1'], 'line-rate:gbps=10', 40);
    const e = u.engineAt(1);
    expect(u.events(['interruptLost']).filter((r) => r.engine === 1).length).toBeGreaterThan(0);
    expect(e.chip.hwHead).toBe(e.chip.hwTail);
    expect(e.descqHead & e.mask).not.toBe(e.chip.hwHead);
    expect(e.dmawait.length).toBeGreaterThan(0);
    expect(u.stats().lostWakeups).toBe(0); // software sees no room: not a lost wake-up
  });

  it('head-writeback-stall: head_dma freezes while the HEAD CSR moves', () => {
    const u = unit(['head-writeback-stall@10:0'], 'line-rate:gbps=10', 10);
    const e = u.engineAt(0);
    const dma = e.chip.headDma;
    const head = e.descqHead;
    u.runUntilMs(15);
    expect(e.chip.headDma).toBe(dma);
    expect(e.descqHead).toBeGreaterThan(head);
  });

  it('slow:4 cuts the engine’s throughput to about a quarter', () => {
    const u = unit(['slow:4@0:0'], 'line-rate:gbps=10', 20);
    const [e0, e1] = [u.engineAt(0).descqHead, u.engineAt(1).descqHead];
    expect(e0 / e1).toBeGreaterThan(0.2);
    expect(e0 / e1).toBeLessThan(0.3);
  });

  it('device-gone: every register reads all-ones; samples say gone, with no state and no registers', async () => {
    const u = unit(['device-gone@10'], 'qp', 12);
    const s = await u.sample();
    expect(s.every((x) => x.gone && x.state === null && x.csr === null)).toBe(true);
    expect(u.chips.every((c) => readCsr(c, u.host.gone, SEND_DMA_HEAD) === 0xffffffffffffffffn)).toBe(true);
  });

  it('refuses a bad fault spec with a usage error that lists the names', () => {
    for (const bad of ['nope@1', 'stop-fetch', 'engine-error@5', 'engine-error:99@5', 'slow:0@1', 'stop-fetch@1:16']) {
      let err: unknown;
      try {
        parseFault(bad, 16);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(Hfi1SdmaError);
      expect((err as Hfi1SdmaError).code).toBe('E_USAGE');
      expect((err as Hfi1SdmaError).exitCode).toBe(64);
      expect((err as Error).message).toContain('stop-fetch, lost-interrupt, head-writeback-stall, engine-error:<bit>');
    }
    expect(parseFault('engine-error:GenMismatch@200:3', 16)).toMatchObject({
      name: 'engine-error',
      param: 1,
      atMs: 200,
      engine: 3,
    });
  });
});
