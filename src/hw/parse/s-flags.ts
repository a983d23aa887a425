// The QP `s_flags` word (struct rvt_qp, rdmavt_qp.h; the driver bits in hfi1 qp.h) in its three historical layouts,
// and how one `qp_stats` file is assigned a layout: by its format first, then by the values it shows.

/**
 * A: the first staging hfi1 (its private HFI1_S_* names, verbs.h, no PIO_DRAIN). B: the rdmavt layout after
 * "Adaptive PIO" (RVT_S_WAIT_PIO_DRAIN 0x800 shifts TX/DMA_DESC/KMEM up one bit). C: the current rdmavt
 * RVT_S_* with hfi1 driver bits from bit 31 down (rdmavt_qp.h, hfi1 qp.h).
 */
export type SFlagsLayout = 'A' | 'B' | 'C';

/** Which names the driver bits of layout C carry: upstream, or the out-of-tree IFS drivers' TID bits. */
export type SFlagsDialect = 'upstream' | 'ifs-10.7' | 'ifs-10.8';

type BitTable = readonly (readonly [bit: number, name: string])[];

// Bits 0x0001–0x0200 are the same in every layout (rdmavt_qp.h; verbs.h of the staging driver).
const COMMON: BitTable = [
  [0x0001, 'SIGNAL_REQ_WR'],
  [0x0002, 'BUSY'],
  [0x0004, 'TIMER'],
  [0x0008, 'RESP_PENDING'],
  [0x0010, 'ACK_PENDING'],
  [0x0020, 'WAIT_FENCE'],
  [0x0040, 'WAIT_RDMAR'],
  [0x0080, 'WAIT_RNR'],
  [0x0100, 'WAIT_SSN_CREDIT'],
  [0x0200, 'WAIT_DMA'],
];

const LAYOUT_A: BitTable = [
  ...COMMON,
  [0x0400, 'WAIT_PIO'],
  [0x0800, 'WAIT_TX'],
  [0x1000, 'WAIT_DMA_DESC'],
  [0x2000, 'WAIT_KMEM'],
  [0x4000, 'WAIT_PSN'],
  [0x8000, 'WAIT_ACK'],
  [0x10000, 'SEND_ONE'],
  [0x20000, 'UNLIMITED_CREDIT'],
  [0x40000, 'AHG_VALID'],
  [0x80000, 'AHG_CLEAR'],
  [0x100000, 'ECN'],
];

const LAYOUT_B: BitTable = [
  ...COMMON,
  [0x0400, 'WAIT_PIO'],
  [0x0800, 'WAIT_PIO_DRAIN'],
  [0x1000, 'WAIT_TX'],
  [0x2000, 'WAIT_DMA_DESC'],
  [0x4000, 'WAIT_KMEM'],
  [0x8000, 'WAIT_PSN'],
  [0x10000, 'WAIT_ACK'],
  [0x20000, 'SEND_ONE'],
  [0x40000, 'UNLIMITED_CREDIT'],
  [0x80000, 'AHG_VALID'],
  [0x100000, 'AHG_CLEAR'],
  [0x200000, 'ECN'],
];

const LAYOUT_C_RVT: BitTable = [
  ...COMMON,
  [0x0400, 'WAIT_PIO'],
  [0x0800, 'WAIT_TX'],
  [0x1000, 'WAIT_DMA_DESC'],
  [0x2000, 'WAIT_KMEM'],
  [0x4000, 'WAIT_PSN'],
  [0x8000, 'WAIT_ACK'],
  [0x10000, 'SEND_ONE'],
  [0x20000, 'UNLIMITED_CREDIT'],
  [0x40000, 'ECN'],
];

// hfi1 qp.h driver bits of layout C, upstream (TID_SPACE/TID_RESP/HALT come with TID RDMA).
const DRIVER_UPSTREAM: BitTable = [
  [0x80000000, 'AHG_VALID'],
  [0x40000000, 'AHG_CLEAR'],
  [0x20000000, 'WAIT_PIO_DRAIN'],
  [0x10000000, 'WAIT_TID_SPACE'],
  [0x08000000, 'WAIT_TID_RESP'],
  [0x04000000, 'WAIT_HALT'],
];
// The IFS 10.7 driver kept its TID bits in rdmavt (rdmavt_qp.h of that release) and had WAIT_TID_RDMA and
// TID_E_SENDING (qp.h of that release).
const DRIVER_IFS_107: BitTable = [
  [0x80000, 'WAIT_TID_RESP'],
  [0x100000, 'WAIT_TID_SPACE'],
  [0x200000, 'WAIT_HALT'],
  [0x80000000, 'AHG_VALID'],
  [0x40000000, 'AHG_CLEAR'],
  [0x20000000, 'WAIT_PIO_DRAIN'],
  [0x10000000, 'TID_E_SENDING'],
  [0x08000000, 'WAIT_TID_RDMA'],
];
// IFS 10.8 onwards: RESP and SPACE are swapped relative to upstream (qp.h of those releases).
const DRIVER_IFS_108: BitTable = [
  [0x80000000, 'AHG_VALID'],
  [0x40000000, 'AHG_CLEAR'],
  [0x20000000, 'WAIT_PIO_DRAIN'],
  [0x10000000, 'WAIT_TID_RESP'],
  [0x08000000, 'WAIT_TID_SPACE'],
  [0x04000000, 'WAIT_HALT'],
];

function table(layout: SFlagsLayout, dialect: SFlagsDialect): BitTable {
  if (layout === 'A') return LAYOUT_A;
  if (layout === 'B') return LAYOUT_B;
  const driver = dialect === 'ifs-10.7' ? DRIVER_IFS_107 : dialect === 'ifs-10.8' ? DRIVER_IFS_108 : DRIVER_UPSTREAM;
  return [...LAYOUT_C_RVT, ...driver];
}

const TABLES = new Map<string, BitTable>();
function cached(layout: SFlagsLayout, dialect: SFlagsDialect): BitTable {
  const key = `${layout}/${dialect}`;
  let t = TABLES.get(key);
  if (!t) {
    t = table(layout, dialect);
    TABLES.set(key, t);
  }
  return t;
}

/** The bit of RVT_S_WAIT_DMA_DESC (the flag iowait_sleep, qp.c, sets when the ring is full) in a layout. */
export function waitDmaDescBit(layout: SFlagsLayout): number {
  return layout === 'B' ? 0x2000 : 0x1000;
}

/** The wait a flagged QP is in, by the list it sits on (iowait_sleep, pio_wait, __get_txreq, hfi1_wait_kmem). */
export type IoWait = 'dma-desc' | 'pio' | 'pio-drain' | 'tx' | 'kmem';

/** The decoded word: every set bit by name (unknown bits as `0x…`), and the I/O waits it holds. */
export interface SFlagsDecoded {
  names: string[];
  /** RVT_S_WAIT_DMA_DESC: the QP sleeps on an engine's dmawait list. */
  waitDmaDesc: boolean;
  /** The HFI1_S_ANY_WAIT_IO bits that are set (hfi1_send_ok, qp.h, refuses to send while any is). */
  ioWaits: IoWait[];
}

const IO_WAIT: Readonly<Record<string, IoWait>> = {
  WAIT_DMA_DESC: 'dma-desc',
  WAIT_PIO: 'pio',
  WAIT_PIO_DRAIN: 'pio-drain',
  WAIT_TX: 'tx',
  WAIT_KMEM: 'kmem',
};

/** The decoding of s_flags 0, shared by every record that has it (most QPs). */
export const NO_FLAGS: SFlagsDecoded = Object.freeze({ names: [], waitDmaDesc: false, ioWaits: [] });

/** Decode an `s_flags` value in the given layout (and, for layout C, the driver's dialect of its high bits). */
export function decodeSFlags(value: number, layout: SFlagsLayout, dialect: SFlagsDialect = 'upstream'): SFlagsDecoded {
  const names: string[] = [];
  const ioWaits: IoWait[] = [];
  let rest = value >>> 0;
  for (const [bit, name] of cached(layout, dialect)) {
    if ((rest & bit) >>> 0 === 0) continue;
    rest = (rest & ~bit) >>> 0;
    names.push(name);
    const w = IO_WAIT[name];
    if (w) ioWaits.push(w);
  }
  for (let bit = 1; rest !== 0; bit = (bit << 1) >>> 0) {
    if ((rest & bit) >>> 0 === 0) continue;
    rest = (rest & ~bit) >>> 0;
    names.push(`0x${bit.toString(16)}`);
  }
  return { names, waitDmaDesc: ioWaits.includes('dma-desc'), ioWaits };
}
