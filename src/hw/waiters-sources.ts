// The waiter sources of a unit for UnitInfo.sources and `doctor`: debugfs qp_stats, the /proc scan for PSM writers,
// and the hfi1_usdma_* trace events. Probing only reads.
import { join } from 'node:path';
import type { SourceStatus } from '../backend.js';
import type { FoundUnit } from './discover.js';
import { errnoCode, type HwFs } from './fsio.js';
import { NO_PROCESSES } from './waiters-psm.js';
import { qpStatsUnreadable, ROOT_FIX } from './waiters-qp.js';
import { usdmaTraceStatus } from './waiters-trace.js';

/** qp_stats: readable, or why not (debugfs not mounted, not root, lockdown, no qp_stats on this driver). */
export async function qpStatsStatus(fs: HwFs, u: FoundUnit): Promise<SourceStatus> {
  const file = u.paths.qpStats;
  try {
    await fs.canRead(file);
    return { source: 'qpStats', readable: true, path: file };
  } catch (e) {
    const why = await qpStatsUnreadable(fs, u.paths, e);
    return {
      source: 'qpStats',
      readable: false,
      path: file,
      reason: why.reason ?? 'cannot read',
      ...(why.fix ? { fix: why.fix } : {}),
    };
  }
}

/** The /proc scan: readable when /proc lists processes and their fds and kernel stacks can be read (root). */
export async function procPsmStatus(fs: HwFs, u: FoundUnit): Promise<SourceStatus> {
  const dir = u.paths.procDir;
  let pids: string[];
  try {
    pids = (await fs.readdir(dir)).filter((n) => /^[1-9][0-9]*$/.test(n));
  } catch {
    return {
      source: 'procPsm',
      readable: false,
      path: dir,
      reason: `no ${dir} here (procfs not mounted?)`,
      fix: 'mount -t proc proc /proc',
    };
  }
  // pid 1 belongs to root: if its fds and stack can be read, every process's can.
  const probe = pids.includes('1') ? '1' : pids[0];
  if (probe === undefined) return { source: 'procPsm', readable: false, path: dir, reason: NO_PROCESSES(dir) };
  try {
    await fs.readdir(join(dir, probe, 'fd'));
    await fs.canRead(join(dir, probe, 'stack'));
    return { source: 'procPsm', readable: true, path: dir };
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'EACCES' || code === 'EPERM') {
      return {
        source: 'procPsm',
        readable: false,
        path: dir,
        reason:
          "the open files and kernel stacks of other users' processes are shown to root only: blocked PSM writers cannot be seen",
        fix: ROOT_FIX,
      };
    }
    return { source: 'procPsm', readable: true, path: dir };
  }
}

/** The sources that show waiters, in the order doctor lists them. */
export async function waiterSources(fs: HwFs, u: FoundUnit): Promise<SourceStatus[]> {
  const { dir: _dir, ...trace } = await usdmaTraceStatus(fs, u.paths);
  return [await qpStatsStatus(fs, u), await procPsmStatus(fs, u), trace];
}
