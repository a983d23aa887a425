// The QP waiters of a live unit from debugfs qp_stats (qp_iter_print, hfi1 qp.c): read through the hardened reader,
// parsed with the file's s_flags layout decided first, mapped with qpWaiters. A file that cannot be read or parsed
// makes the qp kind "not visible" with its reason, never "no waiters".
import type { WaiterVisibility } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { qpWaiters, type Waiter } from '../progress/waiters.js';
import { errnoCode, type HwFs, oddFileReason, readdirOrNull, readError } from './fsio.js';
import { parseQpStats, type QpStatsFile, type SFlagsLayout } from './parse/qp-stats.js';
import type { UnitPaths } from './paths.js';
import { lockdownMode } from './sources.js';
import type { QpStatsMemo } from './waiters-qp-memo.js';
import type { WarningLog } from './warnings.js';

/** The most qp_stats may hold: about 100,000 QPs of the longest (IFS, with TID RDMA continuation lines) records. */
export const QP_STATS_CAP_BYTES = 100_000 * 1024;

export const ROOT_FIX = 'run as root (e.g. sudo hfi1-sdma …)';
const MOUNT_FIX = 'mount debugfs: mount -t debugfs none /sys/kernel/debug';

/** The s_flags layout a kernel release implies (layout C from v4.14 on, B from v4.6, A before), or undefined. */
export function layoutOfRelease(release: string | null): SFlagsLayout | undefined {
  const m = release === null ? null : /^(\d+)\.(\d+)/.exec(release.trim());
  if (!m) return undefined;
  const v = Number(m[1]) * 1000 + Number(m[2]);
  // UNSURE: the B to C switch lies between v4.12 and v4.14; v4.14 and later are read as C.
  if (v >= 4014) return 'C';
  if (v >= 4006) return 'B';
  return 'A';
}

/** Why qp_stats cannot be read here, and the fix: debugfs not mounted, not root, lockdown, no qp_stats on this driver. */
export async function qpStatsUnreadable(fs: HwFs, p: UnitPaths, e: unknown): Promise<Omit<WaiterVisibility, 'kind'>> {
  const file = p.qpStats;
  const odd = await oddFileReason(fs, file, e);
  if (odd !== null) return { visible: false, reason: `${file}: ${odd}` };
  const code = errnoCode(e);
  if (code === 'EACCES')
    return { visible: false, reason: 'debugfs qp_stats is readable by root only (debugfs is mode 0700)', fix: ROOT_FIX };
  if (code === 'EPERM') {
    const mode = await lockdownMode(fs, p.lockdown);
    return {
      visible: false,
      reason: `the kernel refused to read qp_stats (EPERM): kernel lockdown restricts debugfs${mode ? ` (lockdown mode: ${mode})` : ''}`,
      fix: 'boot without kernel lockdown (Secure Boot off, or lockdown=none)',
    };
  }
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    const root = await readdirOrNull(fs, p.debugRoot);
    if (root === null || root.length === 0)
      return { visible: false, reason: `debugfs is not mounted at ${p.debugRoot}`, fix: MOUNT_FIX };
    const dir = await readdirOrNull(fs, p.debugDir);
    if (dir === null) {
      return {
        visible: false,
        reason: `debugfs has no ${p.debugDir}: the ${p.module} driver is not loaded or was built without debugfs`,
        fix: `load the ${p.module} driver (modprobe ${p.module}) on a kernel with CONFIG_DEBUG_FS`,
      };
    }
    return { visible: false, reason: `no qp_stats in ${p.debugDir}: this driver does not provide it` };
  }
  if (isHfi1SdmaError(e)) return { visible: false, reason: e.message.split('\n')[0] as string };
  return { visible: false, reason: readError(e, file).message };
}

/** What one read of qp_stats gives: the waiting QPs (sinceMs = now) and the qp kind's visibility. */
export interface QpWaitersRead {
  waiters: Waiter[];
  visibility: WaiterVisibility;
}

/** Record a parsed file's tear, trailing fields and undecided layout as warnings (each once). */
export function noteQpStats(log: WarningLog, file: string, f: QpStatsFile): void {
  const t = f.trailing;
  if (t) {
    log.add({
      source: 'qpStats',
      path: file,
      key: 'qpStats:trailing-fields',
      message: `${file}:${t.line}: fields after the last known one that this version does not know (${JSON.stringify(t.text.slice(0, 80))}, on ${t.count} line${t.count === 1 ? '' : 's'}; a newer driver?): the known fields are used`,
    });
  }
  if (f.torn) {
    log.add({
      source: 'qpStats',
      path: file,
      key: 'qpStats:torn',
      message: `${f.torn.error.message.split('\n')[0]}: that QP is left out this time (an unlocked read cut short); the complete lines are used`,
    });
  }
  if (f.layout?.ambiguous) {
    log.add({
      source: 'qpStats',
      path: file,
      key: 'qpStats:layout',
      message: `${file}: the s_flags layout is not certain: ${f.layout.evidence}`,
    });
  }
}

/** Read qp_stats once at `nowMs`: the waiting QPs, or "not visible" with why (a parse error is also a warning). */
export async function readQpWaiters(
  fs: HwFs,
  p: UnitPaths,
  log: WarningLog,
  nowMs: number,
  layoutHint?: SFlagsLayout,
  memo?: QpStatsMemo,
): Promise<QpWaitersRead> {
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(p.qpStats, QP_STATS_CAP_BYTES);
  } catch (e) {
    const why =
      errnoCode(e) === 'EFBIG' ? { visible: false, reason: readError(e, p.qpStats).message } : await qpStatsUnreadable(fs, p, e);
    return { waiters: [], visibility: { kind: 'qp', ...why } };
  }
  let parsed: QpStatsFile;
  try {
    const opts = { file: p.qpStats, ...(layoutHint ? { layoutHint } : {}) };
    parsed = memo ? memo.parse(bytes, opts) : parseQpStats(bytes, opts);
  } catch (e) {
    const first = (e as Error).message.split('\n')[0] as string;
    log.add({
      source: 'qpStats',
      path: p.qpStats,
      key: 'qpStats:malformed',
      message: `${first}; the QP waiters cannot be shown`,
    });
    return {
      waiters: [],
      visibility: {
        kind: 'qp',
        visible: false,
        reason: `qp_stats is malformed: ${first}`,
        fix: "check the tree, or report the driver's qp_stats format",
      },
    };
  }
  noteQpStats(log, p.qpStats, parsed);
  return { waiters: qpWaiters(parsed.records, nowMs), visibility: { kind: 'qp', visible: true, source: 'qp_stats' } };
}
