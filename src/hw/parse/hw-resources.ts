// hfi2's device attribute hw_resources (hfi2 sysfs.c): `pfunit %u`, `si_idx %u`, `numvfs %u`, then ranges such as
// `sctxt  %u-%u`, `rctxt  %u-%u` and `sde    %u-%u` (the engine window), then pio and per-port `p%d.*` lines.
// Only the `sde` line is used; other lines are kept as text and not checked.
import { ParseError } from '../../errors.js';
import { TXE_NUM_SDMA_ENGINES } from '../../progress/constants.js';

/** The engine window of hw_resources: absolute engine indexes, ascending, and the line it came from. */
export interface SdeWindow {
  engines: number[];
  line: number;
  /** How the upper bound was read. */
  bound: 'inclusive' | 'exclusive';
}

/**
 * The `sde a-b` window of hw_resources, or null when the file has no `sde` line. Whether the kernel prints the
 * last engine or one past it is not settled (first_sdma_engine / last_sdma_engine of struct hfi2_devrsrcs): the
 * reader takes b as the last engine (inclusive), except b = 16, which cannot be an engine, as one past it.
 * Callers prefer the sdma<E> directories when there are any.
 */
export function parseSdeWindow(text: string, file = 'hw_resources'): SdeWindow | null {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    if (!/^sde\b/.test(raw)) continue;
    const at = { file, line: i + 1, column: 1, text: raw };
    const m = /^sde[ \t]+(0|[1-9][0-9]{0,2})-(0|[1-9][0-9]{0,2})[ \t]*$/.exec(raw);
    if (!m) throw new ParseError(at, "expected the engine window as 'sde <first>-<last>' (e.g. 'sde    8-15')");
    const a = Number(m[1]);
    const b = Number(m[2]);
    const bound = b === TXE_NUM_SDMA_ENGINES ? 'exclusive' : 'inclusive';
    const last = bound === 'exclusive' ? b - 1 : b;
    if (a > last || last >= TXE_NUM_SDMA_ENGINES) {
      throw new ParseError(
        at,
        `the engine window ${a}-${b} is not inside the chip's ${TXE_NUM_SDMA_ENGINES} engines (0 to ${TXE_NUM_SDMA_ENGINES - 1})`,
      );
    }
    return { engines: Array.from({ length: last - a + 1 }, (_, k) => a + k), line: i + 1, bound };
  }
  return null;
}

/**
 * The `bulksvc.sde a-b` line of the Cornelis hfi1's hw_resources (hw_resources_show, sysfs.c: the this_idx of the bulk
 * service's first and last engine, so inclusive), or null when the bulk service owns no engine (no such line).
 */
export function parseBulkServiceEngines(text: string, file = 'hw_resources'): { engines: number[]; line: number } | null {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    if (!raw.startsWith('bulksvc.sde')) continue;
    const at = { file, line: i + 1, column: 1, text: raw };
    const m = /^bulksvc\.sde[ \t]+(0|[1-9][0-9]?)-(0|[1-9][0-9]?)[ \t]*$/.exec(raw);
    if (!m)
      throw new ParseError(at, "expected the bulk service's engines as 'bulksvc.sde <first>-<last>' (e.g. 'bulksvc.sde 12-15')");
    const a = Number(m[1]);
    const b = Number(m[2]);
    if (a > b || b >= TXE_NUM_SDMA_ENGINES) {
      throw new ParseError(at, `the bulk service's engines ${a}-${b} are not inside the chip's ${TXE_NUM_SDMA_ENGINES} engines`);
    }
    return { engines: Array.from({ length: b - a + 1 }, (_, k) => a + k), line: i + 1 };
  }
  return null;
}
