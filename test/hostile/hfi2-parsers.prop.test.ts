// The hfi2 and Cornelis parsers on random and mutated text: hw_resources, sdma_cpu_list (with pidx), vl as a comma
// list, /proc stack and syscall, fd link targets, tracefs SDMA events. Only our ParseError may escape a parser (the
// pure ones that return null never throw), every engine they return is one the chip has, and a failure names the
// file with a line and column inside the text. A fixed-seed share in npm test; thousands under soak.

import { describe, expect } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { parseSdeWindow } from '../../src/hw/parse/hw-resources.js';
import {
  deviceFdUnit,
  hfi2HandleUnits,
  parseProcStack,
  parseProcSyscall,
  psmVerdict,
  uverbsIndex,
} from '../../src/hw/parse/proc-psm.js';
import { cpuListOfEngine, parseSdmaCpuList } from '../../src/hw/parse/sdma-cpu-list.js';
import { parseVl, parseVlPorts } from '../../src/hw/parse/sysfs.js';
import { parseTxTraceLine } from '../../src/kmsg/trace-tx.js';
import { fixture } from '../hw/fixtures.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';

/** Run a parser; anything but a ParseError naming `file` at a line of the text fails the test. */
function onlyParseError(file: string, text: string, parse: () => unknown): void {
  try {
    parse();
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    expect(e.file).toBe(file);
    expect(e.line).toBeGreaterThanOrEqual(1);
    expect(e.line).toBeLessThanOrEqual(text.split('\n').length);
    expect(e.column).toBeGreaterThanOrEqual(1);
    expect(e.message.startsWith(`${file}:${e.line}:${e.column}: `)).toBe(true);
  }
}

/** Byte-level edits of a fixture: characters set or inserted, from a set that includes NUL, CR, ESC and digits. */
function mutate(text: string) {
  const ch = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0, 13, 27, 44, 45, 48, 57, 10, 32));
  return fc
    .array(fc.tuple(fc.nat(), ch, fc.constantFrom('set', 'insert', 'cut')), { minLength: 1, maxLength: 4 })
    .map((edits) => {
      let s = text;
      for (const [at, c, how] of edits) {
        const i = s.length === 0 ? 0 : at % s.length;
        const x = String.fromCharCode(c);
        s = how === 'cut' ? s.slice(0, i) : `${s.slice(0, i)}${x}${s.slice(how === 'set' ? i + 1 : i)}`;
      }
      return s;
    });
}

const text = (fx: string) => fc.oneof(mutate(fx), fc.string({ maxLength: 200 }), fc.constant(fx.replaceAll('\n', '\r\n')));

describe('hfi2 sysfs and debugfs parsers fail only with ParseError', () => {
  test.prop([text(fixture('hfi2/hw_resources'))], fcParams(200, 5000))('hw_resources', (s) => {
    onlyParseError('hw_resources', s, () => {
      const w = parseSdeWindow(s, 'hw_resources');
      for (const e of w?.engines ?? []) expect(e).toBeLessThan(16);
    });
  });

  test.prop(
    [fc.oneof(text(fixture('hfi2/sdma_cpu_list')), text(fixture('cornelis/sdma_cpu_list-hfi1'))), fc.nat({ max: 20 })],
    fcParams(200, 5000),
  )('sdma_cpu_list with and without pidx', (s, engine) => {
    onlyParseError('sdma_cpu_list', s, () => {
      const entries = parseSdmaCpuList(s, 'sdma_cpu_list');
      for (const e of entries) expect(e.vl).toBeLessThan(8);
      expect(typeof cpuListOfEngine(entries, engine)).toBe('string');
    });
  });

  test.prop([fc.oneof(text('0,0'), text('-1,3'), text('0\n'), fc.string({ maxLength: 40 }))], fcParams(200, 5000))(
    'vl, one per port, with or without a newline',
    (s) => {
      onlyParseError('vl', s, () => {
        expect(parseVlPorts(s, 'vl').length).toBeLessThanOrEqual(8);
      });
      onlyParseError('vl', s, () => parseVl(s, 'vl'));
    },
  );
});

describe('/proc parsers fail only with ParseError; fd targets never throw', () => {
  const stack = fixture('proc/psm/stack-blocked').replaceAll('hfi1_', 'hfi2_').replaceAll('[hfi1]', '[hfi2]');
  test.prop(
    [text(stack), text(fixture('proc/psm/syscall-writev')), fc.oneof(fc.string(), fc.constant('mpi\x1b[2J\n'))],
    fcParams(200, 5000),
  )('stack, syscall and the verdict', (st, sc, comm) => {
    onlyParseError('stack', st, () => parseProcStack(st, 'stack'));
    onlyParseError('syscall', sc, () => parseProcSyscall(sc, 'syscall'));
    try {
      const v = psmVerdict({
        pid: 1,
        comm,
        fds: [{ fd: 11, target: 'anon_inode:hfi2-sdma' }],
        stack: st,
        syscall: sc,
        wchan: null,
        module: 'hfi2',
        unit: 0,
        dir: '/proc/1',
      });
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
      expect(v.command ?? '').not.toMatch(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/);
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
    }
  });

  const target = fc.oneof(
    fc.string({ maxLength: 80 }),
    mutate('/dev/infiniband/uverbs3 (deleted)'),
    mutate('anon_inode:[hfi2-sdma]'),
    mutate('/dev/hfi1_12'),
  );
  test.prop(
    [fc.array(target, { maxLength: 6 }), fc.array(fc.option(fc.string({ maxLength: 20 })), { maxLength: 4 })],
    fcParams(200, 5000),
  )('fd link targets and ibdev names', (targets, ibdevs) => {
    for (const t of targets) {
      const n = uverbsIndex(t);
      if (n !== null) expect(n).toBeLessThan(1000);
      const u = deviceFdUnit(t, 'hfi1');
      if (typeof u === 'number') expect(u).toBeLessThan(1000);
      deviceFdUnit(t, 'hfi2');
    }
    const units = hfi2HandleUnits(targets, (n) => ibdevs[n % Math.max(1, ibdevs.length)] ?? null);
    if (units !== 'any') for (const u of units) expect(u).toMatch(/^hfi2_(0|[1-9][0-9]{0,2})$/);
  });
});

describe('tracefs SDMA events never throw', () => {
  const lines = fixture('kmsg/trace-states.txt')
    .split('\n')
    .filter((l) => l.includes('_sdma_'));
  test.prop([fc.oneof(...lines.map((l) => mutate(l)), fc.string({ maxLength: 300 }))], fcParams(300, 10000))(
    '*_sdma_state, *_sdma_descriptor, hfi2_sdma_pad',
    (line) => {
      const ev = parseTxTraceLine(line);
      if (ev && ev.kind !== 'state') expect(Number.isSafeInteger(ev.engine)).toBe(true);
    },
  );
});
