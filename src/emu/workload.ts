// Named, parameterised workloads: which senders (QP, PSM or IPoIB) run on which engines, how large
// their packets are, how many descriptors a packet takes, and how much load they offer.
// `NAME[:key=value,…]`, e.g. `mixed:load=0.8`, `line-rate:gbps=50`, `qp:size=64-2048,window=128`, `mixed:ipoib=1`.
//
// IPoIB senders are the transmit queues of the port's accelerated-IPoIB netdev, which has one queue per SDMA engine
// of the unit (hfi1_ipoib_rn_get_params, ipoib_main.c: txqs = num_sdma). Queue q sends on the engine the driver
// selects for it, sdma_select_engine_sc(dd, q, sc5) (hfi1_ipoib_send_dma_common, ipoib_tx.c): engine q & mask of
// the map of the packets' VL. Their SL (key `sl`, default 0, the usual IPoIB broadcast group's) maps to SC and VL
// through the driver's default tables (SL n to SC n; SC 0-7 to VL 0-7, SC 15 to VL 15, the others to VL 0:
// init_sc2vl_tables, chip.c), so by default every queue sends on VL 0's engines. Key `ipoib=N` makes queues 0 to
// N−1 send (the `ipoib` workload: all of them).
import { usageError } from '../errors.js';
import { selectEngineVl, type VlMap } from '../progress/select.js';

/** One sender of a workload. */
export interface SenderSpec {
  kind: 'qp' | 'psm' | 'ipoib';
  /** QP number (QPs) or a selector (PSM, IPoIB), used with `vl` to pick the engine as sdma_select_engine_vl (sdma.c) does. */
  selector: number;
  vl: number;
  /** Packet payload sizes in bytes, chosen uniformly from [lo, hi] in steps of `step`. */
  sizeLo: number;
  sizeHi: number;
  step: number;
  /** Header bytes: one kvaddr descriptor before the payload. */
  header: number;
  /** Largest payload fragment (one page descriptor each). */
  frag: number;
  /** Most packets outstanding (submitted, not completed). */
  window: number;
  /** Offered load as a fraction of the engine's byte rate; Infinity for a greedy sender. */
  load: number;
}

/** A workload: its senders and the chip's rates. */
export interface Workload {
  name: string;
  senders: SenderSpec[];
  /** Link rate of the unit in Gb/s, shared equally by the engines. */
  gbps: number;
  /** Descriptors per second one engine can complete (fetch limit). */
  descPerSec: number;
}

interface Params {
  load: number;
  /** Engine e offers load × (1 − spread + 2 × spread × ((7e mod 16) / 15)): engines differ. */
  spread: number;
  qps: number;
  psms: number;
  /** Accelerated-IPoIB transmit queues that send, from queue 0 (key `ipoib`; −1: every queue of the netdev). */
  ipoibs: number;
  /** The SL of the IPoIB packets (key `sl`). */
  sl: number;
  window: number;
  sizeLo: number;
  sizeHi: number;
  frag: number;
  gbps: number;
}

const BASE: Record<string, { describe: string; p: Params }> = {
  mixed: {
    describe: 'per engine one QP and one PSM sender, 256 B–10 KiB packets, offered load from 9% to 111% of the engine (default)',
    p: {
      load: 0.6,
      spread: 0.85,
      qps: 1,
      psms: 1,
      ipoibs: 0,
      sl: 0,
      window: 512,
      sizeLo: 256,
      sizeHi: 10240,
      frag: 4096,
      gbps: 100,
    },
  },
  'line-rate': {
    describe: 'per engine two greedy QPs, 8 KiB packets as header + payload (2 descriptors), 100 Gb/s',
    p: {
      load: Number.POSITIVE_INFINITY,
      spread: 0,
      qps: 2,
      psms: 0,
      ipoibs: 0,
      sl: 0,
      window: 1024,
      sizeLo: 8128,
      sizeHi: 8128,
      frag: 16384,
      gbps: 100,
    },
  },
  qp: {
    describe: 'per engine two QPs, 64 B–4 KiB packets, half the link',
    p: { load: 0.5, spread: 0, qps: 2, psms: 0, ipoibs: 0, sl: 0, window: 256, sizeLo: 64, sizeHi: 4096, frag: 4096, gbps: 100 },
  },
  psm: {
    describe: 'per engine two PSM queues submitting batches of 8, 4–10 KiB packets, over-subscribed',
    p: {
      load: 1.5,
      spread: 0,
      qps: 0,
      psms: 2,
      ipoibs: 0,
      sl: 0,
      window: 512,
      sizeLo: 4096,
      sizeHi: 10240,
      frag: 4096,
      gbps: 100,
    },
  },
  small: {
    describe: 'per engine one greedy QP of 1–64 byte packets (a pad descriptor for odd lengths)',
    p: {
      load: Number.POSITIVE_INFINITY,
      spread: 0,
      qps: 1,
      psms: 0,
      ipoibs: 0,
      sl: 0,
      window: 256,
      sizeLo: 1,
      sizeHi: 64,
      frag: 4096,
      gbps: 100,
    },
  },
  ipoib: {
    describe:
      "every transmit queue of the accelerated-IPoIB netdev (one per SDMA engine; v5.9+; they sleep on dmawait like a QP and stop their netdev subqueue) on the engines the driver selects for them (sl=0: VL 0's), 256 B–4 KiB packets, over-subscribed",
    p: {
      load: 1.5,
      spread: 0,
      qps: 0,
      psms: 0,
      ipoibs: -1,
      sl: 0,
      window: 1024,
      sizeLo: 256,
      sizeHi: 4096,
      frag: 4096,
      gbps: 100,
    },
  },
  idle: {
    describe: 'no senders: every engine running with an empty ring',
    p: { load: 0, spread: 0, qps: 0, psms: 0, ipoibs: 0, sl: 0, window: 1, sizeLo: 64, sizeHi: 64, frag: 4096, gbps: 100 },
  },
};

/** The workload names and what each does. */
export const WORKLOADS: readonly { name: string; describe: string }[] = Object.entries(BASE).map(([name, w]) => ({
  name,
  describe: w.describe,
}));

/** The default workload of `--backend emu`. */
export const DEFAULT_WORKLOAD = 'mixed';

const KEYS = ['load', 'spread', 'qps', 'psms', 'ipoib', 'sl', 'window', 'size', 'frag', 'gbps'] as const;

function bad(spec: string, why: string): never {
  const names = WORKLOADS.map((w) => w.name).join(', ');
  throw usageError(
    `--workload ${JSON.stringify(spec)}: ${why}. Use NAME[:key=value,…] with NAME one of ${names} and keys ${KEYS.join(', ')} (size=LO-HI bytes, load=fraction or "max")`,
  );
}

function num(spec: string, key: string, v: string, lo: number, hi: number): number {
  const n = v === 'max' && key === 'load' ? Number.POSITIVE_INFINITY : Number(v);
  const max = v === 'max' && key === 'load'; // a greedy sender: no upper bound
  if (Number.isNaN(n) || n < lo || (n > hi && !max)) bad(spec, `${key} must be from ${lo} to ${hi}, got ${JSON.stringify(v)}`);
  return n;
}

/** SL → VL through the driver's default tables: SL n is SC n; SC 0-7 are VL 0-7, SC 15 VL 15, the rest VL 0 (init_sc2vl_tables, chip.c). */
export function defaultSlToVl(sl: number): number {
  return sl < 8 ? sl : sl === 15 ? 15 : 0;
}

/**
 * Parse a workload spec and lay its senders out over `engines` engines with the VL map; `txQueues` is the IPoIB
 * netdev's transmit queue count (num_sdma: the unit's engines, the bulk service's included; default `engines`).
 */
export function parseWorkload(spec: string, engines: number, map: VlMap, numVls: number, txQueues = engines): Workload {
  const [name = '', rest] = spec.split(':', 2) as [string, string | undefined];
  const base = BASE[name];
  if (!base) bad(spec, `unknown workload ${JSON.stringify(name)}`);
  const p: Params = { ...base.p };
  for (const kv of rest ? rest.split(',') : []) {
    const [k = '', v = ''] = kv.split('=', 2);
    if (k === 'size') {
      const m = /^(\d+)(?:-(\d+))?$/.exec(v);
      if (!m) bad(spec, `size must be BYTES or LO-HI, got ${JSON.stringify(v)}`);
      p.sizeLo = num(spec, 'size', m[1] ?? '', 1, 16000);
      p.sizeHi = m[2] ? num(spec, 'size', m[2], p.sizeLo, 16000) : p.sizeLo;
    } else if (k === 'load') p.load = num(spec, k, v, 0, 100);
    else if (k === 'spread') p.spread = num(spec, k, v, 0, 1);
    else if (k === 'qps' || k === 'psms') p[k] = num(spec, k, v, 0, 64);
    else if (k === 'ipoib') p.ipoibs = num(spec, k, v, 0, txQueues);
    else if (k === 'sl') p.sl = num(spec, k, v, 0, 31);
    else if (k === 'window') p.window = num(spec, k, v, 1, 65536);
    else if (k === 'frag') p.frag = num(spec, k, v, 64, 16383);
    else if (k === 'gbps') p.gbps = num(spec, k, v, 0.001, 10000);
    else bad(spec, `unknown key ${JSON.stringify(k)}`);
  }
  if (!Number.isInteger(p.sl)) bad(spec, `sl must be an integer, got ${JSON.stringify(String(p.sl))}`);
  const ipoibs = p.ipoibs < 0 ? txQueues : p.ipoibs;
  if (!Number.isInteger(ipoibs)) bad(spec, `ipoib must be an integer, got ${JSON.stringify(String(p.ipoibs))}`);
  const senders: SenderSpec[] = [];
  // The load is the engine's, shared by its QPs, its PSM writers and (when any sends) an IPoIB queue.
  const perEngine = p.qps + p.psms + (ipoibs > 0 ? 1 : 0);
  const perSender = perEngine > 0 ? p.load / perEngine : 0;
  const spreadOf = (e: number) => 1 - p.spread + 2 * p.spread * (((7 * e) % 16) / 15);
  // One sender of each kind per engine and per count: selector and VL chosen so that sdma_select_engine_vl's (sdma.c)
  // selection lands on that engine (VL v owns its engines in ascending order).
  for (let e = 0; e < engines; e++) {
    const load = perSender * spreadOf(e);
    const common = { sizeLo: p.sizeLo, sizeHi: p.sizeHi, step: 64, header: 64, frag: p.frag, window: p.window, load };
    const vl = map.engineToVl[e] ?? 0;
    const elem = map.map[vl & map.mask];
    const slot = elem ? elem.engines.indexOf(e) : 0;
    for (let q = 0; q < p.qps; q++)
      senders.push({ kind: 'qp', selector: slot + q * 16 * (elem ? elem.mask + 1 : 1), vl, ...common });
    for (let q = 0; q < p.psms; q++)
      senders.push({ kind: 'psm', selector: slot + q * 16 * (elem ? elem.mask + 1 : 1), vl, ...common });
  }
  // The IPoIB queues, in queue order (the unit numbers them so): queue q selects with selector q on its SL's VL, and
  // offers a sender's load spread by its queue index (the queues share the few engines of one VL).
  const ipoibVl = defaultSlToVl(p.sl);
  for (let q = 0; q < ipoibs; q++) {
    const load = perSender * spreadOf(q);
    const common = { sizeLo: p.sizeLo, sizeHi: p.sizeHi, step: 64, header: 64, frag: p.frag, window: p.window, load };
    senders.push({ kind: 'ipoib', selector: q, vl: ipoibVl, ...common });
  }
  for (const s of senders) {
    if (selectEngineVl(map, s.selector, s.vl, numVls) < 0) bad(spec, 'no engine for a sender');
  }
  return { name, senders, gbps: p.gbps, descPerSec: 20_000_000 };
}
