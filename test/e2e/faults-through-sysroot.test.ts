// Every emulator fault, end to end as on a live host: emulator → rendered sysroot → src/hw →
// classifier. The right verdict and reason must appear within stall-ms + 2 intervals of the
// fault, on the faulty engine only.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { openHwBackend } from '../../src/hw/index.js';
import { type Classification, classify, newTrack, type Reason, type Verdict } from '../../src/progress/classify.js';
import { removeTrees } from '../support/temp.js';

const ENGINES = 4;
const FAULTY = 3;
const FAULT_AT = 300;
const INTERVAL = 100;
const STALL_MS = 500;
const dirs: string[] = [];
afterAll(() => {
  removeTrees(dirs);
});

/** Run the unit with one fault, sampling through a rendered sysroot; the verdicts per engine over time. */
async function observe(fault: string, untilMs: number): Promise<{ t: number; c: Classification[] }[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fault-e2e-'));
  dirs.push(dir);
  // A light load (2 Gb/s): each fault's signature does not depend on the rate, and the emulator's
  // time then goes to the fault, not to traffic (60 s at line rate is no-false-stall's job).
  const u = new EmuUnit({ seed: 11, engines: ENGINES, workload: 'qp:gbps=2', faults: [fault] });
  u.runUntilMs(100);
  await writeSysroot(u, dir);
  const hw = await openHwBackend({ sysroot: dir });
  const tracks = Array.from({ length: ENGINES }, () => newTrack());
  const out: { t: number; c: Classification[] }[] = [];
  try {
    const unit = await hw.unit(0);
    for (let t = 100; t <= untilMs; t += INTERVAL) {
      if (t > 100) {
        u.runUntilMs(t);
        await writeSysroot(u, dir);
      }
      const samples = await unit.sample();
      // The rendered files carry no clock: time the samples with the emulator's.
      const c = samples.map((s, e) =>
        classify(tracks[e] ?? newTrack(), { ...s, timeMs: t }, { stallMs: STALL_MS, recoveryMs: 2000, descqCnt: 2048 }),
      );
      out.push({ t, c });
    }
  } finally {
    await hw.close();
  }
  return out;
}

function expectOnFaulty(rounds: { t: number; c: Classification[] }[], verdict: Verdict, reason: Reason | null) {
  const deadline = FAULT_AT + STALL_MS + 2 * INTERVAL;
  const hit = rounds.find(
    (r) => r.t <= deadline && r.c[FAULTY]?.verdict === verdict && (reason === null || r.c[FAULTY]?.reason === reason),
  );
  expect(
    hit,
    `engine ${FAULTY} ${verdict}${reason ? `/${reason}` : ''} by ${deadline} ms; saw ${rounds.map((r) => `${r.t}:${r.c[FAULTY]?.verdict}/${r.c[FAULTY]?.reason}`).join(' ')}`,
  ).toBeDefined();
  for (const r of rounds) {
    for (let e = 0; e < FAULTY; e++) expect(['stalled', 'halted', 'gone']).not.toContain(r.c[e]?.verdict);
  }
}

describe('faults seen through the rendered sysroot', () => {
  it('stop-fetch → stalled, chip-not-fetching', async () => {
    expectOnFaulty(await observe(`stop-fetch@${FAULT_AT}:${FAULTY}`, 1200), 'stalled', 'chip-not-fetching');
  });

  it('lost-interrupt → stalled, retirement-lost', async () => {
    expectOnFaulty(await observe(`lost-interrupt@${FAULT_AT}:${FAULTY}`, 1200), 'stalled', 'retirement-lost');
  });

  it('head-writeback-stall → still progressing, noted as writeback-stalled', async () => {
    const rounds = await observe(`head-writeback-stall@${FAULT_AT}:${FAULTY}`, 1200);
    expectOnFaulty(rounds, 'progressing', 'writeback-stalled');
    expect(rounds.map((r) => r.c[FAULTY]?.verdict)).not.toContain('stalled');
  });

  it('device-gone → every engine gone (the whole device reads all-ones)', async () => {
    const rounds = await observe(`device-gone@${FAULT_AT}:${FAULTY}`, 600);
    expect(rounds.find((r) => r.t === FAULT_AT - INTERVAL)?.c.map((c) => c.verdict)).not.toContain('gone');
    const after = rounds.filter((r) => r.t > FAULT_AT);
    expect(after.length).toBeGreaterThan(0);
    for (const r of after)
      expect(r.c.map((c) => `${c.verdict}/${c.reason}`)).toEqual(Array(ENGINES).fill('gone/registers-all-ones'));
  });

  it('a halt-class engine error recovers within the window: never halted or stalled, progressing again', async () => {
    const rounds = await observe(`engine-error:1@${FAULT_AT}:${FAULTY}`, 1500);
    expect(rounds.map((r) => r.c[FAULTY]?.verdict)).not.toContain('halted');
    expect(rounds.map((r) => r.c[FAULTY]?.verdict)).not.toContain('stalled');
    expect(rounds.at(-1)?.c[FAULTY]?.verdict).toMatch(/progressing|idle|backpressure/);
  });

  it('freeze recovers to running; slow keeps progressing', async () => {
    for (const f of [`freeze@${FAULT_AT}:${FAULTY}`, `slow:4@${FAULT_AT}:${FAULTY}`]) {
      const rounds = await observe(f, 1200);
      expect(
        rounds.map((r) => r.c[FAULTY]?.verdict),
        f,
      ).not.toContain('stalled');
      expect(
        rounds.map((r) => r.c[FAULTY]?.verdict),
        f,
      ).not.toContain('halted');
    }
  });

  it('link-down parks the engines in s20_Idle: idle, not halted', async () => {
    const rounds = await observe(`link-down@${FAULT_AT}`, 1000);
    const last = rounds.at(-1)?.c ?? [];
    expect(last.map((c) => c.verdict)).toEqual(Array(ENGINES).fill('idle'));
  });
});
