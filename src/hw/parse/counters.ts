// debugfs counter_names + counters (the debugfs counters, debugfs.c) and the per-engine SDMA counters they hold.
import type { EngineCounters } from '../../backend.js';
import { ParseError } from '../../errors.js';
import {
  COUNTER_DESC_FETCHED,
  COUNTER_ERR,
  COUNTER_IDLE_INT,
  COUNTER_PROGRESS_INT,
  COUNTER_SDMA_INT,
} from '../../progress/constants.js';

/** One counter name of counter_names: the bare name and whether it carried the `,32` suffix. */
export interface CounterName {
  name: string;
  bits: 32 | 64;
}

const NAME = /^[A-Za-z0-9_/.:+-][A-Za-z0-9_/.:+ -]*$/;

/** Parse counter_names (the debugfs counters, debugfs.c): names separated by `\n`, 32-bit ones suffixed `,32`. */
export function parseCounterNames(text: string, file = 'counter_names'): CounterName[] {
  const out: CounterName[] = [];
  const seen = new Map<string, number>();
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const comma = raw.indexOf(',');
    const name = comma === -1 ? raw : raw.slice(0, comma);
    const suffix = comma === -1 ? '' : raw.slice(comma);
    if (suffix !== '' && suffix !== ',32') {
      throw new ParseError({ file, line: i + 1, column: comma + 1, text: raw }, "the only suffix a counter name takes is ',32'");
    }
    if (!NAME.test(name)) {
      throw new ParseError(
        { file, line: i + 1, column: 1, text: raw },
        'expected a counter name (letters, digits, _ and a few marks)',
      );
    }
    const first = seen.get(name);
    if (first !== undefined) {
      throw new ParseError(
        { file, line: i + 1, column: 1, text: raw },
        `a second counter named '${name}' (the first is on line ${first}): the values could not be told apart`,
      );
    }
    seen.set(name, i + 1);
    out.push({ name, bits: suffix === '' ? 64 : 32 });
  }
  return out;
}

/** The counters file (the debugfs counters, debugfs.c): native-endian u64 values, one per name. A length mismatch is an error. */
export function parseCounterValues(bytes: Uint8Array, count: number, file = 'counters'): BigUint64Array {
  if (bytes.byteLength !== count * 8) {
    throw new ParseError(
      { file, line: 1, column: 1, text: `${bytes.byteLength} bytes` },
      `expected ${count} native-endian u64 values (${count * 8} bytes, one per counter_names entry), got ${bytes.byteLength} bytes; the two files may come from different driver loads: read them again`,
    );
  }
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new BigUint64Array(copy.buffer, 0, count);
}

/** Counter values by bare name (the `,32` suffix removed). */
export function countersByName(names: readonly CounterName[], values: BigUint64Array): Map<string, bigint> {
  const m = new Map<string, bigint>();
  names.forEach((n, i) => {
    m.set(n.name, values[i] ?? 0n);
  });
  return m;
}

/** The five per-engine counters of engine N (the debugfs counters, debugfs.c), or null when any of them is missing. */
export function engineCounters(byName: ReadonlyMap<string, bigint>, engine: number): EngineCounters | null {
  const get = (base: string) => byName.get(`${base}${engine}`);
  const descFetched = get(COUNTER_DESC_FETCHED);
  const sdmaInt = get(COUNTER_SDMA_INT);
  const idleInt = get(COUNTER_IDLE_INT);
  const progressInt = get(COUNTER_PROGRESS_INT);
  const errCount = get(COUNTER_ERR);
  if (descFetched === undefined || sdmaInt === undefined || idleInt === undefined || progressInt === undefined) return null;
  if (errCount === undefined) return null;
  return { descFetched, sdmaInt, idleInt, progressInt, errCount };
}

/** A hw_counters file (the hfi1 sysfs attributes, sysfs.c): one unsigned decimal and a newline. */
export function parseHwCounterValue(text: string, file: string): bigint {
  const m = /^(0|[1-9][0-9]{0,19})\n?$/.exec(text);
  const v = m ? BigInt(m[1] as string) : -1n;
  if (v < 0n || v > 0xffff_ffff_ffff_ffffn) {
    const line = text.split('\n')[0] ?? '';
    throw new ParseError({ file, line: 1, column: 1, text: line }, 'expected one unsigned decimal counter value');
  }
  return v;
}

/** The bare counter name of a hw_counters file name (a `,32` suffix, if the kernel keeps it, removed). */
export function hwCounterName(fileName: string): string {
  return fileName.endsWith(',32') ? fileName.slice(0, -3) : fileName;
}
