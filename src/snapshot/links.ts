// What a snapshot records of the evidence that lives in links: the PSM writers' /proc/<pid> (the fd links that tie a
// process to the device, and each thread's syscall, stack, wchan and comm) and the unit's IPoIB netdevs under
// sys/class/net (their `device` link names the adapter; type, dev_port and each queue's tx_timeout beside it). A
// snapshot never holds a link (extract.ts): the files are captured as files, the links' targets as text in
// RECORDED_LINKS of the instant, and a replay answers readlink (and lists the fd directories) from that record, so
// the live reader finds the writers and the queues in a capture as on the host. Bounded: at most MAX_HOLDERS
// processes, MAX_TASKS threads each, SCAN_BUDGET_MS of real time per instant; the files count against the context cap.
import { basename, join, relative } from 'node:path';
import type { FoundUnit } from '../hw/discover.js';
import type { HwFs } from '../hw/fsio.js';
import { deviceFdUnit, uverbsIndex } from '../hw/parse/proc-psm.js';

/** The instant's record of the links, beside the files. */
export const RECORDED_LINKS = '.hfi1-sdma/links.json';

/** At most this many processes holding a device are recorded per instant, this many threads of each. */
export const MAX_HOLDERS = 256;
export const MAX_TASKS = 64;
/** Real time the scan of /proc may take per instant. */
export const SCAN_BUDGET_MS = 250;
/** The most a record may hold (a few hundred links of ~40 bytes). */
export const LINKS_CAP_BYTES = 1 << 20;

/** The files of a PSM writer's thread that the live reader reads (waiters-psm.ts). */
const TASK_FILES = ['syscall', 'stack', 'wchan', 'comm'] as const;
/** The files of an IPoIB netdev that the live reader reads (waiters-ipoib.ts). */
const NETDEV_FILES = ['type', 'dev_port'] as const;

/** The record of one instant: link path (relative to the sysroot) → its target, and the directories listed. */
export interface LinksRecord {
  links: Record<string, string>;
  /**
   * The directories the capture listed (`proc`, `sys/class/net`): a replay lists them, empty where nothing of theirs
   * was kept, so no process holding the device (no netdev of the unit) then reads as none, not as "cannot be seen".
   */
  listed: string[];
}

const NUMERIC = /^(0|[1-9][0-9]{0,9})$/;

/** What one instant records: the record, and the files (absolute paths) to capture with it. */
export interface LinkEvidence {
  record: LinksRecord;
  files: string[];
  /** Why some were left out (a bound reached), or null. */
  note: string | null;
}

/** Find the evidence of `units` under `sysroot`: the device holders in /proc, the IPoIB netdevs in sys/class/net. */
export async function linkEvidence(
  sysroot: string,
  units: readonly FoundUnit[],
  fs: HwFs,
  elapsedMs: () => number = () => performance.now(),
): Promise<LinkEvidence> {
  const rel = (p: string) => relative(sysroot, p);
  const links: Record<string, string> = {};
  const files: string[] = [];
  let note: string | null = null;
  const procDir = units[0]?.paths.procDir ?? join(sysroot, 'proc');
  const listed: string[] = [];
  const procNames = await fs.readdir(procDir).catch(() => null);
  const pids = (procNames ?? []).filter((n) => NUMERIC.test(n));
  // A live /proc always lists processes (pid 1 at least): one that lists none is no /proc (a recorded tree).
  if (pids.length > 0) listed.push(rel(procDir));
  const started = elapsedMs();
  let holders = 0;
  const uverbs = new Set<number>();
  for (const pid of pids) {
    if (holders >= MAX_HOLDERS || elapsedMs() - started > SCAN_BUDGET_MS) {
      note = `the scan of ${procDir} stopped after ${holders} device holder(s) (at most ${MAX_HOLDERS}, ${SCAN_BUDGET_MS} ms)`;
      break;
    }
    const fdDir = join(procDir, pid, 'fd');
    const fds = await fs.readdir(fdDir).catch(() => null);
    if (fds === null) continue;
    let held = false;
    for (const fd of fds.filter((n) => NUMERIC.test(n))) {
      const target = await fs.readlink(join(fdDir, fd)).catch(() => null);
      if (target === null || (deviceFdUnit(target, 'hfi1') === null && deviceFdUnit(target, 'hfi2') === null)) continue;
      links[rel(join(fdDir, fd))] = target;
      held = true;
      const n = uverbsIndex(target);
      if (n !== null) uverbs.add(n);
    }
    if (!held) continue;
    holders += 1;
    const dir = join(procDir, pid);
    const tasks = (await fs.readdir(join(dir, 'task')).catch(() => null))?.filter((n) => NUMERIC.test(n)) ?? null;
    // The reader reads each thread's files, or the process's own where it lists no task directory.
    if (tasks === null) for (const f of TASK_FILES) files.push(join(dir, f));
    else {
      files.push(join(dir, 'comm'));
      for (const tid of tasks.slice(0, MAX_TASKS)) for (const f of TASK_FILES) files.push(join(dir, 'task', tid, f));
    }
  }
  const verbsDir = units[0]?.paths.verbsDir ?? join(sysroot, 'sys/class/infiniband_verbs');
  for (const n of uverbs) files.push(join(verbsDir, `uverbs${n}`, 'ibdev'));
  const pcis = new Set(units.map((u) => u.pci).filter((p) => p !== ''));
  const netDir = units[0]?.paths.netDir ?? join(sysroot, 'sys/class/net');
  const netdevs = await fs.readdir(netDir).catch(() => null);
  if (netdevs !== null) listed.push(rel(netDir));
  for (const name of netdevs ?? []) {
    const link = join(netDir, name, 'device');
    const target = await fs.readlink(link).catch(() => null);
    if (target === null || !pcis.has(basename(target))) continue;
    links[rel(link)] = target;
    for (const f of NETDEV_FILES) files.push(join(netDir, name, f));
    const queues = ((await fs.readdir(join(netDir, name, 'queues')).catch(() => null)) ?? []).filter((q) =>
      /^tx-\d{1,4}$/.test(q),
    );
    for (const q of queues) files.push(join(netDir, name, 'queues', q, 'tx_timeout'));
  }
  return { record: { links, listed }, files, note };
}

/** Parse a recorded links file; null when it is not one (a damaged record is as none). */
export function parseLinksRecord(text: string): LinksRecord | null {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null) return null;
    const o = v as { links?: unknown; listed?: unknown };
    if (typeof o.links !== 'object' || o.links === null || Array.isArray(o.links)) return null;
    const links: Record<string, string> = {};
    for (const [k, t] of Object.entries(o.links as Record<string, unknown>)) {
      // Only the kinds of link recorded here, with plain relative paths and targets as the kernel writes them.
      if (typeof t !== 'string' || !/^[\x20-\x7e]{1,4096}$/.test(t)) continue;
      const fd =
        /^proc\/\d{1,10}\/fd\/\d{1,10}$/.test(k) && (deviceFdUnit(t, 'hfi1') !== null || deviceFdUnit(t, 'hfi2') !== null);
      if (fd || /^sys\/class\/net\/[\w.:-]{1,64}\/device$/.test(k)) links[k] = t;
    }
    const listed = Array.isArray(o.listed) ? o.listed.filter((d): d is string => d === 'proc' || d === 'sys/class/net') : [];
    return { links, listed };
  } catch {
    return null;
  }
}

/**
 * The file system of a replayed instant: `fs`, with readlink answered from the record (and a directory that holds
 * recorded links listing them): what the capture read through the links, read back the same way.
 */
export function recordedLinksFs(fs: HwFs, sysroot: string, record: LinksRecord): HwFs {
  const byDir = new Map<string, string[]>();
  for (const k of Object.keys(record.links)) {
    const dir = join(sysroot, k, '..');
    byDir.set(dir, [...(byDir.get(dir) ?? []), basename(k)]);
  }
  for (const d of record.listed) byDir.set(join(sysroot, d), byDir.get(join(sysroot, d)) ?? []);
  const recorded = (p: string) => record.links[relative(sysroot, p)];
  return {
    ...fs,
    readFile: (p, cap) => fs.readFile(p, cap),
    canRead: (p) => fs.canRead(p),
    async readlink(p) {
      const t = recorded(p);
      return t ?? fs.readlink(p);
    },
    async readdir(p) {
      const extra = byDir.get(join(p));
      const own = await fs.readdir(p).catch((e) => {
        if (extra === undefined) throw e;
        return [] as string[];
      });
      if (extra === undefined) return own;
      return [...new Set([...own, ...extra])];
    },
    recordedProcScan: record.listed.includes('proc'),
  };
}
