// A strict checker of a debugfs `sdes` file against the kernel's format strings, written from the drivers' printf
// formats alone and sharing no code with the reader (src/hw) or the writer (src/emu) or their shared logic
// (src/progress): its own patterns, its own bit layout, its own arithmetic.
//
// sdma_seqfile_dump_sde (sdma.c, every build) prints per engine one SDE_FMT line
//   SDE %u CPU %d STE %s C 0x%llx S 0x%016llx E 0x%llx T(HW) 0x%llx T(SW) 0x%x H(HW) 0x%llx H(SW) 0x%x H(D) 0x%llx
//   DM 0x%llx GL 0x%llx R 0x%llx LIS 0x%llx AHGI 0x%llx TXT %u TXH %u DT %u DH %u FLNE %d DQF %u SLC 0x%llx
// then one line per ring slot from H(SW) to T(SW). Upstream hfi1:
//   \tdesc[%u]: flags:%s addr:0x%016llx gen:%u len:%u bytes        and after a FIRST one  \t\tahgidx: %u ahgmode: %u
// The Cornelis hfi1 and hfi2 (sdma_qw_strings):
//   \tdesc[%u]: flags:%s addr:0x%016llx gen:%u len:%u d0:0x%016llx d1:0x%016llx   then  \t\taidx:%u amode:%u alen:%u
// flags is four letters in the order I (INT_REQ, qw1 bit 1), H (HEAD_TO_HOST, qw1 bit 0), F, L, each '-' when clear;
// F, L, the length and the address sit in qw0 (bits 63, 62, 61:48, 47:0) on WFR and in qw1 (31, 30, 29:16) with
// the address in qw0 bits 57:0 on JKR; the generation is qw1 bits 3:2, the AHG index 12:8, mode 15:13, dwords 7:4.
// _submit_tx writes each descriptor with generation (descq_tail >> shift) & 3, except the AHG edit descriptors after
// a FIRST one (mode >> 1 of them when mode > 2), and, on the Cornelis builds, its pads (the all-zero sdma_pad with
// only the generation) just before the last descriptor of a packet of two or more.

/** What the checker is told about the file. */
export interface SdesExpectation {
  driver: 'upstream' | 'cornelis' | 'hfi2';
  chip: 'wfr' | 'jkr';
  descqCnt: number;
  /** pad_sdma_desc in effect (0: no pads may appear). */
  padSdmaDesc: number;
  /** The engines the file must hold, in order. */
  engines?: readonly number[];
}

/** sdma_state_names (sdma.c), as the checker's own copy. */
const STATES = (
  's00_HwDown s10_HwStartUpHaltWait s15_HwStartUpCleanWait s20_Idle s30_SwCleanUpWait s40_HwCleanUpWait ' +
  's50_HwHaltWait s60_IdleHaltWait s80_HwFreeze s82_FreezeSwClean s99_Running'
).split(' ');

// printf conversions as the kernel prints them: %u and %d without leading zeros, %llx / %x lowercase without
// leading zeros, %016llx exactly 16 lowercase digits.
const U = '(0|[1-9][0-9]*)';
const D = '(-?(?:0|[1-9][0-9]*))';
const X = '(0|[1-9a-f][0-9a-f]*)';
const X16 = '([0-9a-f]{16})';

const HEADER = new RegExp(
  `^SDE ${U} CPU ${D} STE (\\S+) C 0x${X} S 0x${X16} E 0x${X} T\\(HW\\) 0x${X} T\\(SW\\) 0x${X} H\\(HW\\) 0x${X} ` +
    `H\\(SW\\) 0x${X} H\\(D\\) 0x${X} DM 0x${X} GL 0x${X} R 0x${X} LIS 0x${X} AHGI 0x${X} TXT ${U} TXH ${U} ` +
    `DT ${U} DH ${U} FLNE ${D} DQF ${U} SLC 0x${X}$`,
);
const OLD_DESC = new RegExp(`^\\tdesc\\[${U}\\]: flags:([I-][H-][F-][L-]) addr:0x${X16} gen:${U} len:${U} bytes$`);
const OLD_AHG = new RegExp(`^\\t\\tahgidx: ${U} ahgmode: ${U}$`);
const NEW_DESC = new RegExp(
  `^\\tdesc\\[${U}\\]: flags:([I-][H-][F-][L-]) addr:0x${X16} gen:${U} len:${U} d0:0x${X16} d1:0x${X16}$`,
);
const NEW_AHG = new RegExp(`^\\t\\taidx:${U} amode:${U} alen:${U}$`);

/** The fields a descriptor line carries, with the qwords when the line prints them. */
interface Line {
  slot: number;
  flags: string;
  addr: bigint;
  gen: number;
  len: number;
  qw0?: bigint;
  qw1?: bigint;
  ahg?: { idx: number; mode: number; dws?: number };
}

const bits = (v: bigint, hi: number, lo: number) => Number((v >> BigInt(lo)) & ((1n << BigInt(hi - lo + 1)) - 1n));

/** The fields of two qwords in the chip's layout. */
function decode(chip: 'wfr' | 'jkr', qw0: bigint, qw1: bigint) {
  const jkr = chip === 'jkr';
  return {
    first: jkr ? bits(qw1, 31, 31) === 1 : bits(qw0, 63, 63) === 1,
    last: jkr ? bits(qw1, 30, 30) === 1 : bits(qw0, 62, 62) === 1,
    len: jkr ? bits(qw1, 29, 16) : bits(qw0, 61, 48),
    addr: jkr ? qw0 & ((1n << 58n) - 1n) : qw0 & ((1n << 48n) - 1n),
    intReq: bits(qw1, 1, 1) === 1,
    headToHost: bits(qw1, 0, 0) === 1,
    gen: bits(qw1, 3, 2),
    ahgIdx: bits(qw1, 12, 8),
    ahgMode: bits(qw1, 15, 13),
    ahgDws: bits(qw1, 7, 4),
  };
}

/**
 * Every way `text` departs from what the kernel of `x.driver` on `x.chip` prints (each problem names its line);
 * empty when the file is exactly of the kernel's form.
 */
export function checkSdes(text: string, x: SdesExpectation): string[] {
  const problems: string[] = [];
  const say = (n: number, why: string) => {
    if (problems.length < 50) problems.push(`line ${n}: ${why}`);
  };
  if (text !== '' && !text.endsWith('\n')) problems.push('the file does not end with a newline');
  const lines = text.split('\n');
  lines.pop();
  const newer = x.driver !== 'upstream';
  const mask = x.descqCnt - 1;
  const shift = Math.log2(x.descqCnt);
  const engines: number[] = [];
  let i = 0;
  while (i < lines.length) {
    const n = i + 1;
    const h = HEADER.exec(lines[i] as string);
    i++;
    if (!h) {
      say(n, `not an SDE_FMT header: ${JSON.stringify(lines[i - 1])}`);
      continue;
    }
    const f = h.slice(1);
    const engine = Number(f[0]);
    engines.push(engine);
    if (!STATES.includes(f[2] as string)) say(n, `STE ${f[2]} is no state name`);
    const tsw = Number.parseInt(f[7] as string, 16);
    const hsw = Number.parseInt(f[9] as string, 16);
    const dt = Number(f[18]);
    const dh = Number(f[19]);
    if (dt > 0xffff_ffff || dh > 0xffff_ffff) say(n, 'DT/DH exceed u32');
    if (tsw !== (dt & mask)) say(n, `T(SW) 0x${f[7]} is not DT ${dt} & ${mask}`);
    if (hsw !== (dh & mask)) say(n, `H(SW) 0x${f[9]} is not DH ${dh} & ${mask}`);
    if (Number(f[16]) > 0xffff || Number(f[17]) > 0xffff) say(n, 'TXT/TXH exceed u16');
    if (f[20] !== '0' && f[20] !== '1') say(n, `FLNE ${f[20]} is not !list_empty() (0 or 1)`);
    if (x.chip !== 'wfr' && f[22] !== '0') say(n, `SLC 0x${f[22]}: the driver prints 0 on a chip without SEND_DMA_CHECK_SLID`);
    const count = (tsw - hsw) & mask;
    const ring: { n: number; d: Line }[] = [];
    for (let k = 0; k < count; k++) {
      const ln = i + 1;
      const slot = (hsw + k) & mask;
      const m = (newer ? NEW_DESC : OLD_DESC).exec(lines[i] ?? '');
      i++;
      if (!m) {
        say(ln, `not the ${x.driver} descriptor line of slot ${slot}: ${JSON.stringify(lines[i - 1])}`);
        continue;
      }
      const d: Line = {
        slot: Number(m[1]),
        flags: m[2] as string,
        addr: BigInt(`0x${m[3]}`),
        gen: Number(m[4]),
        len: Number(m[5]),
      };
      if (newer) {
        d.qw0 = BigInt(`0x${m[6]}`);
        d.qw1 = BigInt(`0x${m[7]}`);
      }
      if (d.slot !== slot) say(ln, `desc[${d.slot}] where slot ${slot} comes (head ${hsw} to tail ${tsw})`);
      if (d.flags[2] === 'F') {
        const a = (newer ? NEW_AHG : OLD_AHG).exec(lines[i] ?? '');
        if (!a) say(i + 1, `a FIRST descriptor is followed by its AHG line: ${JSON.stringify(lines[i])}`);
        else d.ahg = { idx: Number(a[1]), mode: Number(a[2]), ...(newer ? { dws: Number(a[3]) } : {}) };
        i++;
      }
      ring.push({ n: ln, d });
      checkFields(ln, d, x, say);
    }
    checkPackets(ring, dh, shift, x, say);
  }
  if (x.engines && engines.join(',') !== x.engines.join(',')) {
    problems.push(`records of engines ${engines.join(',')}, expected ${x.engines.join(',')}`);
  }
  return problems;
}

/** The printed fields of one line against its own qwords (Cornelis/hfi2) and the letter rule. */
function checkFields(n: number, d: Line, x: SdesExpectation, say: (n: number, why: string) => void): void {
  if (d.len > 0x3fff) say(n, `len ${d.len} exceeds the 14-bit BYTE_COUNT`);
  if (d.gen > 3) say(n, `gen ${d.gen} exceeds the 2-bit field`);
  if (d.qw0 === undefined || d.qw1 === undefined) return;
  const f = decode(x.chip, d.qw0, d.qw1);
  const letters = `${f.intReq ? 'I' : '-'}${f.headToHost ? 'H' : '-'}${f.first ? 'F' : '-'}${f.last ? 'L' : '-'}`;
  if (letters !== d.flags) say(n, `flags:${d.flags} but d0/d1 decode (${x.chip}) to ${letters}`);
  if (f.addr !== d.addr) say(n, `addr 0x${d.addr.toString(16)} but d0 holds 0x${f.addr.toString(16)}`);
  if (f.len !== d.len) say(n, `len ${d.len} but the qwords hold ${f.len}`);
  if (f.gen !== d.gen) say(n, `gen ${d.gen} but d1 holds ${f.gen}`);
  if (d.ahg && (d.ahg.idx !== f.ahgIdx || d.ahg.mode !== f.ahgMode || d.ahg.dws !== f.ahgDws)) {
    say(n, `aidx/amode/alen ${d.ahg.idx}/${d.ahg.mode}/${d.ahg.dws} but d1 holds ${f.ahgIdx}/${f.ahgMode}/${f.ahgDws}`);
  }
}

/** Is this line the kernel's sdma_pad (qw0 0, qw1 only its generation)? */
function isPad(d: Line): boolean {
  return d.qw0 === 0n && d.qw1 !== undefined && (d.qw1 & ~0xcn) === 0n;
}

/**
 * The ring as packets: generations per descriptor counter (edits excepted), and the pad rule: pads only in a run
 * just before a packet's LAST descriptor, fewer than pad_sdma_desc of them, never in a one-descriptor packet, none
 * at all upstream or with padding off; every other descriptor of the Cornelis builds carries data.
 */
function checkPackets(
  ring: { n: number; d: Line }[],
  dh: number,
  shift: number,
  x: SdesExpectation,
  say: (n: number, why: string) => void,
): void {
  let inPacket = false; // a FIRST was seen and its LAST not yet
  let seenFirst = false; // the head may sit inside a packet: the rules apply from the first FIRST on
  let edits = 0;
  let pads = 0;
  let packetLen = 0;
  ring.forEach(({ n, d }, k) => {
    const counter = (dh + k) >>> 0;
    const edit = edits > 0;
    if (edit) edits--;
    if (!edit && d.gen !== Math.floor(counter / 2 ** shift) % 4) {
      say(
        n,
        `gen ${d.gen}: _submit_tx writes (descq_tail >> ${shift}) & 3 = ${Math.floor(counter / 2 ** shift) % 4} at counter ${counter}`,
      );
    }
    const pad = x.driver !== 'upstream' && isPad(d);
    if (pad) {
      if (x.padSdmaDesc === 0) say(n, 'a pad descriptor with pad_sdma_desc 0');
      if (seenFirst && !inPacket) say(n, 'a pad outside a packet (after its LAST, before the next FIRST)');
      pads++;
      return;
    }
    if (d.flags[2] === 'F') {
      if (inPacket) say(n, 'FIRST inside a packet whose LAST did not come');
      if (pads > 0 && seenFirst) say(n, 'pads not followed by the packet’s last descriptor');
      inPacket = true;
      seenFirst = true;
      packetLen = 1;
      pads = 0;
      const mode = d.ahg?.mode ?? 0;
      edits = mode > 2 ? mode >> 1 : 0;
    } else if (seenFirst) {
      if (!inPacket) say(n, 'a descriptor outside a packet (no FIRST before it)');
      if (pads > 0 && d.flags[3] !== 'L') say(n, 'pads followed by a descriptor that is not the packet’s last');
      packetLen++;
    }
    if (x.driver !== 'upstream' && d.len === 0) say(n, 'a zero-length descriptor that is not the kernel’s sdma_pad');
    if (d.flags[3] === 'L') {
      if (seenFirst && pads > 0) {
        if (packetLen < 2) say(n, 'pads in a one-descriptor packet');
        if (x.padSdmaDesc > 0 && pads >= x.padSdmaDesc) say(n, `${pads} pads: round_up pads fewer than ${x.padSdmaDesc}`);
      }
      inPacket = false;
      pads = 0;
      packetLen = 0;
    } else if (d.flags[0] === 'I' || d.flags[1] === 'H') {
      if (seenFirst) say(n, 'completion bits (I/H) on a descriptor that is not LAST');
    }
  });
  const end = ring.at(-1);
  if (end && (inPacket || pads > 0)) say(end.n, 'the ring ends inside a packet: _submit_tx writes whole packets');
}
