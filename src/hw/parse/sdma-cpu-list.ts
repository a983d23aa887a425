// debugfs sdma_cpu_list (sdma_seqfile_dump_cpu_list, sdma.c): the user CPU-to-engine map, one line per mapped CPU.
// hfi1: `cpu%3lu: ` then ` vl%d: [ sdma%2d, … ]` per VL. hfi2 adds the port: `cpu%3lu: pidx %d: ` then the VLs,
// one line per port, a later port line of the same CPU starting with 8 spaces instead of `cpu  N: `. Both forms
// are read, line by line; engine numbers are absolute indexes.
import { ParseError } from '../../errors.js';
import { indexRangesText } from '../../progress/engine-ids.js';

/** One VL's engines of one CPU (and port, on hfi2). */
export interface CpuVlEngines {
  cpu: number;
  /** The port index (pidx) on hfi2; null on hfi1. */
  pidx: number | null;
  vl: number;
  engines: number[];
}

const LEAD = /^(?:cpu\s*(0|[1-9][0-9]{0,5}):| {7,8})(?: ?pidx (0|[1-9]):)?/;
const VL = /^\s+vl([0-7]): \[((?: sdma\s*(?:0|[1-9][0-9]?),?)*) \]/;

/** Parse sdma_cpu_list; a line of neither form is a ParseError naming its line and column. */
export function parseSdmaCpuList(text: string, file = 'sdma_cpu_list'): CpuVlEngines[] {
  const out: CpuVlEngines[] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let cpu: number | null = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const fail = (column: number, what: string) => new ParseError({ file, line: i + 1, column, text: raw }, what);
    const lead = LEAD.exec(raw);
    if (!lead) throw fail(1, "expected 'cpu N:' (or 8 spaces for a later port of the same CPU)");
    if (lead[1] !== undefined) cpu = Number(lead[1]);
    else if (cpu === null || lead[2] === undefined) throw fail(1, 'a continuation line needs a CPU line before it and a pidx');
    const pidx = lead[2] === undefined ? null : Number(lead[2]);
    let at = lead[0].length;
    let rest = raw.slice(at);
    while (rest.trim() !== '') {
      const m = VL.exec(rest);
      if (!m) throw fail(at + 1, "expected ' vlN: [ sdmaE, … ]'");
      const engines = [...(m[2] as string).matchAll(/sdma\s*([0-9]+)/g)].map((e) => Number(e[1]));
      out.push({ cpu: cpu as number, pidx, vl: Number(m[1]), engines });
      at += m[0].length;
      rest = rest.slice(m[0].length);
    }
  }
  return out;
}

/**
 * The CPUs whose user processes are mapped to `engine` (on any VL and port), in the text form of the engine's own
 * sysfs `cpu_list` (`%*pbl`: `8-9,12`, or `empty`): what `sdma<E>/cpu_list` shows, taken from debugfs instead.
 */
export function cpuListOfEngine(entries: readonly CpuVlEngines[], engine: number): string {
  const cpus = [...new Set(entries.filter((e) => e.engines.includes(engine)).map((e) => e.cpu))].sort((a, b) => a - b);
  return cpus.length === 0 ? 'empty' : indexRangesText(cpus);
}
