// The contract between the backends (src/hw: a live host; src/emu: the emulator) and everything
// above them (src/progress, src/cli). Types and doc comments only: this file imports nothing.
//
// Units: counters named descq* are the kernel's free-running u32 counts (struct sdma_engine, sdma.h); sw*/hw* slots are
// ring positions already masked with descq_cnt − 1; tx* are free-running u16 counts. Register
// values are bigint (64-bit); times are milliseconds from the backend's injected clock.
// Section marks (struct sdma_engine, sdma.h …) point into the kernel driver sources (drivers/infiniband/hw/hfi1).

/** Which backend produced a sample. */
export type BackendKind = 'hw' | 'emu';

/** A data source a backend may read. A live host without root has only some of them. */
export type SourceName =
  | 'sdes' // debugfs hfi1_<u>/sdes (sdma_seqfile_dump_sde, sdma.c): every header field, the ring (root, debugfs mounted)
  | 'counters' // debugfs counter_names + counters (the debugfs counters, debugfs.c): per-engine interrupt counters
  | 'hwCounters' // sysfs hw_counters (the hfi1 sysfs attributes, sysfs.c): the same counters, world-readable where present
  | 'interrupts' // /proc/interrupts (/proc/interrupts): per-engine vector counts, world-readable
  | 'bar' // sysfs resource0 (pci_mmap_resource, drivers/pci): per-engine CSRs through a read-only mapping (root)
  | 'sysfs' // sysfs sdma<N>/vl and cpu_list (sdma<N>/vl and cpu_list, sysfs.c), module parameters (the hfi1 module parameters)
  | 'qpStats' // debugfs hfi1_<u>/qp_stats (qp_iter_print, hfi1 qp.c): the QPs and their waits (root, debugfs mounted)
  | 'procPsm' // /proc/<pid>/fd, stack, syscall, comm: PSM writers blocked on /dev/hfi1_<u> (root for other users' processes)
  | 'trace' // tracefs `trace` (hfi1_tx events, read only when someone enabled them): the engine of a PSM writer
  | 'portCounters' // debugfs portcounter_names + port<N>counters (the debugfs port counters, debugfs.c), else sysfs ports/<N>/
  | 'kmsg' // /dev/kmsg, read without clearing it: the IPoIB timeout blocks (hfi1_ipoib_tx_timeout, ipoib_tx.c)
  | 'model'; // the emulator's own state (emu backend only)

/** Whether a source can be read here, and if not, why and what to do about it. */
export interface SourceStatus {
  source: SourceName;
  readable: boolean;
  /** The file or directory behind the source, under the sysroot. */
  path?: string;
  /** Why it is not readable (absent when readable). */
  reason?: string;
  /** What the operator can do to make it readable (absent when readable or when nothing helps). */
  fix?: string;
}

/** The chip: `wfr` (Intel Omni-Path 100, PCI 8086:24f0/24f1) or `jkr` (Cornelis CN5000, PCI 434e:0001). */
export type ChipKind = 'wfr' | 'jkr';

/**
 * The driver build: `upstream` (hfi1 of the kernel tree), `cornelis` (the out-of-tree hfi1 of Cornelis' OPA
 * distribution, which drives WFR and JKR and prints the newer sdes lines) or `hfi2` (the Cornelis driver posted
 * to linux-rdma, `hfi2_<unit>` devices).
 */
export type DriverBuild = 'upstream' | 'cornelis' | 'hfi2';

/** What kind of unit this is, and how the backend decided. */
export interface UnitFlavour {
  /** The kernel module, which is also the prefix of the unit's name and of its debugfs directory. */
  module: 'hfi1' | 'hfi2';
  chip: ChipKind;
  driver: DriverBuild;
  /** Ports of the adapter (1 or 2); one set of engines serves every port. */
  ports: number;
  /** One line per decision, naming what was read: e.g. `chip jkr: PCI id 434e:0001 (device/vendor, device/device)`. */
  evidence: string[];
}

/** One hfi1 or hfi2 adapter. */
export interface UnitInfo {
  /** Device index: the N of hfi1_N / hfi2_N. */
  unit: number;
  /** `hfi1_<unit>` or `hfi2_<unit>`. */
  name: string;
  /** PCI address, e.g. `0000:05:00.0`; empty when unknown. */
  pci: string;
  /** How many engines the unit has (the length of `engineIds`; 16 on a physical function, num_sdma, chip.c). */
  engines: number;
  /**
   * The engines' absolute hardware indexes, ascending. 0 to engines − 1 on a physical function; an SR-IOV
   * function has a window that need not start at 0 (first_sdma_engine..last_sdma_engine of hfi2). Every
   * engine number in this contract (samples, rings, counters, waiters) is one of these.
   */
  engineIds: number[];
  /** The module, chip and driver build, with the evidence for each. */
  flavour: UnitFlavour;
  /** Ring size in descriptors, by the module-parameter rule (sdma_get_descq_cnt, sdma.c). */
  descqCnt: number;
  /** Every source with its readability. */
  sources: SourceStatus[];
  /** The adapter's, driver's and host's identity, where the backend can read it. */
  context?: UnitContext;
  /** The driver settings that decide which engines carry traffic (bulk service, num_sdma, cap_mask), where readable. */
  settings?: UnitSettings;
  /**
   * The unit is not an adapter: the emulator, an emulated sysroot (`emu write`, `emu serve`) or a capture of one.
   * Every backend of this package says so either way; absent (a backend of someone else's) means an adapter.
   */
  emulated?: boolean;
}

/**
 * The driver settings that make idle engines normal, as the module parameters and `hw_resources` show them: the
 * Cornelis hfi1's bulk service (`use_bulksvc`, which takes the last `bulksvc_num_sdma` engines and carries verbs
 * messages over 2 KB and user verbs off SDMA: hfi1_bulksvc_loan_resources, bulksvc.c), `num_sdma`, `num_vls` and the
 * SDMA bit of `cap_mask` (HFI1_CAP_SDMA, common.h). Every field is null when its file is not there.
 */
export interface UnitSettings {
  /** `use_bulksvc` (Y/N); null when the driver has no bulk service (upstream hfi1, hfi2). */
  useBulksvc: boolean | null;
  /** The other `bulksvc_*` parameters as the driver shows them, by name (empty without a bulk service). */
  bulksvc: Record<string, string>;
  /** The engines the bulk service owns (`hw_resources` line `bulksvc.sde a-b`, absolute, inclusive); empty when none. */
  bulkServiceEngines: number[];
  /** `num_sdma` as shown (0: every engine the chip has). */
  numSdma: number | null;
  /** `num_vls` as shown. */
  numVls: number | null;
  /** `cap_mask` as shown (`0x…`). */
  capMask: string | null;
  /** Its SDMA bit (bit 1): false means the driver sends nothing through SDMA. */
  sdmaEnabled: boolean | null;
  /** One line per setting read, naming the file (`use_bulksvc Y (sys/module/hfi1/parameters/use_bulksvc)`). */
  evidence: string[];
}

/**
 * What identifies the adapter, its driver and its host, for headers and bug reports: the RDMA
 * core's device files (`fw_ver`, `board_id`, `hw_rev`, `serial`, `boardversion`), the driver
 * module's `version` and `srcversion`, the PCI link (`current_link_speed`, `current_link_width`)
 * and the kernel release. Each field is null when its file is not there or not readable.
 */
export interface UnitContext {
  kernelRelease: string | null;
  driverVersion: string | null;
  driverSrcversion: string | null;
  fwVer: string | null;
  boardId: string | null;
  hwRev: string | null;
  serial: string | null;
  boardVersion: string | null;
  pciLinkSpeed: string | null;
  pciLinkWidth: string | null;
}

/**
 * The port's link as the RDMA core's sysfs shows it (`ports/1/state`, `phys_state`, `rate`): a
 * link that is down explains engines parked in `s20_Idle`. Names are printed without their
 * number (`4: ACTIVE` is `ACTIVE`); each field is null when its file is not readable.
 */
export interface LinkState {
  /** Logical port state: `ACTIVE`, `ARMED`, `INIT`, `DOWN`, … */
  state: string | null;
  /** Physical port state: `LinkUp`, `Polling`, `Disabled`, `Offline`, … */
  physState: string | null;
  /** The rate line as printed, e.g. `100 Gb/sec (4X EDR)`. */
  rate: string | null;
}

/**
 * One port of the adapter as the RDMA core's sysfs shows it (`ports/<port>/state`, `phys_state`, `rate`). A CN5000
 * has two ports sharing one set of engines, and its active port is often port 2; fields are null when unreadable.
 */
export interface PortLink extends LinkState {
  /** The port number (1 or 2), as in `ports/<port>/`. */
  port: number;
}

/** The port counters the tool reads, by the names the operator meets (XmitWait, XmitDiscards, …). */
export type PortCounterName =
  | 'xmitWait'
  | 'xmitData'
  | 'xmitPackets'
  | 'xmitDiscards'
  | 'linkDowned'
  | 'linkErrorRecovery'
  | 'rcvErrors'
  | 'dmaWait';

/**
 * Where a port counter was read: `debugfs` (portcounter_names + port<N>counters, the driver's own 64-bit counters),
 * `hwCounters` (sysfs ports/<N>/hw_counters, the same names), `pma` (sysfs ports/<N>/counters, the RDMA core's
 * PortCounters view, which saturates: 8 bits for LinkDowned and LinkErrorRecovery, 16 for the error counts),
 * `device` (the device counters of debugfs counters, on a one-port adapter) or `model` (the emulator).
 */
export type PortCounterSource = 'debugfs' | 'hwCounters' | 'pma' | 'device' | 'model';

/**
 * One port's counters now, cumulative since driver load (free-running; a driver reload restarts them). XmitWait
 * counts the ticks the port had data to send and no credit to send it (TxWait, chip.c port counters; the emulator
 * counts flit times); xmitData is in flits of 8 bytes (DcXmitFlits or TxWords / 2) and xmitPackets in packets.
 * LinkDowned counts the times the link went down (SwLinkDown), LinkErrorRecovery the link's retrain events,
 * rcvErrors the packets received with errors and dmaWait the times a QP or an IPoIB queue slept on an engine's
 * dmawait list for this port (n_dmawait). Each is null when no source shows it.
 */
export interface PortCounters {
  port: number;
  values: Record<PortCounterName, bigint | null>;
  /** Where each value that is not null came from. */
  sources: Partial<Record<PortCounterName, PortCounterSource>>;
  /** A value read from a source that saturates (pma) stopped at its largest value: it no longer rises. */
  saturated: PortCounterName[];
}

/** Per-engine CSR values (SEND_DMA_* per-engine CSRs, chip_registers.h), as read from the BAR or printed in the sdes header. */
export interface EngineCsrs {
  ctrl: bigint; // SEND_DMA_CTRL (sdes C)
  status: bigint; // SEND_DMA_STATUS (sdes S)
  errStatus: bigint; // SEND_DMA_ENG_ERR_STATUS (sdes E)
  hwTail: bigint; // SEND_DMA_TAIL, a ring slot (sdes T(HW))
  hwHead: bigint; // SEND_DMA_HEAD, a ring slot (sdes H(HW))
  /** *head_dma: host memory, not a register; null when read from the BAR alone (sdes H(D)). */
  headDma: bigint | null;
  memory: bigint; // SEND_DMA_MEMORY (sdes DM)
  lenGen: bigint; // SEND_DMA_LEN_GEN (sdes GL)
  reloadCnt: bigint; // SEND_DMA_RELOAD_CNT (sdes R)
  checkSlid: bigint; // SEND_DMA_CHECK_SLID (sdes SLC)
  /** SEND_DMA_DESC_FETCHED_CNT (32-bit); null when the source does not show it (sdes). */
  descFetchedCnt: bigint | null;
}

/** The software side of an engine (struct sdma_engine, sdma.h), as the sdes header (or the emulator) shows it. */
export interface EngineSoftware {
  /** descq_tail, free-running u32 (DT). */
  descqTail: number;
  /** descq_head, free-running u32 (DH). */
  descqHead: number;
  /** descq_tail & mask (T(SW)); read separately from DT on a live host, so it may disagree. */
  swTail: number;
  /** descq_head & mask (H(SW)). */
  swHead: number;
  /** tx_tail, free-running u16 (TXT). */
  txTail: number;
  /** tx_head, free-running u16 (TXH). */
  txHead: number;
  /** last_status: interrupt status bits of the last progress pass (LIS). */
  lastStatus: bigint;
  /** ahg_bits allocation bitmap (AHGI). */
  ahgBits: bigint;
  /** The flush list holds txreqs awaiting ABORTED completion (FLNE). */
  flushListNonEmpty: boolean;
  /** descq_full_count: failed placements, never reset (DQF). */
  descqFullCount: number;
}

/** Per-engine counters (the debugfs counters, debugfs.c), cumulative since driver load. 32-bit on the chip side. */
export interface EngineCounters {
  descFetched: bigint; // SDEDscFdCn<N>: descriptors the chip fetched
  sdmaInt: bigint; // SDMAInt<N>: handler calls with only the INT_REQ bit
  idleInt: bigint; // SDMAIdInt<N>: handler calls with the idle bit
  progressInt: bigint; // SDMAPrIntCn<N>: handler calls with the progress bit (no idle bit)
  errCount: bigint; // SDMAErrCt<N>: engine-error interrupts
}

/**
 * Where `seq` came from. The kernel's head-lock sequence is only visible in the emulator; a live
 * host gives 2 × (interrupt-handler passes) from the counters or /proc/interrupts, which misses
 * state events and clean-ups (the README, "The progress sequence").
 */
export type SeqSource = 'head-lock' | 'counters' | 'interrupts' | 'none';

/** One engine at one moment. Fields a source could not provide are null. */
export interface EngineSample {
  unit: number;
  engine: number;
  /** When the sample was taken, from the backend's clock (ms). */
  timeMs: number;
  /** The sources that contributed to this sample. */
  sources: SourceName[];
  /** State name as the driver prints it (the state names, sdma.c), e.g. `s99_Running`; null when unknown. */
  state: string | null;
  /** The engine's IRQ CPU (sdes CPU); null when unknown (e.g. the 22-field staging header). */
  cpu: number | null;
  csr: EngineCsrs | null;
  sw: EngineSoftware | null;
  counters: EngineCounters | null;
  /** Progress sequence, always even when taken from counters; compare only within one source. */
  seq: number | null;
  seqSource: SeqSource;
  /** The VL the engine serves (sysfs vl, sdma<N>/vl and cpu_list, sysfs.c); null when unmapped or unknown. */
  vl: number | null;
  /** User CPU list (sysfs cpu_list, sdma<N>/vl and cpu_list, sysfs.c): `empty` or a list such as `0-3,8`; null if unknown. */
  cpuList: string | null;
  /**
   * Registers read all-ones (sdma_seqfile_dump_sde, sdma.c; the BAR0 map, chip_registers.h): the device is gone. A gone engine has no state: `state`
   * is null (so it is not running), and `csr`/`sw` carry nothing that was read as all-ones.
   */
  gone: boolean;
}

/**
 * Something a source showed that the reader did not fully understand, and what it did instead
 * (an unknown trailing field in a newer driver's sdes header; a record torn by a concurrent
 * write). The known part was used; the warning says what was left out.
 */
export interface SourceWarning {
  source: SourceName;
  /** The file, under the sysroot. */
  path: string;
  /** Stable identity of the warning, so a caller can say it once (e.g. `sdes:trailing-field`). */
  key: string;
  /** One line, starting with the path (and line): what was seen, what was done instead, what to do. */
  message: string;
}

/** One descriptor of a ring listing (sdma_seqfile_dump_sde, sdma.c; the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h). */
export interface RingDescriptor {
  /** Ring slot (masked). */
  slot: number;
  /** Four characters in the order I H F L, `-` where clear. */
  flags: string;
  /** PHY_ADDR (48 bits). */
  addr: bigint;
  /** GENERATION (0–3). */
  gen: number;
  /** BYTE_COUNT. */
  len: number;
  /** AHG index and mode, where the source shows them (FIRST descriptors). */
  ahgIdx?: number;
  ahgMode?: number;
  /** The raw qwords, where the source has them (the emulator; the d0/d1 sdes variant). */
  qw0?: bigint;
  qw1?: bigint;
}

/** The descriptors between the software head and tail of one engine. */
export interface RingDump {
  unit: number;
  engine: number;
  descqCnt: number;
  /** Software head slot the listing starts at (H(SW)). */
  head: number;
  /** Software tail slot the listing stops before (T(SW)). */
  tail: number;
  descriptors: RingDescriptor[];
}

// Senders asleep waiting for ring space: QPs (iowait_sleep, qp.c), PSM writers (defer_packet_queue,
// user_sdma.c) and IPoIB transmit queues (hfi1_ipoib_sdma_sleep, ipoib_tx.c).

/** What kind of sender waits. */
export type WaiterKind = 'qp' | 'psm' | 'ipoib';

/** Which source said so. */
export type WaiterSource = 'model' | 'qp_stats' | 'proc' | 'trace' | 'kmsg' | 'sysfs';

/** What the sender waits for: the wait-list it sits on (its s_flags bit for a QP; dmawait for PSM and IPoIB). */
export type WaitFor = 'dma-desc' | 'pio' | 'pio-drain' | 'tx' | 'kmem' | 'unknown';

/** enum ib_qp_state (ib_verbs.h) by name. */
export type QpStateName = 'RESET' | 'INIT' | 'RTR' | 'RTS' | 'SQD' | 'SQE' | 'ERR';

/**
 * What the kernel says of one accelerated-IPoIB transmit queue that the netdev watchdog timed out (its subqueue
 * stopped past watchdog_timeo, 1 s for IPoIB: dev_watchdog, sch_generic.c): the driver's timeout block
 * (hfi1_ipoib_tx_timeout, ipoib_tx.c), the queue's `tx_timeout` count (net-sysfs.c) and the `hfi1_txq_*` trace events.
 * Fields the source does not show are null.
 */
export interface IpoibQueueEvidence {
  /** `stopped`: the netdev subqueue is stopped. */
  stopped: boolean | null;
  /**
   * `stops` (the reasons the subqueue is stopped for), `no_desc` (1 while it is stopped for want of SDMA descriptors,
   * hfi1_ipoib_sdma_sleep) and `ring_full` (1 while its own tx ring is full).
   */
  stops: number | null;
  noDesc: number | null;
  ringFull: number | null;
  /** `sent`, `completed` and `used` (txreqs in flight) of the queue's tx ring. */
  sent: number | null;
  completed: number | null;
  used: number | null;
  /** `wait queued`: its iowait is on a wait list (the engine's dmawait). */
  waitQueued: boolean | null;
  /** Watchdog timeouts of the queue since the netdev came up (`queues/tx-N/tx_timeout`, or the blocks counted). */
  timeouts: number | null;
  /** When the last timeout block was logged (ms, the backend's clock); null when none was seen. */
  lastTimeoutMs: number | null;
  /** Where the evidence comes from. */
  source: WaiterSource;
}

/** Who waits: a QP (QPN and state), a PSM writer (thread id and command) or an IPoIB queue. */
export type WaiterIdentity =
  | {
      kind: 'qp';
      qpn: number;
      qpState: QpStateName | null;
      /** qp_stats' PID: the thread that created the QP (0 for a kernel QP); absent where the source does not say. */
      creatorPid?: number | null;
    }
  | { kind: 'psm'; pid: number; command: string | null }
  | { kind: 'ipoib'; netdev: string | null; txq: number | null; evidence?: IpoibQueueEvidence };

/** One waiter as a backend sees it now. */
export type Waiter = WaiterIdentity & {
  waitsFor: WaitFor;
  /** Descriptors the sender needs before it can go on (its first txreq's num_desc), where the source shows it. */
  descriptorsNeeded: number | null;
  /** The engine whose list it is on, or the probable one (qp_stats recomputes it at print time); null when unknown. */
  engine: number | null;
  /** On a wait list now (qp_stats: !list_empty(&s_iowait.list)); null when the source does not say. */
  onList: boolean | null;
  /** Its own descriptors still in flight (iowait_sdma_pending); their retirement would wake it. Null when unknown. */
  ownPending: number | null;
  /** When this backend first saw it waiting (ms, the backend's clock), carried across polls by `carrySince`. */
  sinceMs: number;
  source: WaiterSource;
};

/** Whether a backend can see one kind of waiter, and if not, why and what would help. */
export interface WaiterVisibility {
  kind: WaiterKind;
  visible: boolean;
  /** The source it is seen through (absent when not visible). */
  source?: WaiterSource;
  /**
   * Visible in part: what of this kind is not seen (an IPoIB queue is seen from the kernel log only once the netdev
   * watchdog timed it out). A partly visible kind never stands for "none stranded".
   */
  partial?: string;
  /** Why it cannot be seen (absent when visible). */
  reason?: string;
  /** What the operator can do about it (absent when visible or when nothing helps). */
  fix?: string;
}

/**
 * The waiters of one unit at one moment, with what the backend can and cannot see: a kind that is
 * not visible is never reported as "no waiters".
 */
export interface WaitersSample {
  unit: number;
  /** When the waiters were read (ms, the backend's clock). */
  timeMs: number;
  waiters: Waiter[];
  /** One entry per kind (qp, psm, ipoib), visible or not and why. */
  visibility: WaiterVisibility[];
}

/**
 * Whose a QP is: the process that created it, from the kernel's resource tracking (`rdma res show qp`), else from
 * qp_stats' PID checked in /proc; what could not be known is said in `note`.
 */
export interface QpOwner {
  qpn: number;
  /** The process (thread group) id; null when not known (a kernel QP, a creator gone). */
  pid: number | null;
  /** Its command (comm) now; null when not known. */
  command: string | null;
  /** Its user: the name, else the uid as digits; null when not known. */
  user: string | null;
  /** `rdma` (rdma res show qp), `qp_stats` (its PID checked in /proc), `model` (the emulator), `recorded` (a snapshot). */
  source: 'rdma' | 'qp_stats' | 'model' | 'recorded';
  /** What could not be known, or a caveat (the creator is gone, the pid may have been reused, a kernel QP). */
  note: string | null;
}

/** A source of milliseconds. Real time by default; virtual time in the emulator and in tests. */
export interface Clock {
  nowMs(): number;
}

/** One hfi1 unit of a backend. */
export interface Unit {
  readonly info: UnitInfo;
  /**
   * One sample per requested engine (all engines when omitted), read as close together as the
   * source allows. Rejects with E_NO_ENGINE for an engine the unit does not have, E_PARSE for a
   * malformed source, E_PERMISSION / E_UNAVAILABLE when no source is readable. A device that
   * reads all-ones gives samples with `gone: true` rather than an error, so a monitor can say so.
   */
  sample(engines?: readonly number[]): Promise<EngineSample[]>;
  /** The decoded ring of one engine. Rejects with E_UNAVAILABLE when no source shows the ring. */
  ring(engine: number): Promise<RingDump>;
  /** Every distinct warning (by key) the unit's sources raised since it was opened; optional. */
  warnings?(): readonly SourceWarning[];
  /** The port's link now (read at each call); null when no source shows it. Optional. */
  link?(): Promise<LinkState | null>;
  /** Every port's link now (read at each call), by port number; empty when no source shows one. Optional. */
  links?(): Promise<PortLink[]>;
  /**
   * The senders waiting on this unit's engines now, each with `sinceMs` carried across calls
   * while it keeps waiting, and which kinds the backend can see. Optional.
   */
  waiters?(): Promise<WaitersSample>;
  /** Every port's counters now (read at each call), port 1 first; empty when no source shows them. Optional. */
  portCounters?(): Promise<PortCounters[]>;
  /**
   * The owners of these QPs (each creator's PID as qp_stats printed it, where known), one per QPN asked, in the
   * order asked. Optional; read only for the QPs a finding names, since it may run a command.
   */
  qpOwners?(qps: readonly { qpn: number; creatorPid: number | null }[]): Promise<QpOwner[]>;
}

/**
 * A recording played back (a snapshot) instead of a live source. Every unit's sample() returns
 * the current recorded instant, with its capture time (ms from the first instant) as `timeMs`;
 * advance() moves every unit to the next instant. Nothing moves between instants, so a
 * recording of one instant supports no time-based verdict (stall, rate).
 */
export interface Recording {
  /** The snapshot as the user named it. */
  readonly source: string;
  /** Capture times of the recorded instants, ms from the first; length 1 is a frozen capture. */
  readonly timesMs: readonly number[];
  /** Index of the instant that sample() returns now. */
  position(): number;
  /** Move every unit to the next instant; resolves false (and does not move) at the end. */
  advance(): Promise<boolean>;
}

/** Where a backend's numbers come from, for headers and JSON: a host, when it was captured, by what. */
export interface BackendOrigin {
  /** The host's name as recorded (a snapshot's manifest) or read; null when unknown. */
  host: string | null;
  /** When the recording started (epoch ms); null for a live source. */
  capturedAtMs: number | null;
  /** The hfi1-sdma version that captured it; null for a live source. */
  toolVersion: string | null;
  /** The numbers come from the emulator (an emulated sysroot, or a capture of one), not an adapter. */
  emulated: boolean;
}

/** A set of units: a live host, a sysroot, or the emulator. */
export interface Backend {
  readonly kind: BackendKind;
  /** Present when the samples are played back from a recording (a snapshot), not read live. */
  readonly recording?: Recording;
  /** Where the numbers come from, where the backend knows more than its kind. Optional. */
  readonly origin?: BackendOrigin;
  /**
   * Its units are not adapters (the emulator, an emulated sysroot or a capture of one), as on every `UnitInfo`.
   * Every backend of this package says so either way; absent (a backend of someone else's) means adapters.
   */
  readonly emulated?: boolean;
  /** Every unit found. Empty (not an error) when there is none. */
  units(): Promise<UnitInfo[]>;
  /**
   * One unit, by number (the N of hfi1_N / hfi2_N) or by name (`hfi2_0`); rejects with E_NO_DEVICE when it does
   * not exist, or when a number is shared by units of two modules (hfi1_0 and hfi2_0): then only the name selects.
   */
  unit(unit: number | string): Promise<Unit>;
  /** Release mappings and handles. Safe to call twice. */
  close(): Promise<void>;
}
