// The SDMA log lines of the Cornelis hfi1 build and of hfi2 (dump_sdma_state, show_tagged_sdma_descriptors,
// sdma_qw_strings and the hw clean-up work of their sdma.c), which upstream hfi1 does not print:
//   SDMA (E) descq_head H, descq_tail T, used U, avail A, FLE F[, descriptor print prefix "[desc K]"]
//   [desc K] SDMA desc[S]: flags:FFFF addr:0x… gen:G len:L d0:0x… d1:0x…
//   [desc K]\taidx:I amode:M alen:D
//   SDMA engine E - timeout waiting for engine to clean
// The descriptor lines may be printed later from a work item, interleaved with other lines: the tag K links
// them to their dump (and so to the engine). H and T are ring slots; U is sdma_descq_inprocess of these builds,
// the true in-flight count (upstream's in-process would be one more), and A the free count, so the ring holds
// U + A + 1 descriptors.
import { decodeFor } from '../progress/descriptor-chip.js';
import type { LogEvent } from './parse.js';
import type { Ctx, Rule, TaggedDump } from './rule.js';

const N = '(\\d+)';
const HEX = '0x([0-9a-fA-F]+)';

function hex16(digits: string | undefined): string {
  return `0x${(digits ?? '').toLowerCase().padStart(16, '0')}`;
}

/** At most this many `[desc K]` tags are remembered per unit (the oldest is forgotten first): bounded memory. */
export const MAX_TAGS = 4096;

/** Remember tag K's dump. */
function setTag(c: Ctx, tag: number, t: TaggedDump): void {
  c.tags.delete(tag);
  if (c.tags.size >= MAX_TAGS) c.tags.delete(c.tags.keys().next().value as number);
  c.tags.set(tag, t);
}

/** The event a tagged continuation line belongs to: the last descriptor of its tag, else a new one. */
function taggedTarget(tag: number, c: Ctx): LogEvent {
  const t = c.tags.get(tag);
  if (t?.desc) return t.desc;
  return c.emit({ kind: 'descriptor', tag, ...(t?.engine === undefined ? {} : { engine: t.engine }) });
}

export const CORNELIS_RULES: readonly Rule[] = [
  {
    re: new RegExp(
      `^SDMA \\(${N}\\) descq_head ${N}, descq_tail ${N}, used ${N}, avail ${N}, FLE (-?\\d+)(?:, descriptor print prefix "\\[desc ${N}\\]")?$`,
    ),
    apply: (m, c) => {
      const engine = Number(m[1]);
      const used = Number(m[4]);
      const avail = Number(m[5]);
      const tag = m[7] === undefined ? undefined : Number(m[7]);
      c.engine = engine;
      if (tag !== undefined) setTag(c, tag, { engine, desc: undefined });
      c.emit({
        kind: 'ring-dump',
        engine,
        head: Number(m[2]),
        tail: Number(m[3]),
        used,
        inFlight: used,
        freecnt: avail,
        descqCnt: used + avail + 1,
        flushListNonEmpty: Number(m[6]) !== 0,
        ...(tag === undefined ? {} : { tag }),
      });
    },
  },
  {
    re: new RegExp(
      `^\\[desc ${N}\\] SDMA desc\\[${N}\\]: flags:([IH\\-][IH\\-][F\\-][L\\-]) addr:${HEX} gen:${N} len:${N} d0:${HEX} d1:${HEX}$`,
    ),
    apply: (m, c) => {
      const tag = Number(m[1]);
      const qw0 = BigInt(`0x${m[7]}`);
      const qw1 = BigInt(`0x${m[8]}`);
      const t = c.tags.get(tag);
      const ev = c.emit({
        kind: 'descriptor',
        tag,
        ...(t?.engine === undefined ? {} : { engine: t.engine }),
        slot: Number(m[2]),
        flags: m[3],
        addr: hex16(m[4]),
        gen: Number(m[5]),
        len: Number(m[6]),
        qw0: hex16(m[7]),
        qw1: hex16(m[8]),
        decoded: decodeFor(c.chip, qw0, qw1),
      });
      if (t) t.desc = ev;
      else setTag(c, tag, { engine: undefined, desc: ev });
    },
  },
  {
    re: new RegExp(`^\\[desc ${N}\\]\\s+aidx:${N} amode:${N} alen:${N}$`),
    apply: (m, c) => {
      const target = taggedTarget(Number(m[1]), c);
      target.ahgIdx = Number(m[2]);
      target.ahgMode = Number(m[3]);
      target.ahgLen = Number(m[4]);
    },
  },
  {
    re: new RegExp(`^SDMA engine ${N} - timeout waiting for engine to clean$`),
    apply: (m, c) => c.emit({ kind: 'clean-timeout', engine: Number(m[1]) }),
  },
];
