// Small sysfs files: sdma<N>/vl and cpu_list (sdma<N>/vl and cpu_list, sysfs.c) and the module parameters (the hfi1 module parameters).
import { ParseError } from '../../errors.js';
import { VL_UNMAPPED } from '../../progress/constants.js';

function oneLine(text: string, file: string, what: string): string {
  if (!text.endsWith('\n') || text.indexOf('\n') !== text.length - 1) {
    throw new ParseError({ file, line: 1, column: 1, text: text.split('\n')[0] ?? '' }, `expected ${what} on one line`);
  }
  return text.slice(0, -1);
}

/**
 * sdma<E>/vl, one VL per port: upstream hfi1 prints `%d\n` (vl_show, sysfs.c); the Cornelis hfi1 and hfi2 print one
 * value per port joined by commas with no newline (`0,0` on two ports; their vl_show loops over the ports). Both are
 * accepted, each with or without the newline. A port whose VL map does not use the engine shows 255 (VL_UNMAPPED:
 * the −1 of engine_to_vl[] returned through a u8); -1 is accepted as well.
 */
export function parseVlPorts(text: string, file = 'vl'): number[] {
  const s = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (s.includes('\n')) {
    throw new ParseError({ file, line: 1, column: 1, text: text.split('\n')[0] ?? '' }, 'expected the VL on one line');
  }
  const out: number[] = [];
  let col = 1;
  for (const part of s.split(',')) {
    if (!/^-?(0|[1-9][0-9]{0,9})$/.test(part) || out.length >= 8) {
      throw new ParseError(
        { file, line: 1, column: col, text: s },
        'expected the VL as a decimal (%d), or one per port joined by commas (0,0)',
      );
    }
    out.push(Number(part));
    col += part.length + 1;
  }
  return out;
}

/** The VL an engine serves (sdma<E>/vl): the first port's that maps it; null when no port maps it (255 or -1). */
export function parseVl(text: string, file = 'vl'): number | null {
  return parseVlPorts(text, file).find((v) => v >= 0 && v !== VL_UNMAPPED) ?? null;
}

/** A parsed cpu_list: the text as printed and the CPUs it names. */
export interface CpuList {
  text: string;
  cpus: number[];
}

const MAX_CPU = 1 << 16;

/** sdma<N>/cpu_list (sdma<N>/vl and cpu_list, sysfs.c): `empty\n`, or a list of CPUs and ranges such as `0-3,8\n`. */
export function parseCpuList(text: string, file = 'cpu_list'): CpuList {
  const s = oneLine(text, file, "'empty' or a CPU list");
  if (s === 'empty') return { text: s, cpus: [] };
  const cpus: number[] = [];
  let col = 1;
  for (const part of s.split(',')) {
    const m = /^(0|[1-9][0-9]{0,5})(?:-(0|[1-9][0-9]{0,5}))?$/.exec(part);
    const lo = m ? Number(m[1]) : -1;
    const hi = m?.[2] === undefined ? lo : Number(m[2]);
    if (!m || hi < lo || hi >= MAX_CPU) {
      throw new ParseError({ file, line: 1, column: col, text: s }, "expected 'empty' or CPU numbers and ranges such as 0-3,8");
    }
    for (let c = lo; c <= hi; c++) cpus.push(c);
    col += part.length + 1;
  }
  return { text: s, cpus };
}

/** A decimal module parameter (the hfi1 module parameters), e.g. sdma_descq_cnt: `%u\n`. */
export function parseUintParam(text: string, file: string): number {
  const s = oneLine(text, file, 'an unsigned decimal');
  if (!/^(0|[1-9][0-9]{0,9})$/.test(s) || Number(s) > 0xffff_ffff) {
    throw new ParseError({ file, line: 1, column: 1, text: s }, 'expected an unsigned decimal module parameter');
  }
  return Number(s);
}

/** cap_mask (the hfi1 module parameters): `0x%lx\n`. */
export function parseCapMask(text: string, file = 'cap_mask'): bigint {
  const s = oneLine(text, file, 'a hex mask');
  if (!/^0x[0-9a-f]{1,16}$/i.test(s)) {
    throw new ParseError({ file, line: 1, column: 1, text: s }, 'expected cap_mask as 0x and hex digits');
  }
  return BigInt(s);
}
