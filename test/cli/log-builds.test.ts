// `log` on the kernel-log lines of the Cornelis hfi1 build and of hfi2, from fixtures written by hand from the
// drivers' format strings (dump_sdma_state, show_tagged_sdma_descriptors, sdma_qw_strings, the hw clean-up work).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderLog } from '../../src/cli/log.js';
import { parseKernelLog } from '../../src/kmsg/parse.js';
import { readKernelLog } from '../../src/kmsg/stream.js';
import { runCli } from '../support/cli.js';
import { FakeBackend } from '../support/fake-backend.js';

const fixture = (name: string) => new URL(`../fixtures/kmsg/${name}`, import.meta.url).pathname;
const CORNELIS = fixture('cornelis-jkr.dmesg');
const HFI2 = fixture('hfi2-window.dmesg');
const UPSTREAM = fixture('engine-error.dmesg');
const empty = mkdtempSync(join(tmpdir(), 'hfi1-sdma-log-builds-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

describe('the Cornelis hfi1 build on JKR', () => {
  const log = parseKernelLog(readFileSync(CORNELIS, 'utf8'), { chip: 'jkr' });

  it('reads the newer dump: slots, used (the in-flight count), avail, the ring it implies and the tag', () => {
    const dumps = log.events.filter((e) => e.kind === 'ring-dump');
    expect(dumps[0]).toMatchObject({
      line: 2,
      unit: 'hfi1_0',
      engine: 3,
      head: 2046,
      tail: 1,
      used: 3,
      inFlight: 3,
      freecnt: 2044,
      descqCnt: 2048,
      flushListNonEmpty: false,
      tag: 7,
    });
    expect(dumps[1]).toMatchObject({ engine: 4, used: 0, inFlight: 0, descqCnt: 2048 });
    expect(dumps[1]?.tag).toBeUndefined();
  });

  it('links tagged descriptor lines to their dump across interleaved lines, AHG lines to their descriptor', () => {
    const ds = log.events.filter((e) => e.kind === 'descriptor');
    expect(ds.map((d) => [d.tag, d.engine, d.slot, d.flags, d.len])).toEqual([
      [7, 3, 2046, '--F-', 64],
      [7, 3, 2047, '-H-L', 8192],
      [7, 3, 0, 'I-FL', 128],
    ]);
    expect(ds[0]).toMatchObject({ ahgIdx: 0, ahgMode: 0, ahgLen: 0, qw1: '0x0000000080400004' });
    expect(ds[1]?.ahgMode).toBeUndefined();
    expect(ds[2]).toMatchObject({ ahgIdx: 3, ahgMode: 1, ahgLen: 2 });
    expect(log.events.find((e) => e.kind === 'spurious-interrupt')).toMatchObject({ line: 6, engine: 5 });
  });

  it('decodes d0/d1 in the JKR layout: FIRST/LAST/BYTE_COUNT from qw1, as the line prints them', () => {
    const ds = log.events.filter((e) => e.kind === 'descriptor');
    expect(ds.map((d) => d.decoded && [d.decoded.first, d.decoded.last, d.decoded.len, d.decoded.gen])).toEqual([
      [true, false, 64, 1],
      [false, true, 8192, 1],
      [true, true, 128, 2],
    ]);
    expect(ds[2]?.decoded).toMatchObject({ intReq: true, ahgIdx: 3, ahgMode: 1, ahgDws: 2, addr: 0x123458000n });
    expect(log.events.some((e) => e.kind === 'unrecognised')).toBe(false);
  });

  it('decodes as the chip it is told, never one guessed from the line (as WFR the flags differ)', () => {
    const wfr = parseKernelLog(readFileSync(CORNELIS, 'utf8'));
    expect(wfr.chip).toBe('wfr');
    const d = wfr.events.find((e) => e.kind === 'descriptor');
    expect(d?.flags).toBe('--F-');
    expect(d?.decoded).toMatchObject({ first: false, len: 0 });
  });
});

describe('hfi2 with an engine window', () => {
  const log = parseKernelLog(readFileSync(HFI2, 'utf8'), { chip: 'jkr' });

  it('reads hfi2_N prefixes as units of module hfi2, engines by their absolute index', () => {
    expect(log.units).toMatchObject([{ name: 'hfi2_0', module: 'hfi2', pci: '0000:41:00.0' }]);
    expect(log.units[0]?.engineCpu[9]).toBe(6);
    expect(log.hfi1Lines).toBe(10);
    expect(log.events.map((e) => [e.kind, e.engine])).toEqual([
      ['engine-error', 9],
      ['ring-dump', 9],
      ['clean-timeout', 9],
      ['ring-dump', 12],
      ['descriptor', undefined],
      ['descriptor', 12],
      ['descriptor', 12],
      ['unrecognised', undefined],
    ]);
  });

  it('keeps a descriptor whose dump is not in the log under its tag, with no engine', () => {
    const orphan = log.events.find((e) => e.tag === 5);
    expect(orphan).toMatchObject({ kind: 'descriptor', slot: 3, flags: '--FL', len: 64 });
    expect(orphan?.engine).toBeUndefined();
    expect(log.events.find((e) => e.kind === 'ring-dump' && e.engine === 12)).toMatchObject({ used: 2, descqCnt: 1024 });
    const first = log.events.find((e) => e.kind === 'descriptor' && e.slot === 10);
    expect(first?.decoded).toMatchObject({ first: true, len: 64, addr: 0x03ff_ffff_ffff_ffffn });
    expect(first).toMatchObject({ ahgIdx: 0, ahgMode: 0, ahgLen: 0 });
  });

  it('an unknown SDMA line of an hfi2 unit stays unrecognised with its text', () => {
    expect(log.events.at(-1)).toMatchObject({ kind: 'unrecognised', line: 10, text: 'SDMA (12) frobnicated in a new way' });
  });

  it('the streaming reader finds hfi2 lines as the whole-text parser does', async () => {
    const text = readFileSync(HFI2, 'utf8');
    // Two chunks, the cut inside a line.
    const chunks = (async function* () {
      yield text.slice(0, 300);
      yield text.slice(300);
    })();
    const streamed = await readKernelLog(chunks, { chip: 'jkr' });
    expect(streamed.events).toEqual(log.events);
    expect(streamed.units).toEqual(log.units);
  });
});

describe('log command on each build', () => {
  it('upstream, Cornelis and hfi2 logs each decode with exit 0', async () => {
    for (const f of [UPSTREAM, CORNELIS, HFI2]) {
      const r = await runCli(['--sysroot', empty, 'log', f, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).chip).toBe('wfr');
    }
  });

  it('--chip jkr decodes the qwords as JKR and says so; as WFR it flags the mismatch', async () => {
    const jkr = await runCli(['--sysroot', empty, '--chip', 'jkr', 'log', CORNELIS]);
    expect(jkr.stdout).toMatch(/^descriptor qwords decoded as jkr \(--chip\)$/m);
    expect(jkr.stdout).toMatch(
      /hfi1_0 sdma3: ring dump: head slot 2046, tail slot 1, used 3 \(in flight; upstream's in-process would read 4\), free 2044, ring 2048, flush list empty; descriptors follow as \[desc 7\]/,
    );
    expect(jkr.stdout).toMatch(
      /\[desc 7\] sdma3 desc\[2046\] --F- addr 0x0000000123456000 gen 1 len 64\s+ahg idx 0 mode 0 len 0/,
    );
    expect(jkr.stdout).not.toMatch(/differ/);
    const wfr = await runCli(['--sysroot', empty, 'log', CORNELIS]);
    expect(wfr.stdout).toMatch(/raw flags ---- as wfr differ: is --chip right\?/);
  });

  it('the hfi2 clean-up timeout reads as such', async () => {
    const r = await runCli(['--sysroot', empty, 'log', HFI2]);
    expect(r.stdout).toMatch(/line 4 \[9100\.000400\]: hfi2_0 sdma9: timed out .* waiting for the engine to clean up/);
    expect(r.stdout).toMatch(/^hfi2_0\s+hfi2\s+0000:41:00\.0\s+-\s+-\s+9:6$/m);
  });

  it('without --chip the chip is the unit’s when a backend finds one, and the note says so', async () => {
    const fake = new FakeBackend(() => ({}), 8, 2048, {
      engineIds: [8, 9, 10, 11, 12, 13, 14, 15],
      flavour: { module: 'hfi2', chip: 'jkr', driver: 'hfi2', ports: 2 },
    });
    const r = await runCli(['log', CORNELIS], {}, false, '', fake);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^descriptor qwords decoded as jkr \(from hfi2_0; --chip to choose\)$/m);
    expect(r.stdout).not.toMatch(/differ/);
  });
});

describe('tracefs state-change events (trace text, both wordings)', () => {
  const TRACE = fixture('trace-states.txt');

  it('reads hfi2_sdma_state with its engine and hfi1_sdma_state without one, timestamps as printed', () => {
    const log = parseKernelLog(readFileSync(TRACE, 'utf8'));
    const states = log.events.filter((e) => e.kind === 'state-change');
    expect(states.map((e) => [e.kind, e.unit, e.engine, e.fromState, e.state, e.ts])).toEqual([
      ['state-change', 'hfi2 0000:41:00.0', 9, 's99_Running', 's50_HwHaltWait', '8812.120001'],
      ['state-change', 'hfi2 0000:41:00.0', 9, 's50_HwHaltWait', 's60_IdleHalt', '8812.130210'],
      ['state-change', 'hfi1 0000:05:00.0', undefined, 's99_Running', 's50_HwHaltWait', '301.000100'],
      ['state-change', 'hfi1 0000:05:00.0', undefined, 's50_HwHaltWait', 's60_IdleHalt', '301.010100'],
    ]);
  });

  it('files an event under the unit the kernel log names at that PCI address, streamed or whole', async () => {
    const text = `${readFileSync(HFI2, 'utf8')}${readFileSync(TRACE, 'utf8')}`;
    const whole = parseKernelLog(text, { chip: 'jkr' });
    // Chunks cut inside a trace line.
    const streamed = await readKernelLog(
      (async function* () {
        yield text.slice(0, text.length - 100);
        yield text.slice(text.length - 100);
      })(),
      { chip: 'jkr' },
    );
    for (const log of [whole, streamed]) {
      const states = log.events.filter((e) => e.kind === 'state-change');
      expect(states.map((e) => e.unit)).toEqual(['hfi2_0', 'hfi2_0', 'hfi1 0000:05:00.0', 'hfi1 0000:05:00.0']);
    }
  });

  it('reads the descriptor events (d0/d1 decoded as the chip chosen) and hfi2_sdma_pad', () => {
    const log = parseKernelLog(readFileSync(TRACE, 'utf8'), { chip: 'jkr' });
    const written = log.events.filter((e) => e.kind === 'trace-descriptor');
    expect(written.map((e) => [e.unit, e.engine, e.slot, e.flags, e.len, e.ts])).toEqual([
      ['hfi2 0000:41:00.0', 9, 40, '--F-', 64, '8812.130870'],
      ['hfi2 0000:41:00.0', 9, 41, 'I--L', 4096, '8812.130871'],
      ['hfi1 0000:05:00.0', 3, 100, '--F-', 64, '301.000050'],
      ['hfi1 0000:05:00.0', 3, 101, 'I--L', 4096, '301.000051'],
    ]);
    // The JKR layout: FIRST, LAST and the length in qw1, a 58-bit address.
    expect(written[0]?.decoded).toMatchObject({ first: true, last: false, len: 64, addr: 0x0123456789abc000n, ahgIdx: 3 });
    expect(written[1]?.decoded).toMatchObject({ first: false, last: true, intReq: true, len: 4096, addr: 0x0200000000001000n });
    expect(written[0]).toMatchObject({ ahgMode: 1, ahgIdx: 3, ahgLen: 2, qw1: '0x0000000080402328' });
    const pad = log.events.filter((e) => e.kind === 'pad');
    expect(pad).toEqual([
      expect.objectContaining({ unit: 'hfi2', engine: 9, packets: 1, packetDescriptors: 4, padDescriptors: 28, padSdmaDesc: 32 }),
    ]);
  });

  it('log prints written descriptors, flags a chip that does not fit, and the pad', async () => {
    const jkr = await runCli(['--sysroot', empty, 'log', '--chip', 'jkr', TRACE]);
    expect(jkr.code, jkr.stderr).toBe(0);
    expect(jkr.stdout).toMatch(
      /^line \d+ \[8812\.130870\]: hfi2 0000:41:00\.0 sdma9: written desc\[40\] --F- addr 0x0123456789abc000 gen 2 len 64 {2}ahg idx 3 mode 1 len 2 {2}qw0 0x0123456789abc000 qw1 0x0000000080402328$/m,
    );
    expect(jkr.stdout).toMatch(
      /^line \d+ \[8812\.130877\]: hfi2 sdma9: 28 pad descriptors after 1 packet of 4 descriptors \(pad_sdma_desc 32; hfi2_sdma_pad trace event\)$/m,
    );
    // The hfi2 lines are JKR's layout: read as WFR their flags differ from the printed ones, and log says so.
    const wfr = await runCli(['--sysroot', empty, 'log', '--chip', 'wfr', TRACE]);
    expect(wfr.stdout).toMatch(/sdma9: written desc\[40\] .*differ: is --chip right\?/);
    expect(wfr.stdout).not.toMatch(/sdma3: written desc\[100\] .*differ/);
  });

  it('labels the lines of the Cornelis hfi1 by the build that printed them, never as hfi2', () => {
    const text = [
      '[  10.000001] hfi1 0000:05:00.0: hfi1_0: SDMA engine 3 - timeout waiting for engine to clean',
      '     mpi_rank_0-2041   [003] ....  12.000001: hfi1_sdma_pad: SDE (3) pkts 8 pad_sdma_desc 32 packet descriptors 24 padding descriptors 8',
    ].join('\n');
    const log = parseKernelLog(text);
    expect(log.events.find((e) => e.kind === 'pad')).toMatchObject({ unit: 'hfi1_0', engine: 3, packets: 8, padDescriptors: 8 });
    const out = renderLog(log, (_c, s) => s);
    expect(out).toMatch(/hfi1_0 sdma3: timed out \(100 polls of 10 us\) .*\(the Cornelis hfi1 hw clean-up\)/);
    expect(out).toMatch(
      /hfi1_0 sdma3: 8 pad descriptors after 8 packets of 24 descriptors \(pad_sdma_desc 32; hfi1_sdma_pad trace event\)/,
    );
    expect(out).not.toMatch(/hfi2/);
  });

  it('log prints the transitions', async () => {
    const r = await runCli(['--sysroot', empty, 'log', TRACE]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/hfi2 0000:41:00.0 sdma9: state s99_Running -> s50_HwHaltWait \(trace event\)/);
    expect(r.stdout).toMatch(
      /hfi1 0000:05:00.0: state s99_Running -> s50_HwHaltWait \(trace event; hfi1_sdma_state names no engine\)/,
    );
  });
});
