// /proc/interrupts: each SDMA engine has its own MSI-X vector named `hfi1_<unit> sdma<E>` or `hfi2_<unit> sdma<E>`
// (msix.c of either driver), E the absolute engine index.
import { ParseError } from '../../errors.js';

/** The count of one engine's vector, summed over CPUs, keyed `${module}_${unit}/${engine}` (vectorKey). */
export type SdmaVectorCounts = Map<string, number>;

/** The key of an engine in SdmaVectorCounts: the unit's name and the engine's absolute index. */
export function vectorKey(unit: number, engine: number, module: 'hfi1' | 'hfi2' = 'hfi1'): string {
  return `${module}_${unit}/${engine}`;
}

const VECTOR_NAME = /\b(hfi[12])_([0-9]{1,3}) sdma([0-9]{1,2})$/;

/**
 * Parse /proc/interrupts: a header of CPU columns, then one line per IRQ. Only the hfi1/hfi2 SDMA
 * vector lines are checked strictly (one decimal count per CPU); other lines are skipped.
 */
export function parseInterrupts(text: string, file = '/proc/interrupts'): SdmaVectorCounts {
  const lines = text.split('\n');
  const header = lines[0] ?? '';
  const cpus = header.trim() === '' ? [] : header.trim().split(/\s+/);
  if (cpus.length === 0 || !cpus.every((c) => /^CPU[0-9]+$/.test(c))) {
    throw new ParseError({ file, line: 1, column: 1, text: header }, 'expected the header of CPU columns (CPU0 CPU1 …)');
  }
  const out: SdmaVectorCounts = new Map();
  for (let i = 1; i < lines.length; i++) {
    const line = (lines[i] as string).trimEnd();
    const m = VECTOR_NAME.exec(line);
    if (!m) continue;
    const pos = (column: number) => ({ file, line: i + 1, column, text: line });
    const irq = /^\s*([0-9]+):/.exec(line);
    if (!irq) throw new ParseError(pos(1), `an ${m[1]} SDMA vector line must start with its IRQ number and a colon`);
    let at = irq[0].length;
    let total = 0;
    for (let c = 0; c < cpus.length; c++) {
      const n = /^\s+([0-9]{1,10})(?=\s)/.exec(line.slice(at));
      if (!n) throw new ParseError(pos(at + 1), `expected ${cpus.length} per-CPU counts, found ${c}`);
      total += Number(n[1]);
      at += n[0].length;
    }
    const key = vectorKey(Number(m[2]), Number(m[3]), m[1] as 'hfi1' | 'hfi2');
    if (out.has(key)) throw new ParseError(pos(m.index + 1), `a second vector named '${m[0]}'`);
    out.set(key, total);
  }
  return out;
}
