import { describe, expect, it } from 'vitest';
import {
  ctrlOnEntry,
  EVENT_NAMES,
  type EventName,
  findTransition,
  STATE_NAMES,
  type StateName,
  step,
  TRANSITIONS,
} from '../../src/progress/state.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';

describe('state names and CTRL values (the state names, sdma.c)', () => {
  it('prints the eleven names exactly', () => {
    expect(STATE_NAMES).toEqual([
      's00_HwDown',
      's10_HwStartUpHaltWait',
      's15_HwStartUpCleanWait',
      's20_Idle',
      's30_SwCleanUpWait',
      's40_HwCleanUpWait',
      's50_HwHaltWait',
      's60_IdleHaltWait',
      's80_HwFreeze',
      's82_FreezeSwClean',
      's99_Running',
    ]);
  });

  it('writes the documented CTRL values and keeps the clean-up pulse out of the shadow', () => {
    const w = (s: StateName) => ctrlOnEntry(s);
    for (const s of ['s00_HwDown', 's30_SwCleanUpWait', 's50_HwHaltWait', 's80_HwFreeze', 's82_FreezeSwClean'] as const) {
      expect(w(s).written).toBe(0n);
    }
    expect(w('s10_HwStartUpHaltWait').written).toBe(0x2n);
    expect(w('s60_IdleHaltWait').written).toBe(0x2n);
    expect(w('s15_HwStartUpCleanWait')).toEqual({ written: 0xcn, shadow: 0x8n });
    expect(w('s20_Idle').written).toBe(0x8n);
    expect(w('s40_HwCleanUpWait')).toEqual({ written: 0x4n, shadow: 0n });
    expect(w('s99_Running').written).toBe(0x9n);
  });
});

describe('transitions (__sdma_process_event, sdma.c)', () => {
  it('has one row per listed pair and only known names', () => {
    const keys = TRANSITIONS.map((t) => `${t.state}/${t.event}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(TRANSITIONS).toHaveLength(54); // the rows of __sdma_process_event, sdma.c with every "e30 / e70, e85" cell expanded
    for (const t of TRANSITIONS) {
      expect(STATE_NAMES).toContain(t.state);
      expect(EVENT_NAMES).toContain(t.event);
    }
  });

  test.prop([fc.constantFrom(...STATE_NAMES), fc.constantFrom(...EVENT_NAMES), fc.boolean()], fcParams(500, 20_000))(
    'every pair not in the table leaves state and go unchanged',
    (state, event, go) => {
      const r = step(state, event, go);
      if (findTransition(state, event)) {
        expect(r.listed).toBe(true);
      } else {
        expect(r).toEqual({ listed: false, from: state, to: state, go, actions: [] });
      }
    },
  );

  it('never raises e50 in a listed row', () => {
    expect(TRANSITIONS.some((t) => t.event === 'e50_HwCleaned')).toBe(false);
  });

  // Walk an event sequence through step() and return the states visited.
  function run(events: EventName[], start: StateName = 's00_HwDown', go = false): StateName[] {
    const seen: StateName[] = [];
    let s = start;
    let g = go;
    for (const e of events) {
      const r = step(s, e, g);
      s = r.to;
      g = r.go;
      seen.push(s);
    }
    return seen;
  }

  it('load: s10 → (e60, e15) s15 → e25 s20 (go 0) → e30 s99, flushing on entry (__sdma_process_event, sdma.c)', () => {
    expect(run(['e10_GoHwStart', 'e60_HwHalted', 'e15_HwHaltDone', 'e25_HwCleanUpDone', 'e30_GoRunning'])).toEqual([
      's10_HwStartUpHaltWait',
      's10_HwStartUpHaltWait',
      's15_HwStartUpCleanWait',
      's20_Idle',
      's99_Running',
    ]);
    expect(step('s20_Idle', 'e30_GoRunning', false).actions).toContain('flush-before-running');
  });

  it('error while running: e60 → s50 (+ progress) → e15 s30 → e40 s40 → e25 s99 (go kept)', () => {
    const r = step('s99_Running', 'e60_HwHalted', true);
    expect(r.to).toBe('s50_HwHaltWait');
    expect(r.actions).toEqual(['a-step-check', 'schedule-halt-wait', 'progress-after']);
    expect(run(['e60_HwHalted', 'e15_HwHaltDone', 'e40_SwCleaned', 'e25_HwCleanUpDone'], 's99_Running', true)).toEqual([
      's50_HwHaltWait',
      's30_SwCleanUpWait',
      's40_HwCleanUpWait',
      's99_Running',
    ]);
  });

  it('link down: e85 clears go, so the engine comes back to s20 and waits for e30', () => {
    expect(
      run(['e85_LinkDown', 'e81_HwFrozen', 'e40_SwCleaned', 'e82_HwUnfreeze', 'e30_GoRunning'], 's99_Running', true),
    ).toEqual(['s80_HwFreeze', 's82_FreezeSwClean', 's82_FreezeSwClean', 's20_Idle', 's99_Running']);
  });

  it('other freeze (e80) keeps go and returns to s99', () => {
    expect(run(['e80_HwFreeze', 'e81_HwFrozen', 'e40_SwCleaned', 'e82_HwUnfreeze'], 's99_Running', true).at(-1)).toBe(
      's99_Running',
    );
  });

  it('s60 ignores e85; s00 + e30 sets go and starts up', () => {
    expect(findTransition('s60_IdleHaltWait', 'e85_LinkDown')).toBeUndefined();
    expect(step('s00_HwDown', 'e30_GoRunning', false)).toMatchObject({ to: 's10_HwStartUpHaltWait', go: true });
  });

  it('unload: e00 reaches s00 from every state', () => {
    for (const s of STATE_NAMES) expect(step(s, 'e00_GoHwDown', true).to).toBe('s00_HwDown');
  });
});
