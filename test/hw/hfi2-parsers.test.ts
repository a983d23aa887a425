// The parsers on the hand-written hfi2 and Cornelis fixtures: sdes line variants per line (and the JKR/WFR
// decode of d0/d1), hw_resources, per-port vl, sdma_cpu_list with pidx, JKR counter names, hfi2 vectors, the hfi2
// PSM writer and the hfi2_tx usdma events.
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { countersByName, engineCounters, parseCounterNames, parseCounterValues } from '../../src/hw/parse/counters.js';
import { parseSdeWindow } from '../../src/hw/parse/hw-resources.js';
import { parseInterrupts, vectorKey } from '../../src/hw/parse/interrupts.js';
import { deviceFdUnit, hfi2HandleUnits, psmVerdict } from '../../src/hw/parse/proc-psm.js';
import { parseSdes, recordDescriptors } from '../../src/hw/parse/sdes.js';
import { parseSdmaCpuList } from '../../src/hw/parse/sdma-cpu-list.js';
import { parseVl, parseVlPorts } from '../../src/hw/parse/sysfs.js';
import { usdmaEngines } from '../../src/hw/waiters-trace.js';
import { parseTxTraceLine } from '../../src/kmsg/trace-tx.js';
import { fixture } from './fixtures.js';
import { jkrCounterValues } from './hfi2-tree.js';

const JKR_SDES = fixture('hfi2/sdes-jkr.txt');
const CORNELIS_SDES = fixture('cornelis/sdes-wfr.txt');

function parseError(f: () => unknown): ParseError {
  try {
    f();
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error('no ParseError');
}

describe('sdes of hfi2 on JKR (engines 8-15, d0/d1 and aidx lines)', () => {
  it('keeps absolute engine numbers and notes the first newer line', () => {
    const d = parseSdes(JKR_SDES, { file: 'sdes' });
    expect(d.records.map((r) => r.header.engine)).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
    expect(d.records[0]?.count).toBe(3);
    expect(d.newLine).toEqual({ line: 2, kind: 'descriptor' });
    expect(d.torn).toBeNull();
  });

  it('the headers-only path counts both line variants and still sees the newer form', () => {
    const d = parseSdes(JKR_SDES, { headersOnly: true });
    expect(d.records.map((r) => r.count)).toEqual([3, 0, 0, 0, 0, 0, 0, 0]);
    expect(d.newLine?.kind).toBe('descriptor');
    const up = parseSdes(fixture('sdes/upstream.txt'), { headersOnly: true });
    expect(up.newLine).toBeNull();
  });

  it('decodes from the raw qwords with the JKR codec, preferring them to the printed fields', () => {
    // The printed len says 63 and the flags say nothing; d1 says FIRST and 64 bytes: d1 wins.
    const text = JKR_SDES.replace(
      'flags:--F- addr:0x0200000000123000 gen:1 len:64',
      'flags:---- addr:0x0200000000123000 gen:1 len:63',
    ).replace('\t\taidx:3 amode:1 alen:16\n', '');
    const d = parseSdes(text);
    const rec = d.records[0];
    if (!rec) throw new Error('no record');
    const printed = recordDescriptors(d, rec);
    expect(printed[0]).toMatchObject({ flags: '----', len: 63 });
    const decoded = recordDescriptors(d, rec, 'jkr');
    expect(decoded[0]).toMatchObject({ flags: '--F-', len: 64, addr: 0x0200000000123000n, gen: 1 });
    expect(decoded[2]).toMatchObject({ flags: 'IH-L', len: 1000 });
  });

  it('a garbled line of either variant is a ParseError with file, line and column', () => {
    const shortD1 = JKR_SDES.replace('d1:0x0000000010000004', 'd1:0x000000001000004');
    expect(parseError(() => parseSdes(shortD1, { file: 'F' }))).toMatchObject({ file: 'F', line: 4, column: 88 }); // the first digit of d1;
    const badAidx = JKR_SDES.replace('aidx:3 amode:1', 'aidx:3 amode:x');
    expect(parseError(() => parseSdes(badAidx, { file: 'F' }))).toMatchObject({ line: 3, column: 16 });
    const wideUpstream = fixture('sdes/upstream.txt').replace('addr:0x000000001ff2a000', 'addr:0x000100001ff2a000');
    expect(parseError(() => parseSdes(wideUpstream)).message).toContain('bits above 47');
  });

  it('a record out of the window order is named', () => {
    const skipped = JKR_SDES.replace('SDE 9 CPU', 'SDE 10 CPU');
    expect(parseError(() => parseSdes(skipped)).message).toContain('expected the record of engine 9 here, got SDE 10');
  });
});

describe('sdes of the Cornelis hfi1 on WFR', () => {
  it('reads the new lines per line and decodes d0/d1 with the WFR layout', () => {
    const d = parseSdes(CORNELIS_SDES);
    expect(d.newLine).toEqual({ line: 2, kind: 'descriptor' });
    const rec = d.records[0];
    if (!rec) throw new Error('no record');
    expect(recordDescriptors(d, rec, 'wfr')).toMatchObject([
      { slot: 256, flags: '--F-', addr: 0x1ff2a000n, gen: 2, len: 64, ahgIdx: 0, ahgMode: 0 },
      { slot: 257, flags: '-H-L', addr: 0x1ff2b000n, gen: 2, len: 2048 },
    ]);
  });

  it('a file mixing both variants line by line is read (no variant is taken from the driver name)', () => {
    const mixed = CORNELIS_SDES.replace(
      /\tdesc\[257\].*\n/,
      '\tdesc[257]: flags:-H-L addr:0x000000001ff2b000 gen:2 len:2048 bytes\n',
    );
    const d = parseSdes(mixed);
    expect(d.records[0]?.count).toBe(2);
    expect(d.descriptors.get(1).qw0).toBeUndefined();
    expect(d.descriptors.get(0).qw0).toBe(0x804000001ff2a000n);
  });
});

describe('hw_resources', () => {
  it('sde 8-15 is the window, last engine included', () => {
    expect(parseSdeWindow(fixture('hfi2/hw_resources'))).toEqual({
      engines: [8, 9, 10, 11, 12, 13, 14, 15],
      line: 6,
      bound: 'inclusive',
    });
  });
  it('sde 0-16 is read as exclusive', () => {
    expect(parseSdeWindow(fixture('hfi2/hw_resources-exclusive'))?.engines).toHaveLength(16);
  });
  it('no sde line: null; a malformed one or outside the chip: ParseError on its line', () => {
    expect(parseSdeWindow('pfunit 0\n')).toBeNull();
    expect(parseError(() => parseSdeWindow('pfunit 0\nsde    8\n', 'H'))).toMatchObject({ file: 'H', line: 2 });
    expect(parseError(() => parseSdeWindow('sde    9-20\n')).message).toContain('not inside');
  });
});

describe('sdma<E>/vl per port', () => {
  it('reads 0,0 without a newline, -1 for a port that does not map the engine, and the hfi1 form', () => {
    expect(parseVlPorts(fixture('hfi2/vl-two-ports'))).toEqual([0, 0]);
    expect(parseVl(fixture('hfi2/vl-two-ports'))).toBe(0);
    expect(parseVl(fixture('hfi2/vl-port2-only'))).toBe(2);
    expect(parseVl('-1,-1')).toBeNull();
    // An engine a port does not map reads 255 (engine_to_vl's −1 through a u8), on either line form.
    expect(parseVl('255,255')).toBeNull();
    expect(parseVl('255\n')).toBeNull();
    expect(parseVl('255,3')).toBe(3);
    expect(parseVl('5\n')).toBe(5);
    expect(parseError(() => parseVl('0,x', 'vl'))).toMatchObject({ column: 3 });
  });
});

describe('sdma_cpu_list', () => {
  it('reads the hfi2 lines with pidx and the 8-space continuation', () => {
    expect(parseSdmaCpuList(fixture('hfi2/sdma_cpu_list'))).toEqual([
      { cpu: 2, pidx: 0, vl: 0, engines: [8, 9] },
      { cpu: 2, pidx: 1, vl: 0, engines: [8] },
      { cpu: 10, pidx: 0, vl: 1, engines: [10, 11] },
      { cpu: 10, pidx: 0, vl: 2, engines: [12] },
    ]);
  });
  it('reads the hfi1 line without pidx', () => {
    expect(parseSdmaCpuList(fixture('cornelis/sdma_cpu_list-hfi1'))).toEqual([{ cpu: 5, pidx: null, vl: 0, engines: [0, 1] }]);
  });
  it('a garbled line is a ParseError on its line', () => {
    expect(parseError(() => parseSdmaCpuList('cpu  1:  vl0: [ sdma 1\n', 'L'))).toMatchObject({ file: 'L', line: 1 });
  });
});

describe('JKR counter_names (all 16 engines expanded, 32-bit)', () => {
  it('keys the per-engine counters by the parsed index', () => {
    const names = parseCounterNames(fixture('hfi2/counter_names-jkr'));
    const byName = countersByName(names, parseCounterValues(jkrCounterValues(), names.length));
    expect(engineCounters(byName, 8)).toMatchObject({ sdmaInt: 1008n, descFetched: 5008n });
    expect(engineCounters(byName, 15)).toMatchObject({ sdmaInt: 1015n });
    expect(names.find((c) => c.name === 'SDMAInt8')?.bits).toBe(32);
  });
});

describe('/proc/interrupts with hfi2 vectors', () => {
  it('keys hfi2_0 sdma<E> and hfi1_0 sdma<E> apart, by absolute engine', () => {
    const v = parseInterrupts(fixture('hfi2/interrupts'));
    expect(v.get(vectorKey(0, 8, 'hfi2'))).toBe(808);
    expect(v.get(vectorKey(0, 15, 'hfi2'))).toBe(1515);
    expect(v.get(vectorKey(0, 0, 'hfi1'))).toBe(1500);
    expect(v.get(vectorKey(0, 0, 'hfi2'))).toBeUndefined();
  });
});

describe('an hfi2 PSM writer', () => {
  const stack = '[<0>] hfi2_user_sdma_process_request+0x5d2/0xa40 [hfi2]\n[<0>] do_iter_readv_writev+0x14f/0x1c0\n';
  const writev = '20 0x9 0x7ffd 0x2 0x0 0x0 0x0 0x7ffe 0x7f00\n';
  it('holds anon_inode:hfi2-sdma (v2) or a uverbs fd (v1/M26); neither names the unit', () => {
    expect(deviceFdUnit('anon_inode:hfi2-sdma', 'hfi2')).toBe('any');
    expect(deviceFdUnit('anon_inode:[hfi2-sdma]', 'hfi2')).toBe('any');
    expect(deviceFdUnit('/dev/infiniband/uverbs0', 'hfi2')).toBe('any');
    expect(deviceFdUnit('/dev/hfi1_0', 'hfi2')).toBeNull();
    const devs = ['hfi2_0', 'hfi2_1', 'mlx5_0'];
    const ibdev = (n: number) => devs[n] ?? null;
    const units = (...targets: string[]) => {
      const u = hfi2HandleUnits(targets, ibdev);
      return u === 'any' ? u : [...u].sort();
    };
    expect(units('anon_inode:hfi2-sdma', '/dev/infiniband/uverbs1')).toEqual(['hfi2_1']);
    expect(units('anon_inode:hfi2-sdma', '/dev/infiniband/uverbs0', '/dev/infiniband/uverbs1 (deleted)')).toEqual([
      'hfi2_0',
      'hfi2_1',
    ]);
    expect(units('anon_inode:hfi2-sdma')).toBe('any');
    expect(units('anon_inode:hfi2-sdma', '/dev/infiniband/uverbs2')).toBe('any');
    expect(units('/dev/infiniband/uverbs2')).toEqual([]);
    expect(units('/dev/infiniband/uverbs9', '/dev/infiniband/uverbs0')).toBe('any');
    expect(deviceFdUnit('anon_inode:hfi2-sdma', 'hfi1')).toBeNull();
  });
  it('blocked in hfi2_user_sdma_process_request on its handle is a waiter of the scanned unit', () => {
    const v = psmVerdict({
      pid: 7,
      comm: 'mpi\n',
      fds: [{ fd: 9, target: 'anon_inode:hfi2-sdma' }],
      stack,
      syscall: writev,
      wchan: null,
      module: 'hfi2',
      unit: 1,
    });
    expect(v).toMatchObject({ blocked: true, unit: 1, fd: 9 });
    expect(v.evidence).toContain('stack: hfi2_user_sdma_process_request+0x5d2');
  });
  it('the hfi1 function on an hfi2 handle is not it', () => {
    const v = psmVerdict({
      pid: 7,
      comm: null,
      fds: [{ fd: 9, target: '/dev/infiniband/uverbs1' }],
      stack: stack.replace('hfi2_user', 'hfi1_user'),
      syscall: writev,
      wchan: null,
      module: 'hfi2',
      unit: 0,
    });
    expect(v).toMatchObject({ blocked: false, why: 'the top hfi2 frame is hfi1_user_sdma_process_request' });
  });
});

describe('hfi2_tx user-SDMA events', () => {
  it('ties a writer thread to its absolute engine', () => {
    const line = `  mpi-4242 [003] ..... 1234.500000: hfi2_usdma_defer: [0000:41:00.0] pq ffff0001 sde ffff0002 wait ffff0003 engine 12 empty 1`;
    expect(usdmaEngines(`${line}\n`, '0000:41:00.0')).toEqual(new Map([[4242, 12]]));
  });
});

describe('the sdma_state trace event in both wordings', () => {
  it('reads hfi2_sdma_state with its absolute engine and hfi1_sdma_state without one', () => {
    expect(
      parseTxTraceLine(
        '  kworker/3:1-120 [003] ..... 88.000001: hfi2_sdma_state: [0000:41:00.0] SDE12 state: s99_Running -> s50_HwHaltWait',
      ),
    ).toEqual({
      ts: '88.000001',
      kind: 'state',
      module: 'hfi2',
      device: '0000:41:00.0',
      engine: 12,
      from: 's99_Running',
      to: 's50_HwHaltWait',
    });
    expect(
      parseTxTraceLine(
        '  kworker/3:1-120 [003] ..... 88.000001: hfi1_sdma_state: [0000:05:00.0] current state s99_Running new state s50_HwHaltWait',
      ),
    ).toEqual({
      ts: '88.000001',
      kind: 'state',
      module: 'hfi1',
      device: '0000:05:00.0',
      engine: null,
      from: 's99_Running',
      to: 's50_HwHaltWait',
    });
    expect(parseTxTraceLine('  x-1 [000] ..... 1.0: hfi2_sdma_state: [0000:41:00.0] SDE state: a')).toBeNull();
    expect(parseTxTraceLine('  x-1 [000] ..... 1.0: hfi2_sdma_pad: SDE (3) pkts 1')).toBeNull();
  });
});

describe('the sdma_descriptor and sdma_pad trace events', () => {
  const at = '  kworker/9:1-412 [009] d..1. 8812.130870: ';
  it('reads a FIRST descriptor with its AHG fields, and one without, raw qwords kept', () => {
    expect(
      parseTxTraceLine(
        `${at}hfi2_sdma_descriptor: [0000:41:00.0] SDE(9) flags:--F- amode:1 aidx:3 alen:2 addr:0x0123456789abc000 gen:2 len:64 d0:0123456789abc000 d1:0000000080402328 to 00000000deadbeef,40`,
      ),
    ).toEqual({
      ts: '8812.130870',
      module: 'hfi2',
      kind: 'descriptor',
      device: '0000:41:00.0',
      engine: 9,
      flags: '--F-',
      ahg: { mode: 1, idx: 3, len: 2 },
      addr: 0x0123456789abc000n,
      gen: 2,
      len: 64,
      d0: 0x0123456789abc000n,
      d1: 0x80402328n,
      slot: 40,
    });
    const last = parseTxTraceLine(
      `${at}hfi1_sdma_descriptor: [0000:05:00.0] SDE(3) flags:I--L addr:0x00000000002a0000 gen:2 len:4096 d0:50000000002a0000 d1:000000000000000a to (____ptrval____),101`,
    );
    expect(last).toMatchObject({ module: 'hfi1', engine: 3, flags: 'I--L', ahg: null, slot: 101, d1: 0xan });
  });

  it('reads hfi2_sdma_pad, which names no device', () => {
    expect(
      parseTxTraceLine(`${at}hfi2_sdma_pad: SDE (9) pkts 1 pad_sdma_desc 32 packet descriptors 4 padding descriptors 28`),
    ).toEqual({
      ts: '8812.130870',
      module: 'hfi2',
      kind: 'pad',
      engine: 9,
      packets: 1,
      padSdmaDesc: 32,
      packetDescriptors: 4,
      padDescriptors: 28,
    });
  });

  it('passes over a line cut short or with a field out of its form', () => {
    const full = `${at}hfi2_sdma_descriptor: [0000:41:00.0] SDE(9) flags:I--L addr:0x0200000000001000 gen:2 len:4096 d0:0200000000001000 d1:000000005000000a to 00000000deadbeef,41`;
    for (let cut = full.indexOf('SDE('); cut < full.length; cut += 7) expect(parseTxTraceLine(full.slice(0, cut))).toBeNull();
    expect(parseTxTraceLine(full.replace('flags:I--L', 'flags:L--I'))).toBeNull();
    expect(parseTxTraceLine(full.replace('d1:000000005000000a', 'd1:10000000005000000a'))).toBeNull();
    expect(
      parseTxTraceLine(
        `${at}hfi2_sdma_pad: [0000:41:00.0] SDE (9) pkts 1 pad_sdma_desc 32 packet descriptors 4 padding descriptors 28`,
      ),
    ).toBeNull();
  });
});
