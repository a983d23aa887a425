import { describe, expect } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { parseCounterNames, parseCounterValues, parseHwCounterValue } from '../../src/hw/parse/counters.js';
import { parseInterrupts } from '../../src/hw/parse/interrupts.js';
import { parseSdes, recordDescriptors, type SdesHeader } from '../../src/hw/parse/sdes.js';
import { parseCapMask, parseCpuList, parseUintParam, parseVl } from '../../src/hw/parse/sysfs.js';
import { STATE_NAMES } from '../../src/progress/state.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';
import { fixture, fixtureBytes } from './fixtures.js';
import { descriptorLines, type GenDescriptor, headerLine, isNewLine, printedAddr, type Variant } from './render-sdes.js';

/** Run `f`; anything thrown other than a ParseError fails the property. */
function onlyParseError(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    expect(e.line).toBeGreaterThanOrEqual(1);
    expect(e.column).toBeGreaterThanOrEqual(1);
  }
}

const u64 = fc.bigInt({ min: 0n, max: 0xffff_ffff_ffff_ffffn });
const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
const u16 = fc.integer({ min: 0, max: 0xffff });

const descriptor: fc.Arbitrary<GenDescriptor> = fc.record({
  flags: fc
    .tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean())
    .map(([i, h, f, l]) => (i ? 'I' : '-') + (h ? 'H' : '-') + (f ? 'F' : '-') + (l ? 'L' : '-')),
  addr: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
  gen: fc.integer({ min: 0, max: 3 }),
  len: fc.integer({ min: 0, max: 16383 }),
  ahgIdx: fc.integer({ min: 0, max: 31 }),
  ahgMode: fc.integer({ min: 0, max: 7 }),
  qw0: u64,
  qw1: u64,
  newLine: fc.boolean(),
  newAhg: fc.boolean(),
  wide: fc.integer({ min: 0, max: 31 }),
});

const descqCnt = fc.constantFrom(64, 128, 2048);

/** A whole dump: engines with random headers and rings, rendered in one variant. */
const dump = fc
  .record({
    descqCnt,
    variant: fc.constantFrom<Variant>('upstream', 'staging', 'cornelis', 'mixed'),
    /** The first engine of the window (an hfi2 SR-IOV function's need not be 0). */
    first: fc.integer({ min: 0, max: 12 }),
    engines: fc.array(
      fc.record({
        head: u32,
        count: fc.integer({ min: 0, max: 70 }),
        header: fc.record({
          cpu: fc.integer({ min: -1, max: 1023 }),
          state: fc.constantFrom(...STATE_NAMES),
          ctrl: u64,
          status: u64,
          errStatus: u64,
          hwTail: u64,
          hwHead: u64,
          headDma: u64,
          memory: u64,
          lenGen: u64,
          reloadCnt: u64,
          lastStatus: u64,
          ahgBits: u64,
          txTail: u16,
          txHead: u16,
          flushListNonEmpty: fc.boolean(),
          descqFullCount: u32,
          checkSlid: u64,
        }),
        ring: fc.array(descriptor, { maxLength: 70 }),
      }),
      { maxLength: 4 },
    ),
  })
  .map(({ descqCnt, variant, first, engines }) => {
    const mask = descqCnt - 1;
    let text = '';
    const headers: SdesHeader[] = [];
    const rings: GenDescriptor[][] = [];
    engines.forEach((e, k) => {
      const engine = first + k;
      const ring = e.ring.slice(0, Math.min(e.count, mask));
      const descqHead = e.head;
      const descqTail = (e.head + ring.length) >>> 0;
      const h: SdesHeader = {
        ...e.header,
        engine,
        cpu: variant === 'staging' ? null : e.header.cpu,
        swHead: descqHead & mask,
        swTail: descqTail & mask,
        descqHead,
        descqTail,
      };
      headers.push(h);
      rings.push(ring);
      text += headerLine(h, variant);
      ring.forEach((d, k) => {
        text += descriptorLines((descqHead + k) & mask, d, variant);
      });
    });
    return { descqCnt, variant, first, text, headers, rings };
  });

describe('sdes properties (sdma_seqfile_dump_sde, sdma.c)', () => {
  test.prop([dump], fcParams(150, 3000))('a rendered dump parses back to the same values, every variant', (d) => {
    const r = parseSdes(d.text, { descqCnt: d.descqCnt });
    expect(r.torn).toBeNull();
    expect(r.records.map((x) => x.header)).toEqual(d.headers);
    r.records.forEach((rec, i) => {
      const ring = recordDescriptors(r, rec);
      const want = d.rings[i] ?? [];
      expect(ring.map((x) => [x.flags, x.addr, x.gen, x.len])).toEqual(
        want.map((w) => [w.flags, printedAddr(w, d.variant), w.gen, w.len]),
      );
      ring.forEach((x, k) => {
        const w = want[k] as GenDescriptor;
        if (w.flags[2] === 'F') expect([x.ahgIdx, x.ahgMode]).toEqual([w.ahgIdx, w.ahgMode]);
        if (isNewLine(w, d.variant)) expect([x.qw0, x.qw1]).toEqual([w.qw0, w.qw1]);
        else expect(x.qw0).toBeUndefined();
      });
    });
  });

  test.prop([dump], fcParams(150, 3000))(
    'the headers-only path counts every line variant and notes the same first newer line',
    (d) => {
      const full = parseSdes(d.text, { descqCnt: d.descqCnt });
      const fast = parseSdes(d.text, { descqCnt: d.descqCnt, headersOnly: true });
      expect(fast.records.map((x) => [x.header, x.count])).toEqual(full.records.map((x) => [x.header, x.count]));
      expect(fast.newLine).toEqual(full.newLine);
      const anyNew = d.rings.some((ring) => ring.some((w) => isNewLine(w, d.variant)));
      expect(full.newLine !== null).toBe(
        anyNew || (d.variant === 'mixed' && d.rings.some((r) => r.some((w) => w.flags[2] === 'F' && w.newAhg))),
      );
    },
  );

  test.prop([dump, fc.nat()], fcParams(150, 3000))(
    'a cut anywhere keeps only whole records, and reports the cut one',
    (d, at) => {
      const cut = d.text.length === 0 ? 0 : at % d.text.length;
      const r = parseSdes(d.text.slice(0, cut), { descqCnt: d.descqCnt });
      r.records.forEach((rec, i) => {
        expect(rec.header).toEqual(d.headers[i]);
      });
      if (r.torn) expect(r.torn.engine === null || r.torn.engine === d.first + r.records.length).toBe(true);
    },
  );

  test.prop(
    [
      dump,
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'delete')), {
        minLength: 1,
        maxLength: 4,
      }),
    ],
    fcParams(200, 4000),
  )('mutated dumps fail only with ParseError', (d, edits) => {
    const b = [...Buffer.from(d.text, 'latin1')];
    for (const [at, byte, op] of edits) {
      const i = b.length === 0 ? 0 : at % b.length;
      if (op === 'set') b[i] = byte;
      else if (op === 'insert') b.splice(i, 0, byte);
      else b.splice(i, 1);
    }
    onlyParseError(() => parseSdes(Uint8Array.from(b), { descqCnt: d.descqCnt }));
  });

  test.prop([fc.string({ maxLength: 300 }), descqCnt], fcParams(100, 2000))('random text fails only with ParseError', (s, n) => {
    onlyParseError(() => parseSdes(s, { descqCnt: n }));
    onlyParseError(() => parseSdes(`SDE 0 CPU 0 STE ${s}`, { descqCnt: n }));
  });
});

/** Byte-level mutations of a fixture. */
function mutate(text: string) {
  return fc
    .array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 127 }), fc.boolean()), { minLength: 1, maxLength: 3 })
    .map((edits) => {
      const chars = [...text];
      for (const [at, c, insert] of edits) {
        const i = chars.length === 0 ? 0 : at % chars.length;
        if (insert) chars.splice(i, 0, String.fromCharCode(c));
        else chars[i] = String.fromCharCode(c);
      }
      return chars.join('');
    });
}

describe('the other parsers fail only with ParseError', () => {
  const names = fixture('counters/counter_names');
  const interrupts = fixture('proc/interrupts');

  test.prop([fc.oneof(mutate(names), fc.string({ maxLength: 200 }))], fcParams(100, 2000))('counter_names', (s) => {
    onlyParseError(() => parseCounterNames(s));
  });

  test.prop([fc.uint8Array({ maxLength: 800 }), fc.nat({ max: 100 })], fcParams(100, 2000))(
    'counters (any length, any count)',
    (b, n) => {
      onlyParseError(() => parseCounterValues(b, n));
    },
  );

  test.prop([fc.integer({ min: 0, max: 688 })], fcParams(50, 500))('counters cut short', (len) => {
    const bytes = fixtureBytes('counters/counters');
    onlyParseError(() => parseCounterValues(bytes.subarray(0, len), 86));
  });

  test.prop([fc.oneof(mutate(interrupts), fc.string({ maxLength: 300 }))], fcParams(100, 2000))('/proc/interrupts', (s) => {
    onlyParseError(() => parseInterrupts(s));
  });

  test.prop(
    [fc.oneof(fc.string({ maxLength: 40 }), mutate('0-3,8\n'), mutate('empty\n'), mutate('2048\n'), mutate('0x4a2c6b\n'))],
    fcParams(100, 2000),
  )('vl, cpu_list, module parameters, cap_mask, hw_counters', (s) => {
    onlyParseError(() => parseVl(s));
    onlyParseError(() => parseCpuList(s));
    onlyParseError(() => parseUintParam(s, 'p'));
    onlyParseError(() => parseCapMask(s));
    onlyParseError(() => parseHwCounterValue(s, 'f'));
  });
});
