// A snapshot of an engine's domain (src/emu/snapshot.ts) copies its objects' own fields: a field added to one of them
// is copied with it when it holds a number, but one that holds an object (a list, a counter object) is shared by the
// copy and would not be put back. These checks fail on such a field until the snapshot says how it is put back.
// (That a snapshot put back gives the stepped model's state is checked by fast-model.test.ts.)
import { describe, expect, it } from 'vitest';
import { loadTx, saveTx, TX_FIXED, TX_NUMBERS, TX_REFS } from '../../src/emu/snapshot.js';
import { EmuTx } from '../../src/emu/tx.js';
import { EmuUnit } from '../../src/emu/unit.js';

/** Fields that hold objects, per class, as takeSnapshot() and restoreSnapshot() treat them (see snapshot.ts). */
const OBJECT_FIELDS = {
  // descq: written again from the requests in flight; skewLog: history; host, chip: the same objects for good.
  engine: ['host', 'descq', 'txRing', 'dmawait', 'harvest', 'flushlist', 'stats', 'skewLog', 'rng', 'chip'],
  // masks: fixed; txPort: changes only with the link (no skip across that).
  chip: ['host', 'descq', 'stats', 'masks', 'step', 'traffic', 'txPort'],
  // pattern: drawn once, never written; templates, chipWords: caches shared by the unit's senders.
  sender: [
    'host',
    'spec',
    'engine',
    'rng',
    'wait',
    'ipoib',
    'free',
    'batch',
    'count',
    'pattern',
    'bulkHeld',
    'bulkTraffic',
    'templates',
    'chipWords',
    'identity',
  ],
  iowait: ['queuedOn', 'txHead', 'client'],
  ipoib: ['list'],
} as const;

function objectFields(o: object): string[] {
  return Object.entries(o)
    .filter(([, v]) => v !== null && typeof v === 'object')
    .map(([k]) => k)
    .sort();
}

describe('what a snapshot of a domain copies', () => {
  it('every field of a request is saved and loaded, or fixed', () => {
    const fields = Object.keys(new EmuTx(null)).sort();
    expect([...TX_NUMBERS, ...TX_REFS, ...TX_FIXED].sort()).toEqual(fields);
    const t = new EmuTx(null);
    TX_NUMBERS.forEach((f, i) => {
      (t as unknown as Record<string, number>)[f] = 100 + i;
    });
    const words = new Uint32Array(4);
    t.words = words;
    const nums: number[] = [];
    const refs: unknown[] = [];
    saveTx(t, nums, refs, 1);
    const u = new EmuTx(null);
    loadTx(u, nums, refs, 1);
    for (const f of TX_NUMBERS) expect(u[f], f).toBe(t[f]);
    expect(u.words).toBe(words);
  });

  it('every field of the domain that holds an object is one the snapshot knows how to put back', () => {
    const unit = new EmuUnit({ workload: 'ipoib', chip: 'jkr', driver: 'hfi2', ports: 2, engines: 2 });
    unit.runUntilMs(5);
    const e = unit.engines[0];
    const s = unit.senders.find((x) => x.ipoib !== null);
    if (e === undefined || s === undefined || s.ipoib === null) throw new Error('no engine or IPoIB sender');
    for (const f of objectFields(e)) expect(OBJECT_FIELDS.engine, `Engine.${f}`).toContain(f);
    for (const f of objectFields(e.chip)) expect(OBJECT_FIELDS.chip, `Chip.${f}`).toContain(f);
    for (const f of objectFields(s)) expect(OBJECT_FIELDS.sender, `Sender.${f}`).toContain(f);
    for (const f of objectFields(s.wait)) expect(OBJECT_FIELDS.iowait, `IoWait.${f}`).toContain(f);
    for (const f of objectFields(s.ipoib)) expect(OBJECT_FIELDS.ipoib, `IpoibState.${f}`).toContain(f);
    // Copied whole by a spread: numbers only (the engine's violations are a guard: no stretch that adds one is skipped).
    for (const o of [e.chip.step, e.chip.traffic, e.rng, s.bulkTraffic]) expect(objectFields(o)).toEqual([]);
    expect(objectFields(e.stats)).toEqual(['violations']);
    // And the check sees the fields it is about.
    expect(objectFields(e)).toContain('txRing');
    expect(objectFields(s)).toContain('free');
  });
});
