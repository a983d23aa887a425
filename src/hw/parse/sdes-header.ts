// The header line of one `sdes` record (sdma_seqfile_dump_sde, sdma.c): 23 labelled fields upstream, 22 (no CPU) in the
// staging-era driver. Every label, separator and conversion is checked; a failure names the column.
import { isStateName, type StateName } from '../../progress/state.js';
import { decimalOrNull, escapeControls, hex64OrNull, signedOrNull } from './text.js';

/** The fields of an sdes header line (sdma_seqfile_dump_sde, sdma.c), named as the driver's struct members. */
export interface SdesHeader {
  engine: number; // SDE: this_idx
  cpu: number | null; // CPU: IRQ CPU; null in the 22-field staging header
  state: StateName; // STE (the state names, sdma.c)
  ctrl: bigint; // C: SEND_DMA_CTRL
  status: bigint; // S: SEND_DMA_STATUS
  errStatus: bigint; // E: SEND_DMA_ENG_ERR_STATUS
  hwTail: bigint; // T(HW): SEND_DMA_TAIL
  swTail: number; // T(SW): descq_tail & mask
  hwHead: bigint; // H(HW): SEND_DMA_HEAD
  swHead: number; // H(SW): descq_head & mask
  headDma: bigint; // H(D): *head_dma
  memory: bigint; // DM: SEND_DMA_MEMORY
  lenGen: bigint; // GL: SEND_DMA_LEN_GEN
  reloadCnt: bigint; // R: SEND_DMA_RELOAD_CNT
  lastStatus: bigint; // LIS: last_status
  ahgBits: bigint; // AHGI: ahg_bits
  txTail: number; // TXT: tx_tail (u16)
  txHead: number; // TXH: tx_head (u16)
  descqTail: number; // DT: descq_tail (u32)
  descqHead: number; // DH: descq_head (u32)
  flushListNonEmpty: boolean; // FLNE
  descqFullCount: number; // DQF: descq_full_count (u32)
  checkSlid: bigint; // SLC: SEND_DMA_CHECK_SLID
  /** Labelled fields after SLC that this reader does not know (a newer driver), as printed. */
  extra?: string;
}

/** Where a header failed: column (1-based) and what was expected. */
export interface HeaderFailure {
  column: number;
  what: string;
}

type Kind = 'u32' | 'u16' | 'int' | 'state' | 'hex' | 'hex16' | 'hex32' | 'flag';

// sdma_seqfile_dump_sde, sdma.c header fields in order; CPU is absent from the staging-era header.
const FIELDS: readonly (readonly [label: string, key: keyof SdesHeader, kind: Kind])[] = [
  ['SDE', 'engine', 'u32'],
  ['CPU', 'cpu', 'int'],
  ['STE', 'state', 'state'],
  ['C', 'ctrl', 'hex'],
  ['S', 'status', 'hex16'],
  ['E', 'errStatus', 'hex'],
  ['T(HW)', 'hwTail', 'hex'],
  ['T(SW)', 'swTail', 'hex32'],
  ['H(HW)', 'hwHead', 'hex'],
  ['H(SW)', 'swHead', 'hex32'],
  ['H(D)', 'headDma', 'hex'],
  ['DM', 'memory', 'hex'],
  ['GL', 'lenGen', 'hex'],
  ['R', 'reloadCnt', 'hex'],
  ['LIS', 'lastStatus', 'hex'],
  ['AHGI', 'ahgBits', 'hex'],
  ['TXT', 'txTail', 'u16'],
  ['TXH', 'txHead', 'u16'],
  ['DT', 'descqTail', 'u32'],
  ['DH', 'descqHead', 'u32'],
  ['FLNE', 'flushListNonEmpty', 'flag'],
  ['DQF', 'descqFullCount', 'u32'],
  ['SLC', 'checkSlid', 'hex'],
];

const DESCRIBE: Record<Kind, string> = {
  u32: 'an unsigned 32-bit decimal (%u)',
  u16: 'an unsigned 16-bit decimal (%u of a u16)',
  int: 'a signed decimal (%d)',
  state: 'an engine state name such as s99_Running',
  hex: '0x and up to 16 hex digits (0x%llx)',
  hex16: '0x and exactly 16 hex digits (0x%016llx)',
  hex32: '0x and up to 8 hex digits (0x%x)',
  flag: '0 or 1',
};

function convert(kind: Kind, s: string): unknown {
  switch (kind) {
    case 'u32':
      return decimalOrNull(s, 0xffff_ffff);
    case 'u16':
      return decimalOrNull(s, 0xffff);
    case 'int':
      return signedOrNull(s, -0x8000_0000, 0x7fff_ffff);
    case 'state':
      return isStateName(s) ? s : null;
    case 'hex':
      return hex64OrNull(s);
    case 'hex16':
      return s.length === 18 ? hex64OrNull(s) : null;
    case 'hex32': {
      const v = s.length <= 10 ? hex64OrNull(s) : null;
      return v === null ? null : Number(v);
    }
    case 'flag':
      return s === '0' ? false : s === '1' ? true : null;
  }
}

/** Fields a newer driver may print after SLC: one or more ` LABEL value` pairs, as the known ones. */
const EXTRA_FIELDS = /^(?: [A-Za-z][A-Za-z0-9_()]{0,15} [^ ]{1,40}){1,16}$/;

/**
 * Parse one header line (without its newline). Returns the header, or the column and reason of
 * the first mismatch. An unknown state name is a failure: the names are exact (the state names, sdma.c). Labelled
 * fields after SLC are kept as `extra`; the known fields are used.
 */
export function parseSdesHeader(line: string): SdesHeader | HeaderFailure {
  const out: Record<string, unknown> = { cpu: null };
  let pos = 0;
  for (let i = 0; i < FIELDS.length; i++) {
    const [label, key, kind] = FIELDS[i] as (typeof FIELDS)[number];
    const prefix = `${i === 0 ? '' : ' '}${label} `;
    if (!line.startsWith(prefix, pos)) {
      if (key === 'cpu') continue; // staging-era header: no CPU field (sdma_seqfile_dump_sde, sdma.c)
      return { column: pos + 1, what: `expected '${prefix.trim()}' (field ${i + 1} of the sdes header)` };
    }
    pos += prefix.length;
    let end = line.indexOf(' ', pos);
    if (end === -1) end = line.length;
    const token = line.slice(pos, end);
    const value = convert(kind, token);
    if (value === null) {
      const unknownState = kind === 'state' && /^s[0-9]{2}_[A-Za-z]+$/.test(token);
      return {
        column: pos + 1,
        what: unknownState
          ? `unknown engine state '${token}' (the driver prints only its own state names)`
          : `${label} must be ${DESCRIBE[kind]}, got '${escapeControls(token)}'`,
      };
    }
    out[key] = value;
    pos = end;
  }
  if (pos !== line.length) {
    const rest = line.slice(pos);
    if (!EXTRA_FIELDS.test(rest)) {
      return {
        column: pos + 1,
        what: "unexpected text after SLC, the last known header field: a newer driver's fields would read ' LABEL value'",
      };
    }
    out.extra = rest.slice(1);
  }
  return out as unknown as SdesHeader;
}

/** True for a failure result of parseSdesHeader. */
export function isHeaderFailure(r: SdesHeader | HeaderFailure): r is HeaderFailure {
  return (r as HeaderFailure).what !== undefined;
}
