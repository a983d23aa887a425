// The event log: its digest covers every record written, in order, per engine; a block of records that repeats k
// times, `period` apart with its counters moving by the same amount each time, digests in closed form exactly as the
// records written one by one (what the fast model relies on when it skips a periodic stretch), across a 32-bit
// counter's wrap too; and the retained tail stays bounded (and holds only the rare kinds when asked).
import { describe, expect, it } from 'vitest';
import { emuUnitFromOptions } from '../../src/emu/index.js';
import { copyStream, EventLog, LogKind } from '../../src/emu/log.js';
import { EmuUnit } from '../../src/emu/unit.js';

/** Write `n` records of a pattern on engine `engine` starting at time `t0`, with a free-running u32 counter. */
function block(log: EventLog, engine: number, t0: number, counter: number, n: number): void {
  for (let i = 0; i < n; i++) {
    // interrupt: bits, descq_head (u32, wraps), completed; sleep: id, num_desc, -16
    log.write(t0 + 100 * i + (i % 3), 3, engine, 1 << (i % 3), (counter + 7 * i) >>> 0, i % 5);
    if (i % 4 === 0) log.write(t0 + 100 * i + 50, 5, engine, 2, 3 + (i % 2), -16);
  }
}

describe('event log', () => {
  it('digests every record: one field changed changes it; the same records give the same digest', () => {
    const a = new EventLog();
    const b = new EventLog();
    block(a, 0, 0, 10, 50);
    block(b, 0, 0, 10, 50);
    expect(a.digest()).toBe(b.digest());
    b.write(6000, 6, 0, 2, 0, 0);
    expect(b.digest()).not.toBe(a.digest());
    a.write(6000, 6, 0, 2, 0, 1);
    expect(a.digest()).not.toBe(b.digest());
  });

  it.each([
    ['a few repetitions', 3, 1000],
    ['a million repetitions, the u32 counter wrapping', 1_000_000, 4_294_000_000],
  ])('digests %s of a block in closed form as written one by one', (_what, k, start) => {
    const period = 10_000;
    const perBlock = 30; // each block moves the counter by 7 × 30
    const stepped = new EventLog('all', 10);
    const skipped = new EventLog('all', 10);
    for (const log of [stepped, skipped]) {
      block(log, -1, 0, 0, 5); // the unit's own stream is left alone
      block(log, 2, 0, start, perBlock); // a first block: the repeat is taken from the second
    }
    block(stepped, 2, period, (start + 7 * perBlock) >>> 0, perBlock);
    block(skipped, 2, period, (start + 7 * perBlock) >>> 0, perBlock);
    // `skipped` skips k − 1 further blocks: the block just written, repeated.
    const from = copyStream(skipped.stream(2));
    block(skipped, 2, 2 * period, (start + 14 * perBlock) >>> 0, perBlock);
    // (from: after two blocks; now: after three; repeat the third k − 1 times)
    const fromThird = copyStream(from);
    skipped.repeat(2, fromThird, k - 1, period, 3 * period);
    const sampleRepeats = Math.min(k, 5);
    for (let j = 0; j < sampleRepeats; j++) {
      block(stepped, 2, (2 + j) * period, (start + 7 * perBlock * (2 + j)) >>> 0, perBlock);
    }
    if (k <= 5) {
      expect(skipped.digest()).toBe(stepped.digest());
      expect(skipped.count).toBe(stepped.count);
    } else {
      // Too many to write one by one here: the closed form is checked against itself split in two.
      const half = new EventLog('all', 10);
      block(half, -1, 0, 0, 5);
      block(half, 2, 0, start, perBlock);
      block(half, 2, period, (start + 7 * perBlock) >>> 0, perBlock);
      const f2 = copyStream(half.stream(2));
      block(half, 2, 2 * period, (start + 14 * perBlock) >>> 0, perBlock);
      half.repeat(2, f2, 400_000, period, 3 * period);
      // The next block written out (the 400,004th), then repeated for the rest: k + 2 blocks in all.
      const f3 = copyStream(half.stream(2));
      const t = 400_003 * period;
      block(half, 2, t, (start + 7 * perBlock * 400_003) >>> 0, perBlock);
      half.repeat(2, f3, k - 400_002, period, t + period);
      expect(half.digest()).toBe(skipped.digest());
      expect(half.count).toBe(skipped.count);
    }
    // The skipped records are counted and stood for by one `repeat` record in the retained tail.
    expect(skipped.records(['repeat'])).toEqual([
      { timeNs: 3 * period, kind: 'repeat', engine: 2, a: k - 1, b: period, c: (k - 1) * (perBlock + 8) },
    ]);
  });

  it("keeps only the rare kinds when asked ('rare'), digesting and counting every record alike", () => {
    const all = new EventLog('all');
    const rare = new EventLog('rare');
    for (const log of [all, rare]) {
      log.write(1000, LogKind.interrupt, 0, 1, 5, 2);
      log.write(2000, LogKind.event, 0, 3, 4, 5);
      log.write(3000, LogKind.sleep, 0, 7, 4, -16);
      log.write(4000, LogKind.fault, 0, 1, 0, 0);
      log.repeat(0, copyStream(log.stream(0)), 3, 10, 5000);
    }
    expect(rare.digest()).toBe(all.digest());
    expect(rare.count).toBe(all.count);
    expect(all.records().map((r) => r.kind)).toEqual(['interrupt', 'event', 'sleep', 'fault', 'repeat']);
    expect(rare.records().map((r) => r.kind)).toEqual(['event', 'fault']);
    expect([rare.keeps('event'), rare.keeps('interrupt'), all.keeps('interrupt')]).toEqual([true, false, true]);
  });

  it("a unit keeps the rare kinds only, as a command's does, and is asked for no other unless it keeps all", () => {
    const u = emuUnitFromOptions({
      seed: 1,
      engines: 2,
      descqCnt: undefined,
      atMs: undefined,
      workload: 'qp',
      fault: ['stop-fetch@3:1'],
    });
    u.runUntilMs(5);
    expect(u.host.log.count).toBeGreaterThan(100);
    expect(u.events(['fault']).map((r) => r.engine)).toEqual([1]);
    expect(() => u.events(['interrupt'])).toThrow(/keeps only its rare records .* not interrupt/);
    expect(() => new EmuUnit({ seed: 1, engines: 2, workload: 'qp' }).events(['interrupt'])).toThrow(/not interrupt/);
    expect(new EmuUnit({ seed: 1, engines: 2, workload: 'qp', retainLog: 'all' }).events(['interrupt'])).toEqual([]);
  });

  it('keeps a bounded tail of the records, the newest last', () => {
    const log = new EventLog('all', 20_000);
    for (let i = 0; i < 90_000; i++) log.write(i * 7, 1 + (i % 17), i % 16, i, -i, i * 3);
    expect(log.count).toBe(90_000);
    const kept = log.records();
    expect(kept.length).toBeLessThanOrEqual(20_000 + 16_384);
    expect(kept.at(-1)?.a).toBe(89_999);
  });
});
