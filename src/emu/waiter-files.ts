// What a live host shows of the emulated senders: debugfs `qp_stats` for the QPs (qp_iter_print, hfi1 qp.c, in the
// current upstream format, written by qp-stats.ts; special QPs first and then the hash buckets as rvt_qp_iter_next
// walks them), and, for each
// PSM writer blocked in hfi1_user_sdma_process_request (user_sdma.c), what /proc shows of it: comm, an fd on
// /dev/hfi1_<unit>, its kernel stack, its system call (writev on that fd) and its wchan.
import { join } from 'node:path';
import { HFI2_SDMA_ANON_INODE, userSdmaRequestFn, WRITEV_NR } from '../progress/kernel-names.js';
import { senderQpOwnerPid } from './qp-owners.js';
import { type QpLineFields, qpStatsLine } from './qp-stats.js';
import type { Sender } from './sender.js';
import type { TreeWriter } from './tree.js';
import { EMU_QP_STATE, QP_STATE_NUMBERS, senderPsmCommand, senderPsmPid, senderQpn, senderQpState } from './waiters.js';

/** RVT_S_WAIT_DMA_DESC in the current s_flags layout (rdmavt_qp.h): set by iowait_sleep (qp.c) while on dmawait. */
export const RVT_S_WAIT_DMA_DESC = 0x1000;
/** rdmavt's default qp_table_size (256 buckets): the iterator slot of a QP is 2 × ports + its bucket. */
const QP_TABLE_BITS = 8;
const SPECIALS = 2; // one port: QP0 and QP1
/** The fd a PSM writer holds /dev/hfi1_<unit> on. */
export const EMU_PSM_FD = 11;
/** The fd of an hfi2 writer's uverbs device. */
export const EMU_VERBS_FD = 10;

/** hash_32 (linux/hash.h): the bucket rvt_insert_qp puts a QPN in. */
export function hash32(value: number, bits: number): number {
  return Math.imul(value >>> 0, 0x61c88647) >>> (32 - bits);
}

/** The qp_stats lines of the unit: QP0 (SMI, no engine), QP1 (GSI), then every QP sender. */
export function qpStatsText(senders: readonly Sender[], firstEngine = 0, unit = 0): string {
  const base = { refcount: 1, state: EMU_QP_STATE, sFlags: 0, sdmaPending: 0, pioPending: 0, onList: false, pid: 0 };
  const lines: QpLineFields[] = [
    { ...base, slot: 0, idle: true, qpn: 0, type: 'SMI', engine: null, sendContext: 0 },
    { ...base, slot: 1, idle: true, qpn: 1, type: 'GSI', engine: firstEngine, sendContext: 1 },
  ];
  const qps: QpLineFields[] = [];
  for (const s of senders) {
    if (s.spec.kind !== 'qp') continue;
    const w = s.wait;
    const onList = w.queuedOn !== null;
    const qpn = senderQpn(s);
    qps.push({
      ...base,
      state: QP_STATE_NUMBERS[senderQpState(s)],
      slot: SPECIALS + hash32(qpn, QP_TABLE_BITS),
      idle: s.outstanding === 0 && !onList,
      qpn,
      refcount: onList ? 2 : 1, // iowait_sleep holds a reference while queued
      type: 'RC',
      sFlags: onList ? RVT_S_WAIT_DMA_DESC : 0,
      sdmaPending: w.sdmaBusy,
      onList,
      engine: s.engine.idx,
      sendContext: 2,
      pid: senderQpOwnerPid(s, unit),
    });
  }
  // Buckets in order; in one bucket the newest QP first (rvt_insert_qp links at the head).
  qps.sort((a, b) => a.slot - b.slot || b.qpn - a.qpn);
  return [...lines, ...qps].map(qpStatsLine).join('');
}

/** The PSM writers blocked now (asleep on an engine's dmawait). */
export function blockedWriters(senders: readonly Sender[]): Sender[] {
  return senders.filter((s) => s.spec.kind === 'psm' && s.wait.queuedOn !== null);
}

/**
 * /proc/<pid>/stack of a writer blocked in the user SDMA request of `module` (a current x86_64 kernel, addresses
 * hidden): hfi1's request function under hfi1_write_iter, or its hfi2_ rename under hfi2's write_iter.
 */
export function blockedStack(module: 'hfi1' | 'hfi2'): string {
  const fn = userSdmaRequestFn(module);
  const iter = module === 'hfi2' ? 'hfi2_sdma_write_iter' : 'hfi1_write_iter';
  return [
    `[<0>] ${fn}+0x5b1/0xb10 [${module}]`,
    `[<0>] ${iter}+0xb6/0x170 [${module}]`,
    '[<0>] do_iter_readv_writev+0x13e/0x1c0',
    '[<0>] do_iter_write+0x80/0x190',
    '[<0>] vfs_writev+0x83/0x140',
    '[<0>] do_writev+0x6b/0x110',
    '[<0>] do_syscall_64+0x5b/0x80',
    '[<0>] entry_SYSCALL_64_after_hwframe+0x63/0xcd',
    '',
  ].join('\n');
}

/** The hfi1 stack, computed once (every refresh writes it). */
export const BLOCKED_STACK = blockedStack('hfi1');
const HFI2_BLOCKED_STACK = blockedStack('hfi2');

/** /proc/<pid>/syscall of a writer in writev(fd, iov, 2) on x86_64: number, six arguments, stack and program counter. */
export function blockedSyscall(fd: number): string {
  return `${WRITEV_NR.x86_64} 0x${fd.toString(16)} 0x7ffd5c8a1e40 0x2 0x0 0x0 0x0 0x7ffd5c8a1de8 0x7f3a9d2c1b8f\n`;
}

/**
 * Write /proc/<pid> of every PSM writer, as a live host shows its processes whether they are blocked
 * or not: comm and the fd on the device once, and the stack, syscall and wchan of a writer blocked
 * in the user SDMA request, or of one running. Only what changed is written; a writer that is gone
 * has its directory removed (`shown` holds the PIDs written last time and is updated).
 */
export function writePsmProc(
  w: TreeWriter,
  unit: number,
  senders: readonly Sender[],
  shown: Set<number>,
  module: 'hfi1' | 'hfi2' = 'hfi1',
): void {
  const hfi2 = module === 'hfi2';
  const now = new Set<number>();
  const blocked = new Set(blockedWriters(senders));
  for (const s of senders) {
    if (s.spec.kind !== 'psm') continue;
    const pid = senderPsmPid(s, unit);
    now.add(pid);
    const dir = join('proc', String(pid));
    if (!shown.has(pid)) {
      w.file(join(dir, 'comm'), `${senderPsmCommand(s)}\n`);
      w.link(join(dir, 'fd', String(EMU_PSM_FD)), hfi2 ? HFI2_SDMA_ANON_INODE : `/dev/hfi1_${unit}`);
      // An hfi2 writer got its SDMA file through an ioctl on the unit's uverbs device, which it keeps open.
      if (hfi2) w.link(join(dir, 'fd', String(EMU_VERBS_FD)), `/dev/infiniband/uverbs${unit}`);
    }
    const isBlocked = blocked.has(s);
    w.file(join(dir, 'stack'), isBlocked ? (hfi2 ? HFI2_BLOCKED_STACK : BLOCKED_STACK) : '');
    w.file(join(dir, 'syscall'), isBlocked ? blockedSyscall(EMU_PSM_FD) : 'running\n');
    w.file(join(dir, 'wchan'), isBlocked ? userSdmaRequestFn(module) : '0');
  }
  for (const pid of shown) if (!now.has(pid)) w.removeDir(join('proc', String(pid)));
  shown.clear();
  for (const pid of now) shown.add(pid);
}
