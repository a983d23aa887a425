// Whose the emulated QPs are: each QP sender belongs to a process of its own (pid 30000 + its id, the thread that
// created the QP being the process's main thread), run by the emulated job user. What a live host shows of that
// is rendered too: the PID in qp_stats (qp-stats.ts), /proc/<pid>/comm and status, the user in etc/passwd, and
// the answer `rdma -j res show qp` gives (iproute2 over the kernel's resource tracking) as a file in the tree's
// .hfi1-sdma directory, where the reader looks under a sysroot since it runs no command there.
import { join } from 'node:path';
import type { QpOwner } from '../backend.js';
import type { Sender } from './sender.js';
import type { TreeWriter } from './tree.js';
import { EMU_PID_UNIT_STRIDE, EMU_QP_PID_BASE, EMU_QPN_BASE, senderQpn, senderQpState } from './waiters.js';

/** The user the emulated jobs run as. */
export const EMU_JOB_USER = { name: 'hpcuser', uid: 1001 };

/** PID of the process (and creating thread) of the QP sender `id` of unit `unit`. */
export function emuQpOwnerPid(id: number, unit = 0): number {
  return EMU_QP_PID_BASE + unit * EMU_PID_UNIT_STRIDE + id;
}

/** Command of the QP sender `id`'s process. */
export function emuQpCommand(id: number): string {
  return `verbs_rank_${id}`;
}

/** The PID of the process of a QP sender: the one a seed named, else the emulator's. */
export function senderQpOwnerPid(s: Sender, unit = 0): number {
  return s.identity?.pid ?? emuQpOwnerPid(s.id, unit);
}

/** The command of a QP sender's process: the one a seed named, else verbs_rank_<id>. */
export function senderQpCommand(s: Sender): string {
  return s.identity?.command ?? emuQpCommand(s.id);
}

/** The user a sender's process runs as: the one a seed named, else the emulated job user. */
export function senderUser(s: Sender): string {
  return s.identity?.user ?? EMU_JOB_USER.name;
}

/** The QP sender of QPN `qpn`, or undefined. */
function qpSender(senders: readonly Sender[], qpn: number): Sender | undefined {
  const s = senders[qpn - EMU_QPN_BASE];
  if (s?.spec.kind === 'qp' && senderQpn(s) === qpn) return s;
  return senders.find((x) => x.spec.kind === 'qp' && senderQpn(x) === qpn);
}

/** The owners of these QPs, from the model (a QPN of no QP sender: not known). */
export function modelQpOwners(senders: readonly Sender[], qpns: readonly number[], unit = 0): QpOwner[] {
  return qpns.map((qpn) => {
    const s = qpSender(senders, qpn);
    if (s === undefined) {
      return { qpn, pid: null, command: null, user: null, source: 'model', note: 'no such QP in the emulator' };
    }
    return {
      qpn,
      pid: senderQpOwnerPid(s, unit),
      command: senderQpCommand(s),
      user: senderUser(s),
      source: 'model',
      note: null,
    };
  });
}

/** The users of the unit's processes with their uids: the emulated job user, then each other user a seed named. */
export function jobUsers(senders: readonly Sender[]): { name: string; uid: number }[] {
  const users = [EMU_JOB_USER];
  for (const s of senders) {
    const name = s.identity?.user;
    if (name === undefined || users.some((u) => u.name === name)) continue;
    users.push({ name, uid: name === 'root' ? 0 : EMU_JOB_USER.uid + users.length });
  }
  return users;
}

/** /proc/<pid>/status as the kernel prints the fields a reader of owners uses (the rest left out). */
function statusText(pid: number, command: string, uid: number): string {
  return `Name:\t${command}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t${pid}\nNgid:\t0\nPid:\t${pid}\nPPid:\t1\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\nGid:\t${uid}\t${uid}\t${uid}\t${uid}\n`;
}

/**
 * The PD number of QP sender `rank` (counted among the unit's QP senders): the resource tracker numbers a device's PDs
 * from 0 as they are made (rdma_restrack_add), the kernel's first (a choice: the MAD agent's and IPoIB's, one each
 * per port), then one per process, each QP sender being a process of its own.
 */
export function emuPdn(rank: number, ports = 1): number {
  return 2 * ports + rank;
}

/**
 * The QPs `rdma -j res show qp` prints for the unit: QP0 and QP1 (the kernel's), then each QP sender, keys in the
 * order res_qp_line (iproute2 rdma/res-qp.c) prints them; `pdn` only for a user QP (fill_res_qp_entry, nldev.c).
 */
export function rdmaResQps(device: string, ifindex: number, senders: readonly Sender[], unit = 0, ports = 1): object[] {
  const kernel = (lqpn: number, type: string) => ({
    ifindex,
    ifname: device,
    port: 1,
    lqpn,
    type,
    state: 'RTS',
    'sq-psn': 0,
    comm: 'ib_core',
  });
  const qps: object[] = [kernel(0, 'SMI'), kernel(1, 'GSI')];
  let rank = 0;
  for (const s of senders) {
    if (s.spec.kind !== 'qp') continue;
    qps.push({
      ifindex,
      ifname: device,
      port: 1,
      lqpn: senderQpn(s),
      rqpn: senderQpn(s),
      type: 'RC',
      state: senderQpState(s),
      'rq-psn': 0,
      'sq-psn': 0,
      'path-mig-state': 'MIGRATED',
      pdn: emuPdn(rank++, ports),
      pid: senderQpOwnerPid(s, unit),
      comm: senderQpCommand(s),
    });
  }
  return qps;
}

/** The JSON `rdma -j res show qp` prints for the unit's QPs. */
export function rdmaResQpText(device: string, ifindex: number, senders: readonly Sender[], unit = 0, ports = 1): string {
  return `${JSON.stringify(rdmaResQps(device, ifindex, senders, unit, ports))}\n`;
}

/** Each tree's answer by device: `rdma` answers for every device of the host at once, so units rendered into one tree share it. */
const answers = new Map<string, Map<string, object[]>>();

/** Forget the unit `device`'s part of the answer of the tree at `root` (its writer is closed). */
export function forgetRdmaAnswer(root: string, device: string): void {
  const byDevice = answers.get(root);
  byDevice?.delete(device);
  if (byDevice?.size === 0) answers.delete(root);
}

/** Write the QP owners' /proc entries, etc/passwd and the rdma answer of the unit into the tree. */
export function writeQpOwners(w: TreeWriter, device: string, unit: number, senders: readonly Sender[], ports = 1): void {
  const ifindex = unit + 1; // the RDMA device's index, as the emulator numbers its devices
  const users = jobUsers(senders);
  for (const s of senders) {
    if (s.spec.kind !== 'qp') continue;
    const pid = senderQpOwnerPid(s, unit);
    const dir = join('proc', String(pid));
    const uid = users.find((u) => u.name === senderUser(s))?.uid ?? EMU_JOB_USER.uid;
    w.file(join(dir, 'comm'), `${senderQpCommand(s)}\n`);
    w.file(join(dir, 'status'), statusText(pid, senderQpCommand(s), uid));
  }
  const lines = users
    .filter((u) => u.name !== 'root')
    .map((u, i) => `${u.name}:x:${u.uid}:${u.uid}:${i === 0 ? 'HPC job user' : ''}:/home/${u.name}:/bin/bash\n`);
  w.file('etc/passwd', `root:x:0:0:root:/root:/bin/bash\n${lines.join('')}`);
  let byDevice = answers.get(w.root);
  if (!byDevice) {
    byDevice = new Map();
    answers.set(w.root, byDevice);
  }
  byDevice.set(device, rdmaResQps(device, ifindex, senders, unit, ports));
  const all = [...byDevice.keys()].sort().flatMap((d) => byDevice.get(d) ?? []);
  w.file('.hfi1-sdma/rdma-res-qp.json', `${JSON.stringify(all)}\n`);
}
