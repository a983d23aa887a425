// Reading the ring back in the chip's layout, and the lines a driver build prints for one descriptor: the debugfs
// `sdes` descriptor and AHG lines (sdma_seqfile_dump_sde, sdma.c) and the engine-error dump of each build
// (dump_sdma_state, sdma.c).
import type { DriverBuild } from '../backend.js';
import { type DescriptorFields, decodeAt, flagString, hex16 } from '../progress/descriptor.js';
import { decodeWordsJkr } from '../progress/descriptor-chip.js';

/** Decode ring slot `s` of `w` in the chip's layout (JKR or WFR) into `out`. */
export function decodeSlot(jkr: boolean, w: Uint32Array, s: number, out: DescriptorFields): DescriptorFields {
  if (!jkr) return decodeAt(w, s, out);
  const i = s * 4;
  return decodeWordsJkr(w[i] ?? 0, w[i + 1] ?? 0, w[i + 2] ?? 0, w[i + 3] ?? 0, out);
}

/** The raw qwords of slot `s` as 16 hex digits each (d0, d1). */
export function rawQwords(w: Uint32Array, s: number): [string, string] {
  const i = s * 4;
  const q = (lo: number, hi: number) => (hi >>> 0).toString(16).padStart(8, '0') + (lo >>> 0).toString(16).padStart(8, '0');
  return [q(w[i] ?? 0, w[i + 1] ?? 0), q(w[i + 2] ?? 0, w[i + 3] ?? 0)];
}

/** Whether a build prints the new sdes lines (`… d0:0x… d1:0x…` and `aidx: amode: alen:`): cornelis and hfi2. */
export function printsRawQwords(driver: DriverBuild): boolean {
  return driver !== 'upstream';
}

/**
 * The sdes line(s) of slot `s` already decoded into `f` (sdma_seqfile_dump_sde, sdma.c). Upstream:
 * `\tdesc[%u]: flags:%s addr:0x%016llx gen:%u len:%u bytes` and, on a FIRST descriptor, `\t\tahgidx: %u ahgmode: %u`;
 * cornelis/hfi2: `\tdesc[%u]: flags:%s addr:0x%016llx gen:%u len:%u d0:0x%016llx d1:0x%016llx` and
 * `\t\taidx:%u amode:%u alen:%u` (alen is the AHG header length in dwords, the DWS field).
 */
export function sdesDescriptorLines(driver: DriverBuild, w: Uint32Array, s: number, f: DescriptorFields): string {
  const head = `\tdesc[${s}]: flags:${flagString(f)} addr:${hex16(f.addr)} gen:${f.gen} len:${f.len}`;
  if (!printsRawQwords(driver)) {
    const line = `${head} bytes\n`;
    return f.first ? `${line}\t\tahgidx: ${f.ahgIdx} ahgmode: ${f.ahgMode}\n` : line;
  }
  const [d0, d1] = rawQwords(w, s);
  const line = `${head} d0:0x${d0} d1:0x${d1}\n`;
  return f.first ? `${line}\t\taidx:${f.ahgIdx} amode:${f.ahgMode} alen:${f.ahgDws}\n` : line;
}

/**
 * The engine-error dump lines of one descriptor in the Cornelis hfi1 / hfi2 kernel log (show_tagged_sdma_descriptors,
 * sdma.c): `[desc %u] SDMA desc[...]` and, on a FIRST descriptor, `[desc %u]\taidx:...`, every line of one dump under
 * the dump's one tag.
 */
export function errorDumpLines(tag: number, w: Uint32Array, s: number, f: DescriptorFields): string[] {
  const [d0, d1] = rawQwords(w, s);
  const out = [
    `[desc ${tag}] SDMA desc[${s}]: flags:${flagString(f)} addr:${hex16(f.addr)} gen:${f.gen} len:${f.len} d0:0x${d0} d1:0x${d1}`,
  ];
  if (f.first) out.push(`[desc ${tag}]\taidx:${f.ahgIdx} amode:${f.ahgMode} alen:${f.ahgDws}`);
  return out;
}

/**
 * The engine-error dump lines of one descriptor in the upstream hfi1 kernel log (dump_sdma_state, sdma.c):
 * `SDMA sdmadesc[%u]: flags:%s addr:0x%016llx gen:%u len:%u bytes`, `\tdesc0:0x%016llx desc1 0x%016llx` and, on a
 * FIRST descriptor, `\taidx: %u amode: %u alen: %u`.
 */
export function upstreamDumpLines(w: Uint32Array, s: number, f: DescriptorFields): string[] {
  const [d0, d1] = rawQwords(w, s);
  const out = [
    `SDMA sdmadesc[${s}]: flags:${flagString(f)} addr:${hex16(f.addr)} gen:${f.gen} len:${f.len} bytes`,
    `\tdesc0:0x${d0} desc1 0x${d1}`,
  ];
  if (f.first) out.push(`\taidx: ${f.ahgIdx} amode: ${f.ahgMode} alen: ${f.ahgDws}`);
  return out;
}
