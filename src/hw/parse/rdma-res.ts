// What `rdma -j res show qp` (iproute2's rdma-resource, from the kernel's resource tracking over netlink) says of
// each QP: its device, port, QPN, type, state and, for a user QP, the pid of the task that created it and its
// command; a kernel QP has a command (the module, e.g. ib_core) and no pid, or pid 0 in older iproute2. Pure.

/** One QP as rdma lists it. */
export interface RdmaQp {
  /** The RDMA device (ifname), e.g. hfi1_0. */
  device: string;
  port: number | null;
  qpn: number;
  type: string | null;
  state: string | null;
  /** The creating task's pid; null for a kernel QP. */
  pid: number | null;
  /** The task's command, or the kernel owner's name. */
  command: string | null;
}

/** The answer, and how many entries were not QPs as rdma prints them (counted, skipped). */
export interface RdmaQpList {
  qps: RdmaQp[];
  skipped: number;
}

/** The most of rdma's answer that is parsed (about 100,000 QPs). */
export const RDMA_ANSWER_CAP_BYTES = 32 << 20;

const uint = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null);
const text = (v: unknown): string | null => (typeof v === 'string' && v.length <= 256 ? v : null);

/**
 * Parse the JSON array `rdma -j res show qp` prints (one object per QP; an empty answer is no QP). Throws a
 * SyntaxError with the reason for text that is not such an array.
 */
export function parseRdmaResQp(answer: string): RdmaQpList {
  if (answer.trim() === '') return { qps: [], skipped: 0 };
  const v: unknown = JSON.parse(answer);
  if (!Array.isArray(v)) throw new SyntaxError('not a JSON array of QPs');
  const qps: RdmaQp[] = [];
  let skipped = 0;
  for (const e of v) {
    const o = typeof e === 'object' && e !== null && !Array.isArray(e) ? (e as Record<string, unknown>) : null;
    const device = text(o?.ifname);
    const qpn = uint(o?.lqpn);
    if (!o || device === null || qpn === null || qpn > 0xff_ffff) {
      skipped++;
      continue;
    }
    const pid = uint(o.pid);
    qps.push({
      device,
      port: uint(o.port),
      qpn,
      type: text(o.type),
      state: text(o.state),
      pid: pid === 0 ? null : pid,
      command: text(o.comm),
    });
  }
  return { qps, skipped };
}
