// The engine state machine (its state names and __sdma_process_event, sdma.c) as data: state names, CTRL values on entry, events, and the
// whole transition table. Pairs not in the table have no effect (__sdma_process_event, sdma.c).

/** State names exactly as the driver prints them in debugfs `STE` (the state names, sdma.c). */
export const STATE_NAMES = [
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
] as const;
export type StateName = (typeof STATE_NAMES)[number];

/** Event names as in the driver's debug table (the event names, sdma.c). */
export const EVENT_NAMES = [
  'e00_GoHwDown',
  'e10_GoHwStart',
  'e15_HwHaltDone',
  'e25_HwCleanUpDone',
  'e30_GoRunning',
  'e40_SwCleaned',
  'e50_HwCleaned',
  'e60_HwHalted',
  'e70_GoIdle',
  'e80_HwFreeze',
  'e81_HwFrozen',
  'e82_HwUnfreeze',
  'e85_LinkDown',
  'e90_SwHalted',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** CTRL operations applied on entry to a state (the state names, sdma.c): Enable, Int-enable, Halt, Clean-up pulse. */
export interface CtrlOps {
  enable: boolean;
  intEnable: boolean;
  halt: boolean;
  cleanup: boolean;
}

const ops = (s: string): CtrlOps => ({
  enable: s.includes('E'),
  intEnable: s.includes('I'),
  halt: s.includes('H'),
  cleanup: s.includes('C'),
});

/** the state names, sdma.c CTRL ops per state. */
export const STATE_CTRL_OPS: Readonly<Record<StateName, CtrlOps>> = {
  s00_HwDown: ops(''),
  s10_HwStartUpHaltWait: ops('H'),
  s15_HwStartUpCleanWait: ops('IC'),
  s20_Idle: ops('I'),
  s30_SwCleanUpWait: ops(''),
  s40_HwCleanUpWait: ops('C'),
  s50_HwHaltWait: ops(''),
  s60_IdleHaltWait: ops('H'),
  s80_HwFreeze: ops(''),
  s82_FreezeSwClean: ops(''),
  s99_Running: ops('EI'),
};

/**
 * the state names, sdma.c: the value written to SEND_DMA_CTRL on entry and the shadow p_senddmactrl kept after it.
 * The clean-up pulse is ORed into the write but never kept in the shadow.
 */
export function ctrlOnEntry(state: StateName): { written: bigint; shadow: bigint } {
  const o = STATE_CTRL_OPS[state];
  const shadow = (o.enable ? 0x1n : 0n) | (o.halt ? 0x2n : 0n) | (o.intEnable ? 0x8n : 0n);
  return { written: shadow | (o.cleanup ? 0x4n : 0n), shadow };
}

/** Actions a transition performs (__sdma_process_event, sdma.c), named after what the driver does. */
export type TransitionAction =
  | 'take-reference' // s00 + e10
  | 'teardown' // software teardown: drop reference, unfreeze counter := −1, wake
  | 'start-hw-clean-up' // clean-up tasklet → e25
  | 'hw-start-up' // init_sdma_regs, sdma.c hw start-up before entering s99/s20
  | 'schedule-halt-wait' // halt-wait worker → e15
  | 'schedule-sw-clean-up' // sw clean-up tasklet → e40
  | 'unfreeze-count-and-wake' // unfreeze counter −1; wake the freeze waiter
  | 'a-step-check' // the A-step workaround, sdma.c (not on production parts)
  | 'progress-after' // sdma_make_progress(sde, 0) after the transition
  | 'flush-before-running'; // sdma_flush when entering s99 from another state (the state names, sdma.c)

/** What `go_s99_running` becomes: set, cleared, or left alone. */
export type GoEffect = 'set' | 'clear' | 'keep';

/** One row of the transition table (__sdma_process_event, sdma.c). `next` 'go?' means s99_Running if go_s99_running else s20_Idle. */
export interface Transition {
  state: StateName;
  event: EventName;
  next: StateName | 'go?';
  go: GoEffect;
  actions: readonly TransitionAction[];
}

const T = (
  state: StateName,
  event: EventName,
  next: StateName | 'go?',
  go: GoEffect,
  actions: readonly TransitionAction[] = [],
): Transition => ({ state, event, next, go, actions });

/** __sdma_process_event, sdma.c; every listed (state, event) pair. */
export const TRANSITIONS: readonly Transition[] = [
  T('s00_HwDown', 'e00_GoHwDown', 's00_HwDown', 'keep'),
  T('s00_HwDown', 'e30_GoRunning', 's10_HwStartUpHaltWait', 'set', ['take-reference']),
  T('s00_HwDown', 'e10_GoHwStart', 's10_HwStartUpHaltWait', 'keep', ['take-reference']),
  T('s00_HwDown', 'e40_SwCleaned', 's00_HwDown', 'keep', ['teardown']),

  T('s10_HwStartUpHaltWait', 'e00_GoHwDown', 's00_HwDown', 'keep', ['teardown']),
  T('s10_HwStartUpHaltWait', 'e15_HwHaltDone', 's15_HwStartUpCleanWait', 'keep', ['start-hw-clean-up']),
  T('s10_HwStartUpHaltWait', 'e30_GoRunning', 's10_HwStartUpHaltWait', 'set'),
  T('s10_HwStartUpHaltWait', 'e70_GoIdle', 's10_HwStartUpHaltWait', 'clear'),
  T('s10_HwStartUpHaltWait', 'e60_HwHalted', 's10_HwStartUpHaltWait', 'keep', ['schedule-halt-wait']),

  T('s15_HwStartUpCleanWait', 'e00_GoHwDown', 's00_HwDown', 'keep', ['teardown']),
  T('s15_HwStartUpCleanWait', 'e25_HwCleanUpDone', 'go?', 'keep', ['hw-start-up']),
  T('s15_HwStartUpCleanWait', 'e30_GoRunning', 's15_HwStartUpCleanWait', 'set'),
  T('s15_HwStartUpCleanWait', 'e70_GoIdle', 's15_HwStartUpCleanWait', 'clear'),

  T('s20_Idle', 'e00_GoHwDown', 's00_HwDown', 'keep', ['teardown']),
  T('s20_Idle', 'e30_GoRunning', 's99_Running', 'set'),
  T('s20_Idle', 'e60_HwHalted', 's50_HwHaltWait', 'keep', ['schedule-halt-wait']),
  T('s20_Idle', 'e80_HwFreeze', 's80_HwFreeze', 'keep', ['unfreeze-count-and-wake']),
  T('s20_Idle', 'e85_LinkDown', 's80_HwFreeze', 'keep', ['unfreeze-count-and-wake']),

  T('s30_SwCleanUpWait', 'e00_GoHwDown', 's00_HwDown', 'keep'),
  T('s30_SwCleanUpWait', 'e40_SwCleaned', 's40_HwCleanUpWait', 'keep', ['start-hw-clean-up']),
  T('s30_SwCleanUpWait', 'e30_GoRunning', 's30_SwCleanUpWait', 'set'),
  T('s30_SwCleanUpWait', 'e70_GoIdle', 's30_SwCleanUpWait', 'clear'),
  T('s30_SwCleanUpWait', 'e85_LinkDown', 's30_SwCleanUpWait', 'clear'),

  T('s40_HwCleanUpWait', 'e00_GoHwDown', 's00_HwDown', 'keep', ['schedule-sw-clean-up']),
  T('s40_HwCleanUpWait', 'e25_HwCleanUpDone', 'go?', 'keep', ['hw-start-up']),
  T('s40_HwCleanUpWait', 'e30_GoRunning', 's40_HwCleanUpWait', 'set'),
  T('s40_HwCleanUpWait', 'e70_GoIdle', 's40_HwCleanUpWait', 'clear'),
  T('s40_HwCleanUpWait', 'e85_LinkDown', 's40_HwCleanUpWait', 'clear'),

  T('s50_HwHaltWait', 'e00_GoHwDown', 's00_HwDown', 'keep', ['schedule-sw-clean-up']),
  T('s50_HwHaltWait', 'e15_HwHaltDone', 's30_SwCleanUpWait', 'keep', ['schedule-sw-clean-up']),
  T('s50_HwHaltWait', 'e60_HwHalted', 's50_HwHaltWait', 'keep', ['schedule-halt-wait']),
  T('s50_HwHaltWait', 'e30_GoRunning', 's50_HwHaltWait', 'set'),
  T('s50_HwHaltWait', 'e70_GoIdle', 's50_HwHaltWait', 'clear'),
  T('s50_HwHaltWait', 'e85_LinkDown', 's50_HwHaltWait', 'clear'),

  T('s60_IdleHaltWait', 'e00_GoHwDown', 's00_HwDown', 'keep', ['schedule-sw-clean-up']),
  T('s60_IdleHaltWait', 'e15_HwHaltDone', 's30_SwCleanUpWait', 'keep', ['schedule-sw-clean-up']),
  T('s60_IdleHaltWait', 'e60_HwHalted', 's60_IdleHaltWait', 'keep', ['schedule-halt-wait']),
  T('s60_IdleHaltWait', 'e30_GoRunning', 's60_IdleHaltWait', 'set'),
  T('s60_IdleHaltWait', 'e70_GoIdle', 's60_IdleHaltWait', 'clear'),

  T('s80_HwFreeze', 'e00_GoHwDown', 's00_HwDown', 'keep', ['schedule-sw-clean-up']),
  T('s80_HwFreeze', 'e81_HwFrozen', 's82_FreezeSwClean', 'keep', ['schedule-sw-clean-up']),
  T('s80_HwFreeze', 'e30_GoRunning', 's80_HwFreeze', 'set'),
  T('s80_HwFreeze', 'e70_GoIdle', 's80_HwFreeze', 'clear'),

  T('s82_FreezeSwClean', 'e00_GoHwDown', 's00_HwDown', 'keep', ['schedule-sw-clean-up']),
  T('s82_FreezeSwClean', 'e40_SwCleaned', 's82_FreezeSwClean', 'keep', ['unfreeze-count-and-wake']),
  T('s82_FreezeSwClean', 'e82_HwUnfreeze', 'go?', 'keep', ['hw-start-up']),
  T('s82_FreezeSwClean', 'e30_GoRunning', 's82_FreezeSwClean', 'set'),
  T('s82_FreezeSwClean', 'e70_GoIdle', 's82_FreezeSwClean', 'clear'),

  T('s99_Running', 'e00_GoHwDown', 's00_HwDown', 'keep', ['schedule-sw-clean-up']),
  T('s99_Running', 'e60_HwHalted', 's50_HwHaltWait', 'keep', ['a-step-check', 'schedule-halt-wait', 'progress-after']),
  T('s99_Running', 'e90_SwHalted', 's50_HwHaltWait', 'keep', ['schedule-halt-wait']),
  T('s99_Running', 'e70_GoIdle', 's60_IdleHaltWait', 'keep'),
  T('s99_Running', 'e85_LinkDown', 's80_HwFreeze', 'clear', ['unfreeze-count-and-wake']),
  T('s99_Running', 'e80_HwFreeze', 's80_HwFreeze', 'keep', ['unfreeze-count-and-wake']),
];

const TABLE = new Map<string, Transition>(TRANSITIONS.map((t) => [`${t.state}/${t.event}`, t]));

/** The row of the transition table for (state, event), or undefined: an unlisted pair has no effect. */
export function findTransition(state: StateName, event: EventName): Transition | undefined {
  return TABLE.get(`${state}/${event}`);
}

/** The outcome of one event: where the engine goes, go_s99_running after it, and the actions. */
export interface StepResult {
  /** False for an unlisted pair: nothing changes. */
  listed: boolean;
  from: StateName;
  to: StateName;
  go: boolean;
  actions: readonly TransitionAction[];
}

/**
 * Apply one event (__sdma_process_event, sdma.c) given go_s99_running. The go effect of the row applies before a `go?`
 * destination is resolved; entering s99 sets go and, from any other state, flushes first; entering
 * s00 or s60 clears go (the state names, sdma.c entry actions).
 */
export function step(state: StateName, event: EventName, go: boolean): StepResult {
  const t = findTransition(state, event);
  if (!t) return { listed: false, from: state, to: state, go, actions: [] };
  let goAfter = t.go === 'set' ? true : t.go === 'clear' ? false : go;
  const to: StateName = t.next === 'go?' ? (goAfter ? 's99_Running' : 's20_Idle') : t.next;
  const actions: TransitionAction[] = [...t.actions];
  if (to === 's99_Running') {
    goAfter = true;
    if (state !== 's99_Running') actions.unshift('flush-before-running');
  }
  if (to === 's00_HwDown' || to === 's60_IdleHaltWait') goAfter = false;
  return { listed: true, from: state, to, go: goAfter, actions };
}

/** True for a name the driver prints (the state names, sdma.c). */
export function isStateName(s: string): s is StateName {
  return (STATE_NAMES as readonly string[]).includes(s);
}

/** True for the states in which the engine moves data or is legitimately quiet (sdma_descq_freecnt, sdma.h). */
export function isOperational(state: string): boolean {
  return state === 's99_Running' || state === 's20_Idle';
}
