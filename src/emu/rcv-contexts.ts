// The receive contexts an emulated unit uses, by the rule of set_up_context_variables (chip.c): the kernel's
// (n_krcvqs + 1, the control context with DEFAULT_KRCVQS 2: 3), one user context per real CPU of the device's node
// (num_user_contexts −1) and, with AIP in cap_mask, the accelerated-IPoIB netdev's: the fewest of the node's CPUs, the
// contexts left and HFI1_MAX_NETDEV_CTXTS 8 (hfi1_num_netdev_contexts, netdev_rx.c). The emulated host's CPUs are one
// NUMA node without SMT siblings (a choice).
//
// The Cornelis hfi1 and hfi2 keep these per port (hw_resources_show, sysfs.c: `p%d.rctxt`, `p%d.firstbulksvc`,
// `p%d.firstdyn`, `p%d.nkrcvq`, `p%d.nbulksvc`, `p%d.nnetdev`, `p%d.nuctxts`, `p%d.rcvary`); how they split the chip's
// contexts between two ports is not in the public sources. Chosen here: each port in use gets the kernel's contexts,
// bulksvc_num_rctx for the bulk service when it is on (between the kernel's and the dynamic ones, as
// bulksvc_loan_rctxts takes first_bulksvc_alloc_ctxt up to first_dyn_alloc_ctxt), the netdev's and an equal share of
// the user contexts, one port after the other from context 0; its RcvArray base is its share of the chip's entries.

/** DEFAULT_KRCVQS + 1 (chip.c): the kernel's receive contexts, the control context included. */
const KERNEL_CONTEXTS = 3;
/** HFI1_MAX_NETDEV_CTXTS (netdev.h). */
const MAX_NETDEV_CONTEXTS = 8;
/** HFI1_CAP_AIP (common.h): bit 19 of cap_mask. */
const CAP_AIP = 1 << 19;
/** The chip's receive contexts and RcvArray entries (hw_resources' device lines `rctxt 0-159`, `rcvary 0-65535`). */
export const CHIP_RCV_CONTEXTS = 160;
export const CHIP_RCVARRAY_ENTRIES = 65536;

/** One port's receive contexts, as hw_resources prints them. */
export interface PortContexts {
  /** The port's index from 0. */
  pidx: number;
  /** null: the port is not used (`p%d not used`). */
  base: number | null;
  kernel: number;
  bulksvc: number;
  netdev: number;
  user: number;
  rcvArrayBase: number;
}

/** What the plan depends on. */
export interface ContextHost {
  cpus: number;
  capMask: number;
  /** The ports of the adapter and those in use (from 1). */
  ports: number;
  activePorts: readonly number[];
  /** Receive contexts per port the bulk service takes (bulksvc_num_rctx), 0 when it is off. */
  bulksvcContexts: number;
}

/** The unit's receive contexts port by port. */
export function portContexts(h: ContextHost): PortContexts[] {
  const used = h.activePorts.length;
  const netdev = (h.capMask & CAP_AIP) !== 0 ? Math.min(h.cpus, MAX_NETDEV_CONTEXTS) : 0;
  const user = Math.floor(h.cpus / Math.max(1, used));
  let next = 0;
  const out: PortContexts[] = [];
  for (let pidx = 0; pidx < h.ports; pidx++) {
    const rcvArrayBase = (pidx * CHIP_RCVARRAY_ENTRIES) / h.ports;
    if (!h.activePorts.includes(pidx + 1)) {
      out.push({ pidx, base: null, kernel: 0, bulksvc: 0, netdev: 0, user: 0, rcvArrayBase });
      continue;
    }
    const p = { pidx, base: next, kernel: KERNEL_CONTEXTS, bulksvc: h.bulksvcContexts, netdev, user, rcvArrayBase };
    next += p.kernel + p.bulksvc + p.netdev + p.user;
    out.push(p);
  }
  return out;
}

/** The unit's receive contexts in use in all (dd->num_rcv_contexts: its RcvHdrOvr<ctx> port counters, init_cntrs, chip.c). */
export function usedContexts(ports: readonly PortContexts[]): number {
  return ports.reduce((n, p) => n + p.kernel + p.bulksvc + p.netdev + p.user, 0);
}
