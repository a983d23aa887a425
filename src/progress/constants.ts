// Named facts of the hfi1 SDMA engines, each with the kernel source (function or header) it comes
// from. Offsets, bit numbers and limits live here and nowhere else.

// sdma_get_descq_cnt, sdma.c ring geometry
export const SDMA_DESCQ_CNT_DEFAULT = 2048;
export const SDMA_DESCQ_CNT_MIN = 64;
export const SDMA_DESCQ_CNT_MAX = 32768;
/** sdma_get_descq_cnt, sdma.c module parameter defaults. */
export const SDMA_IDLE_CNT_DEFAULT_NS = 250;
export const DESCT_INTR_DEFAULT = 64;
/** num_sdma, chip.c compile-time engine count; the runtime count comes from SEND_DMA_ENGINES. */
export const TXE_NUM_SDMA_ENGINES = 16;
/**
 * What `sdma<E>/vl` prints for an engine a port's VL map does not use: engine_to_vl[] holds −1 (s8, sdma_map_init,
 * sdma.c) and sdma_engine_get_vl returns it through a u8, so the file shows 255 (vl_show / sde_show_vl, sysfs.c).
 */
export const VL_UNMAPPED = 255;

// struct sdma_txreq, sdma_txreq.h txreq limits
export const NUM_DESC = 6; // descriptors embedded in every txreq
export const MAX_DESC = 64; // hardware limit per packet
export const MAX_SDMA_PKT_SIZE = 16383; // largest tlen

// sdma_desc_avail, sdma.c waiters harvested per sdma_desc_avail call
export const SDMA_WAIT_BATCH_SIZE = 20;
/**
 * The most descriptors one waiter can need before sdma_desc_avail (sdma.c) takes it off dmawait: iowait_get_all_desc
 * (iowait.h) adds the first txreq of each of its two work lists (IB and TID), each at most MAX_DESC: iowait_get_desc
 * counts a txreq's num_desc, never its pads (num_pad), on every build. A pass that finds at least this many free
 * takes the waiter at the head of the list.
 */
export const MAX_WAITER_NEED = 2 * MAX_DESC;
// sdma_send_txlist, sdma.c tail written every 32 submissions in a batch
export const SDMA_TAIL_UPDATE_THRESH = 0x1f;

// struct sdma_txreq, sdma_txreq.h txreq flags and completion status
export const SDMA_TXREQ_F_URGENT = 0x1;
export const SDMA_TXREQ_F_AHG_COPY = 0x2;
export const SDMA_TXREQ_F_USE_AHG = 0x4;
export const SDMA_TXREQ_F_VIP = 0x10;
export const SDMA_TXREQ_S_OK = 0;
export const SDMA_TXREQ_S_SENDERROR = 1;
export const SDMA_TXREQ_S_ABORTED = 2;
export const SDMA_TXREQ_S_SHUTDOWN = 3;

// the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h descriptor qword 0
export const SDMA_DESC0_FIRST_BIT = 63;
export const SDMA_DESC0_LAST_BIT = 62;
export const SDMA_DESC0_BYTE_COUNT_SHIFT = 48;
export const SDMA_DESC0_BYTE_COUNT_MASK = 0x3fff; // 14 bits
export const SDMA_DESC0_PHY_ADDR_BITS = 48;
// the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h descriptor qword 1
export const SDMA_DESC1_HEADER_UPDATE1_SHIFT = 32;
export const SDMA_DESC1_HEADER_MODE_SHIFT = 13;
export const SDMA_DESC1_HEADER_MODE_MASK = 0x7;
export const SDMA_DESC1_HEADER_INDEX_SHIFT = 8;
export const SDMA_DESC1_HEADER_INDEX_MASK = 0x1f;
export const SDMA_DESC1_HEADER_DWS_SHIFT = 4;
export const SDMA_DESC1_HEADER_DWS_MASK = 0xf;
export const SDMA_DESC1_GENERATION_SHIFT = 2;
export const SDMA_DESC1_GENERATION_MASK = 0x3;
export const SDMA_DESC1_INT_REQ = 0x2;
export const SDMA_DESC1_HEAD_TO_HOST = 0x1;
// sdma_txinit_ahg, sdma.h AHG modes
export const SDMA_AHG_NO_AHG = 0;
export const SDMA_AHG_COPY = 1;
export const SDMA_AHG_APPLY_UPDATE1 = 2;
export const SDMA_AHG_APPLY_UPDATE2 = 3;
export const SDMA_AHG_APPLY_UPDATE3 = 4;
/** sdma_txadd_page/kvaddr/daddr, sdma.h mapping types stored in a txreq's private qw1 generation field. */
export const SDMA_MAP_NONE = 0;
export const SDMA_MAP_SINGLE = 1;
export const SDMA_MAP_PAGE = 2;

// the BAR0 map, chip_registers.h BAR0
export const BAR0_SIZE = 0x4000000; // 64 MiB
export const CCE_REVISION = 0x0;
// SEND_DMA_* per-engine CSRs, chip_registers.h per-engine CSRs: absolute offset = base + SDMA_ENGINE_STRIDE × engine
export const SDMA_ENGINE_STRIDE = 0x100;
export const SEND_DMA_CTRL = 0x1a00000;
export const SEND_DMA_STATUS = 0x1a00008;
export const SEND_DMA_BASE_ADDR = 0x1a00010;
export const SEND_DMA_LEN_GEN = 0x1a00018;
export const SEND_DMA_TAIL = 0x1a00020;
export const SEND_DMA_HEAD = 0x1a00028;
export const SEND_DMA_HEAD_ADDR = 0x1a00030;
export const SEND_DMA_PRIORITY_THLD = 0x1a00038;
export const SEND_DMA_IDLE_CNT = 0x1a00040;
export const SEND_DMA_RELOAD_CNT = 0x1a00048;
export const SEND_DMA_DESC_CNT = 0x1a00050;
export const SEND_DMA_DESC_FETCHED_CNT = 0x1a00058;
export const SEND_DMA_ENG_ERR_STATUS = 0x1a00060;
export const SEND_DMA_ENG_ERR_MASK = 0x1a00068;
export const SEND_DMA_ENG_ERR_CLEAR = 0x1a00070;
export const SEND_DMA_CHECK_ENABLE = 0x1a00080;
export const SEND_DMA_CHECK_VL = 0x1a00088;
export const SEND_DMA_CHECK_JOB_KEY = 0x1a00090;
export const SEND_DMA_CHECK_PARTITION_KEY = 0x1a00098;
export const SEND_DMA_CHECK_SLID = 0x1a000a0;
export const SEND_DMA_CHECK_OPCODE = 0x1a000a8;
export const SEND_DMA_MEMORY = 0x1a000b0;
/** SEND_DMA_* per-engine CSRs, chip_registers.h the per-engine CSR block: 16 engines × 0x100 from SEND_DMA_CTRL. */
export const SDMA_CSR_BLOCK_START = SEND_DMA_CTRL;
export const SDMA_CSR_BLOCK_SIZE = TXE_NUM_SDMA_ENGINES * SDMA_ENGINE_STRIDE;

// SEND_DMA device registers, chip_registers.h device-wide registers
export const SEND_DMA_ENGINES = 0x1800018;
export const SEND_DMA_MEM_SIZE = 0x1800028;
export const SEND_DMA_MEM_SIZE_OBSERVED = 401408;
export const CCE_INT_STATUS = 0x110800;
export const CCE_INT_CLEAR = 0x110a00;
export const CCE_INT_FORCE = 0x110b00;
/** SEND_DMA device registers, chip_registers.h; the engine interrupt masks, sdma.c: SDMA interrupt sources live in CCE interrupt register #3. */
export const CCE_INT_SDMA_REG = 3;
export const IS_SDMA_START = 192;

// SEND_DMA_* per-engine CSRs, chip_registers.h SEND_DMA_CTRL bits
export const SEND_DMA_CTRL_ENABLE = 0x1n;
export const SEND_DMA_CTRL_HALT = 0x2n;
export const SEND_DMA_CTRL_CLEANUP = 0x4n;
export const SEND_DMA_CTRL_INT_ENABLE = 0x8n;
// SEND_DMA_* per-engine CSRs, chip_registers.h SEND_DMA_STATUS bits (the only two named in public sources)
export const SEND_DMA_STATUS_ENG_HALTED_BIT = 56;
export const SEND_DMA_STATUS_ENG_CLEANED_UP_BIT = 57;
// SEND_DMA_* per-engine CSRs, chip_registers.h SEND_DMA_LEN_GEN fields
export const SEND_DMA_LEN_GEN_LENGTH_SHIFT = 6;
export const SEND_DMA_LEN_GEN_GENERATION_SHIFT = 16;
// SEND_DMA_* per-engine CSRs, chip_registers.h SEND_DMA_MEMORY fields
export const SEND_DMA_MEMORY_CNT_SHIFT = 16;
// init_sdma_regs, sdma.c ASIC core clock period
export const ASIC_CCLOCK_PS = 1242;

// the engine interrupt masks, sdma.c interrupt masks, relative to CCE interrupt register #3, for engine i
export const intMask = (engine: number): bigint => 1n << BigInt(engine);
export const progressMask = (engine: number): bigint => 1n << BigInt(16 + engine);
export const idleMask = (engine: number): bigint => 1n << BigInt(32 + engine);

/** SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h SEND_DMA_ENG_ERR_STATUS bits: name and whether the bit halts the engine (→ e60). */
export const ENG_ERR_BITS: readonly { bit: number; name: string; halts: boolean }[] = [
  { bit: 0, name: 'SDmaWrongDwErr', halts: true },
  { bit: 1, name: 'SDmaGenMismatchErr', halts: true },
  { bit: 2, name: 'SDmaTooLongErr', halts: true },
  { bit: 3, name: 'SDmaTailOutOfBoundsErr', halts: true },
  { bit: 4, name: 'SDmaFirstDescErr', halts: true },
  { bit: 5, name: 'SDmaMemReadErr', halts: true },
  { bit: 6, name: 'SDmaHaltErr', halts: true },
  { bit: 7, name: 'SDmaLengthMismatchErr', halts: true },
  { bit: 8, name: 'SDmaPacketDescOverflowErr', halts: true },
  { bit: 9, name: 'reserved', halts: false },
  { bit: 10, name: 'SDmaHeaderSelectErr', halts: true },
  { bit: 11, name: 'SDmaHeaderAddressErr', halts: true },
  { bit: 12, name: 'SDmaHeaderLengthErr', halts: true },
  { bit: 13, name: 'SDmaTimeoutErr', halts: true },
  { bit: 14, name: 'SDmaDescTableUncErr', halts: true },
  { bit: 15, name: 'SDmaAssemblyUncErr', halts: true },
  { bit: 16, name: 'SDmaPacketTrackingUncErr', halts: true },
  { bit: 17, name: 'SDmaHeaderStorageUncErr', halts: true },
  { bit: 18, name: 'SDmaHeaderRequestFifoUncErr', halts: true },
  { bit: 19, name: 'SDmaDescTableCorErr', halts: false },
  { bit: 20, name: 'SDmaAssemblyCorErr', halts: false },
  { bit: 21, name: 'SDmaPacketTrackingCorErr', halts: false },
  { bit: 22, name: 'SDmaHeaderStorageCorErr', halts: false },
  { bit: 23, name: 'SDmaHeaderRequestFifoCorErr', halts: false },
];
/** SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h halt-class mask: bits 0–8 and 10–18. */
export const SDMA_ENG_ERR_HALT_MASK = 0x7fdffn;
/** SEND_DMA_ENG_ERR_STATUS bits, chip_registers.h SDmaHaltErr alone is the chip reporting its own halt and is not logged. */
export const SDMA_ENG_ERR_HALT_BIT = 6;

/** the debugfs counters, debugfs.c per-engine counter names (engine number appended). */
export const COUNTER_DESC_FETCHED = 'SDEDscFdCn';
export const COUNTER_SDMA_INT = 'SDMAInt';
export const COUNTER_ERR = 'SDMAErrCt';
export const COUNTER_IDLE_INT = 'SDMAIdInt';
export const COUNTER_PROGRESS_INT = 'SDMAPrIntCn';

/** num_sdma, chip.c PCI identity. */
export const PCI_VENDOR_INTEL = 0x8086;
export const PCI_DEVICE_HFI1_DISCRETE = 0x24f0;
export const PCI_DEVICE_HFI1_INTEGRATED = 0x24f1;

/** An all-ones 64-bit register: the device is not answering (the BAR0 map, chip_registers.h; sdma_seqfile_dump_sde, sdma.c). */
export const ALL_ONES_64 = 0xffffffffffffffffn;
