// Every time and count the library takes is checked where it is handed over: a NaN, an infinity, a negative time, a
// zero interval or an out-of-range counter is E_USAGE naming the argument as the caller wrote it, never a flag of the
// command line, and never a loop that spins or a number computed from nonsense. A closed emulator refuses to go on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmuBackend, type Emulator } from '../../src/api/emulator.js';
import { createMonitor, Hfi1SdmaError } from '../../src/api/index.js';
import * as progress from '../../src/api/progress.js';

/** The E_USAGE error `fn` throws (sync) or rejects with (async). */
async function usage(fn: () => unknown): Promise<Hfi1SdmaError> {
  let err: unknown;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  expect(err, 'it did not throw').toBeInstanceOf(Hfi1SdmaError);
  const e = err as Hfi1SdmaError;
  expect(e.code, e.message).toBe('E_USAGE');
  // In the library's words: the call and the option, never a flag.
  expect(e.message).not.toMatch(/(^|[\s(])--[a-z]/);
  return e;
}

let emu: Emulator;
beforeAll(async () => {
  emu = await createEmuBackend({ engines: 1, workload: 'idle' });
});
afterAll(() => emu.close());

describe('the emulator', () => {
  it.each([Number.NaN, Number.POSITIVE_INFINITY, -5])(
    'advance(%s) is refused at once, not a loop that never ends',
    async (ms) => {
      const before = emu.nowMs;
      const e = await usage(() => emu.advance(ms));
      expect(e.message).toBe(`advance(ms): ms must be a time in ms, a finite number 0 or more; got ${ms}`);
      expect(emu.nowMs).toBe(before);
    },
  );

  it.each([Number.NaN, Number.NEGATIVE_INFINITY, -1])('advanceMs(%s) is refused', async (ms) => {
    await usage(() => emu.advanceMs(ms));
  });

  it('advance(0) lets no time pass; a signal that is no AbortSignal, or a misspelt option, is refused', async () => {
    await emu.advance(0);
    await usage(() => emu.advance(1, { signal: 'stop' as unknown as AbortSignal }));
    await usage(() => emu.advance(1, { sigal: AbortSignal.timeout(1) } as unknown as { signal: AbortSignal }));
  });

  it.each<[string, Parameters<typeof createEmuBackend>[0], RegExp]>([
    ['engines 0', { engines: 0 }, /^createEmuBackend: engines must be a count of engines, a whole number from 1 to 16; got 0$/],
    ['a window past engine 15', { firstEngine: 8, engines: 16, driver: 'hfi2' }, /^createEmuBackend: engines: the window 8-23/],
    ['seed NaN', { seed: Number.NaN }, /seed must be a seed/],
    ['atMs -1', { atMs: -1 }, /atMs must be a virtual time in ms/],
    ['descqCnt 2.5', { descqCnt: 2.5 }, /descqCnt must be the sdma_descq_cnt module parameter/],
    ['ports 3', { ports: 3 as 1 }, /ports must be 1 or 2; got 3/],
    [
      'chip jkr on upstream hfi1',
      { chip: 'jkr' },
      /^createEmuBackend: chip jkr, driver upstream: upstream hfi1 does not drive the CN5000/,
    ],
    [
      'a misspelt fault',
      { faults: ['stop-fecth@1000:3' as 'stop-fetch@1000:3'] },
      /^createEmuBackend: fault "stop-fecth@1000:3": unknown fault/,
    ],
    ['a misspelt workload', { workload: 'linerate' as 'line-rate' }, /^createEmuBackend: workload "linerate": unknown workload/],
    ['a misspelt option', { engine: 4 } as Parameters<typeof createEmuBackend>[0], /there is no option "engine"/],
  ])("createEmuBackend with %s is E_USAGE in the library's words", async (_what, o, message) => {
    expect((await usage(() => createEmuBackend(o))).message).toMatch(message);
  });

  it('injectFault names the fault as given; writeSysroot("/") names dir; serve needs its signal', async () => {
    expect((await usage(() => emu.injectFault('bogus' as 'freeze'))).message).toMatch(
      /^injectFault\("bogus"\): unknown fault "bogus"/,
    );
    expect((await usage(() => emu.injectFault('freeze', -1))).message).toMatch(/target must be an engine or a port/);
    expect((await usage(() => emu.injectFault('freeze@10:0' as 'freeze', 0))).message).toMatch(/names its time and target/);
    expect((await usage(() => emu.writeSysroot('/'))).message).toMatch(/^writeSysroot\(dir\): dir \/: that is \//);
    expect((await usage(() => emu.serve('/tmp/x', {} as { signal: AbortSignal }))).message).toMatch(/signal is required/);
    const signal = AbortSignal.abort();
    expect((await usage(() => emu.serve('/tmp/x', { signal, intervalMs: 0 }))).message).toMatch(/intervalMs must be wall ms/);
  });

  it('after close(), every call is E_USAGE saying so', async () => {
    const closed = await createEmuBackend({ engines: 1, workload: 'idle' });
    await closed.close();
    for (const call of [
      () => closed.units(),
      () => closed.unit(0),
      () => closed.advance(1),
      () => closed.advanceMs(1),
      () => closed.totals(),
    ]) {
      expect((await usage(call)).message).toMatch(/the emulator was closed; create another with createEmuBackend\(\)$/);
    }
    await closed.close(); // twice is safe
  });

  it("advance's signal stops it where it got to, rejecting with the signal's reason", async () => {
    const stop = new AbortController();
    stop.abort(new Error('enough'));
    await expect(emu.advance(1000, { signal: stop.signal })).rejects.toThrow('enough');
  });
});

describe('the monitor', () => {
  it.each([
    ['stallMs', -1],
    ['recoveryMs', 0],
    ['strandMs', Number.NaN],
    ['readTimeoutMs', Number.POSITIVE_INFINITY],
  ])('createMonitor with %s %s is E_USAGE', async (name, value) => {
    expect((await usage(() => createMonitor(emu, { [name]: value }))).message).toMatch(
      new RegExp(`^createMonitor: ${name} must be a time in ms, a finite number above 0; got ${value}$`),
    );
  });

  it('rounds with intervalMs 0, count 0 or no options is E_USAGE, before a round is read', async () => {
    const m = createMonitor(emu);
    await usage(() => m.rounds({ intervalMs: 0, count: 2 }));
    await usage(() => m.rounds({ intervalMs: 100, count: 0 }));
    await usage(() => m.rounds(undefined as unknown as { intervalMs: number }));
    await usage(() => createMonitor({} as Emulator));
  });
});

describe('the pure core', () => {
  it.each<[string, () => unknown, RegExp]>([
    [
      'fitReport on a ring of 3000',
      () => progress.fitReport(3000, 0, 10, 4),
      /^fitReport: descqCnt must be a ring size, a power of two from 64 to 32768/,
    ],
    [
      'fitReport on driver "bogus"',
      () => progress.fitReport(2048, 0, 10, 4, 'bogus' as 'hfi2'),
      /^fitReport: driver must be one of "upstream", "cornelis", "hfi2"; got "bogus"$/,
    ],
    [
      'freeCount with a NaN head',
      () => progress.freeCount(2048, Number.NaN, 5),
      /^freeCount: descqHead must be an unsigned 32-bit counter/,
    ],
    [
      'freeCount with a tail past u32',
      () => progress.freeCount(2048, 0, 2 ** 32),
      /descqTail must be an unsigned 32-bit counter/,
    ],
    [
      'decodeFor chip "xyz"',
      () => progress.decodeFor('xyz' as 'wfr', 0n, 0n),
      /^decodeFor: chip must be "wfr" or "jkr"; got "xyz"$/,
    ],
    ['decode a negative word', () => progress.decode(-1n, 0n), /^decode: qw0 must be a 64-bit word as a bigint/],
    [
      'encode a length past BYTE_COUNT',
      () => progress.encode({ ...progress.decode(0n, 0n), len: 1 << 20 }),
      /^encode: descriptor field len/,
    ],
    [
      'sdmaProgress with a NaN sequence',
      () => progress.sdmaProgress({ seq: Number.NaN, descqCnt: 2048, descqHead: 0, descqTail: 0 }, 0, 1),
      /state\.seq must be/,
    ],
    [
      'sdmaProgress with -1 descriptors',
      () => progress.sdmaProgress({ seq: 2, descqCnt: 2048, descqHead: 0, descqTail: 0 }, 0, -1),
      /numDesc must be a count of descriptors/,
    ],
    [
      'classify with stallMs 0',
      () => progress.classify(progress.newTrack(), {} as progress.EngineSample, { stallMs: 0, recoveryMs: 1, descqCnt: 2048 }),
      /^classify: opts\.stallMs must be/,
    ],
  ])('%s is E_USAGE naming the argument', async (_what, call, message) => {
    expect((await usage(call)).message).toMatch(message);
  });

  it('in range, it answers as the core does', () => {
    expect(progress.freeCount(2048, 0xffff_fff0, 0x10)).toBe(2015);
    expect(progress.fitReport(2048, 0, 10, 4)).toMatchObject({ free: 2037, fits: true });
    expect(progress.sdmaProgress({ seq: 4, descqCnt: 2048, descqHead: 10, descqTail: 20 }, 2, 9)).toBe(1);
  });
});
