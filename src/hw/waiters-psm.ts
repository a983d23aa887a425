// PSM writers blocked in the user SDMA request (hfi1_user_sdma_process_request, user_sdma.c) of one unit, seen
// through /proc under the sysroot: the processes holding /dev/hfi1_<u> (readlink of /proc/<pid>/fd/<n> only; the
// device is never opened), on hfi2 an SDMA handle tied to hfi2_<u> by the process's uverbs fds (the ibdev of
// sys/class/infiniband_verbs/uverbs<N>; a handle whose unit cannot be told counts for every unit), then each thread's stack, syscall, wchan and comm, decided by psmVerdict. Bounded: a full
// scan of /proc at most every RESCAN_MS (between them only the known holders are looked at again: their fd links at
// most every RECHECK_MS, their threads at every sample), at most MAX_PIDS processes and SCAN_BUDGET_MS of real time
// per scan.
import { dirname, join } from 'node:path';
import type { WaiterVisibility } from '../backend.js';
import { ParseError } from '../errors.js';
import type { Waiter } from '../progress/waiters.js';
import { errnoCode, type HwFs } from './fsio.js';
import { deviceFdUnit, hfi2HandleUnits, type PsmModule, psmVerdict, uverbsIndex } from './parse/proc-psm.js';
import { isEmulatedSysroot } from './paths.js';
import { ROOT_FIX } from './waiters-qp.js';
import type { WarningLog } from './warnings.js';

/** A full scan of /proc (every pid's fd links) at most this often; between scans only known holders are read. */
export const RESCAN_MS = 5000;
/**
 * The known holders' fd links are read again at most this often between full scans; their threads' stack and system
 * call are read at every sample, and only a thread they show blocked in the user SDMA request on the device's fd is a
 * waiter, so links a second old add no false one. At 10 Hz, reading the links at every sample was a sixth of a
 * sample's work.
 */
export const RECHECK_MS = 1000;
/** At most this many processes per scan, this many fds per process, this many threads per holder. */
export const MAX_PIDS = 65_536;
export const MAX_FDS = 65_536;
export const MAX_TIDS = 4096;
/** Real time one scan may take before it stops (the rest is reported as not seen). */
export const SCAN_BUDGET_MS = 250;
/** stack, syscall, wchan and comm are a few hundred bytes. */
const PROC_FILE_CAP_BYTES = 64 * 1024;

const NUMERIC = /^(0|[1-9][0-9]{0,9})$/;

/** Why a tree whose proc directory lists no process shows no PSM writer. */
export const NO_PROCESSES = (procDir: string) =>
  `${procDir} lists no process (a recorded tree, not a live /proc): PSM writers cannot be seen`;

/** Options of a scan: the real-time source for the budget (tests pass their own), the bounds. */
export interface PsmScanOptions {
  elapsedMs?: () => number;
  budgetMs?: number;
  maxPids?: number;
}

/** The scanner of one unit: keeps the holders between full scans. */
export class PsmScanner {
  private holders = new Map<number, { fd: number; target: string }[]>();
  private lastFullMs: number | null = null;
  /** When the holders' fd links were last read (a full scan reads them too). */
  private lastCheckMs: number | null = null;
  /** What the last full scan could not read: a process whose fds were denied, or the bound it stopped at. */
  private fdDenied: number | null = null;
  private stopped: string | null = null;
  /** What each /dev/infiniband/uverbs<N> is (read again at each full scan: devices come and go). */
  private ibdev = new Map<number, string | null>();

  constructor(
    private readonly fs: HwFs,
    private readonly procDir: string,
    private readonly unit: number,
    private readonly log: WarningLog,
    private readonly opts: PsmScanOptions = {},
    /** hfi2 writers hold an hfi2 SDMA handle and sleep in hfi2_user_sdma_process_request (proc-psm.ts). */
    private readonly module: PsmModule = 'hfi1',
    /** sys/class/infiniband_verbs under the sysroot: which RDMA device each uverbs<N> is (hfi2 only). */
    private readonly verbsDir = join(procDir, '..', 'sys/class/infiniband_verbs'),
  ) {}

  /** The fd links of one process to this unit's device, or 'denied' / null (gone, or a link). */
  private async deviceFds(pid: number): Promise<{ fd: number; target: string }[] | 'denied' | null> {
    const dir = join(this.procDir, String(pid));
    let names: string[];
    try {
      names = await this.fs.readdir(join(dir, 'fd'));
    } catch (e) {
      return errnoCode(e) === 'EACCES' || errnoCode(e) === 'EPERM' ? 'denied' : null;
    }
    const links: { fd: number; target: string }[] = [];
    for (const name of names.slice(0, MAX_FDS)) {
      if (!NUMERIC.test(name)) continue;
      // readlink only: the link names the device, nothing is opened through it.
      const target = await this.fs.readlink(join(dir, 'fd', name)).catch(() => null);
      if (target !== null && deviceFdUnit(target, this.module) !== null) links.push({ fd: Number(name), target });
    }
    if (this.module === 'hfi1') return links.filter((l) => deviceFdUnit(l.target, 'hfi1') === this.unit);
    if (links.length === 0) return links;
    // hfi2: no handle names its unit; the process's uverbs fds say which units it opened.
    for (const l of links) {
      const n = uverbsIndex(l.target);
      if (n !== null && !this.ibdev.has(n)) this.ibdev.set(n, await this.readIbdev(n));
    }
    const units = hfi2HandleUnits(
      links.map((l) => l.target),
      (n) => this.ibdev.get(n) ?? null,
    );
    if (units !== 'any' && !units.has(`hfi2_${this.unit}`)) return [];
    // This unit's handles: the anonymous SDMA files, and the uverbs fds of this unit or of an unknown device.
    return links.filter((l) => {
      const n = uverbsIndex(l.target);
      if (n === null) return true;
      const dev = this.ibdev.get(n) ?? null;
      return dev === null || dev === `hfi2_${this.unit}`;
    });
  }

  /** The RDMA device of /dev/infiniband/uverbs<n> (its sysfs ibdev), or null when that cannot be read. */
  private async readIbdev(n: number): Promise<string | null> {
    const path = join(this.verbsDir, `uverbs${n}`, 'ibdev');
    try {
      const name = Buffer.from(await this.fs.readFile(path, 256))
        .toString('latin1')
        .trim();
      return /^[\w.-]{1,64}$/.test(name) ? name : null;
    } catch {
      return null;
    }
  }

  /** A small /proc file's text, 'denied', or null (absent, gone, or not the kernel's: under a sysroot, outside it). */
  private async text(path: string): Promise<string | null | 'denied'> {
    try {
      return Buffer.from(await this.fs.readFile(path, PROC_FILE_CAP_BYTES)).toString('utf8');
    } catch (e) {
      const code = errnoCode(e);
      return code === 'EACCES' || code === 'EPERM' ? 'denied' : null;
    }
  }

  /** Scan at `nowMs` (the backend's clock): the blocked writers of this unit (engine unknown) and the psm visibility. */
  async scan(nowMs: number): Promise<{ waiters: Waiter[]; visibility: WaiterVisibility }> {
    const started = this.opts.elapsedMs?.() ?? performance.now();
    const elapsed = () => (this.opts.elapsedMs?.() ?? performance.now()) - started;
    const budget = this.opts.budgetMs ?? SCAN_BUDGET_MS;
    if (this.lastFullMs === null || nowMs - this.lastFullMs >= RESCAN_MS) {
      this.ibdev.clear();
      let entries: string[];
      try {
        entries = await this.fs.readdir(this.procDir);
      } catch {
        return this.none(`no ${this.procDir} here (procfs not mounted?)`, 'mount -t proc proc /proc');
      }
      const maxPids = this.opts.maxPids ?? MAX_PIDS;
      const pids = entries.filter((n) => NUMERIC.test(n)).map(Number);
      // A live /proc always lists processes (pid 1 at least); a tree without any (a snapshot) shows no writers.
      if (pids.length === 0) {
        // The emulator lists every PSM writer it runs, blocked or not: none listed is none running; a snapshot that
        // listed /proc recorded every process holding the device, so none recorded is none holding it.
        if (isEmulatedSysroot(dirname(this.procDir)) || this.fs.recordedProcScan === true)
          return { waiters: [], visibility: { kind: 'psm', visible: true, source: 'proc' } };
        return this.none(NO_PROCESSES(this.procDir));
      }
      let fdDenied: number | null = null;
      let stopped: string | null = null;
      if (pids.length > maxPids) stopped = `${pids.length} processes, more than the ${maxPids} a scan reads`;
      const found = new Map<number, { fd: number; target: string }[]>();
      for (const pid of pids.slice(0, maxPids)) {
        if (elapsed() > budget) {
          stopped = `the scan of ${this.procDir} took more than ${budget} ms`;
          break;
        }
        const fds = await this.deviceFds(pid);
        if (fds === 'denied') fdDenied ??= pid;
        else if (fds && fds.length > 0) found.set(pid, fds);
      }
      this.holders = found;
      this.lastFullMs = nowMs;
      this.lastCheckMs = nowMs;
      this.fdDenied = fdDenied;
      this.stopped = stopped;
    } else if (this.lastCheckMs === null || nowMs - this.lastCheckMs >= RECHECK_MS || nowMs < this.lastCheckMs) {
      this.lastCheckMs = nowMs;
      for (const pid of [...this.holders.keys()]) {
        const fds = await this.deviceFds(pid);
        if (fds === 'denied' || fds === null || fds.length === 0) this.holders.delete(pid);
        else this.holders.set(pid, fds);
      }
    }
    const waiters: Waiter[] = [];
    let stackDenied: string | null = null;
    for (const [pid, fds] of this.holders) {
      const pidDir = join(this.procDir, String(pid));
      const taskNames = await this.fs.readdir(join(pidDir, 'task')).catch(() => null);
      const tids =
        taskNames === null
          ? [pid]
          : taskNames
              .filter((n) => NUMERIC.test(n))
              .map(Number)
              .slice(0, MAX_TIDS);
      for (const tid of tids) {
        const dir = taskNames === null ? pidDir : join(pidDir, 'task', String(tid));
        // The syscall first: a thread that is running (most of the time) is not blocked, and its
        // stack, wchan and comm need not be read at every sample.
        const syscall = await this.text(join(dir, 'syscall'));
        if (syscall === 'denied') {
          stackDenied ??= join(dir, 'syscall');
          continue;
        }
        if (syscall?.startsWith('running')) continue;
        const [stack, wchan, comm] = await Promise.all(['stack', 'wchan', 'comm'].map((f) => this.text(join(dir, f))));
        if (stack === 'denied') stackDenied ??= join(dir, 'stack');
        const seen = (t: string | null | 'denied' | undefined) => (t === 'denied' || t === undefined ? null : t);
        let v: ReturnType<typeof psmVerdict>;
        try {
          v = psmVerdict({
            pid: tid,
            comm: seen(comm),
            fds,
            stack: seen(stack),
            syscall: seen(syscall),
            wchan: seen(wchan),
            dir,
            module: this.module,
            unit: this.unit,
          });
        } catch (e) {
          if (!(e instanceof ParseError)) throw e;
          this.log.add({
            source: 'procPsm',
            path: dir,
            key: `procPsm:malformed:${tid}`,
            message: `${e.message.split('\n')[0]}; this thread is left out`,
          });
          continue;
        }
        if (v.blocked !== true) continue;
        waiters.push({
          kind: 'psm',
          pid: tid,
          command: v.command,
          waitsFor: 'dma-desc',
          descriptorsNeeded: null,
          engine: null,
          onList: null,
          ownPending: null,
          sinceMs: nowMs,
          source: 'proc',
        });
      }
    }
    if (stackDenied !== null) {
      return this.none(
        `${stackDenied} needs root (the kernel shows a thread's stack and system call to root only; kernel.yama.ptrace_scope=3 hides them even from root)`,
        ROOT_FIX,
        waiters,
      );
    }
    if (this.fdDenied !== null) {
      return this.none(
        `${join(this.procDir, String(this.fdDenied), 'fd')} is not readable: the open files of other users' processes are shown to root only`,
        ROOT_FIX,
        waiters,
      );
    }
    if (this.stopped !== null)
      return this.none(`${this.stopped}; writers of the processes not read are not seen`, undefined, waiters);
    return { waiters, visibility: { kind: 'psm', visible: true, source: 'proc' } };
  }

  private none(reason: string, fix?: string, waiters: Waiter[] = []): { waiters: Waiter[]; visibility: WaiterVisibility } {
    return { waiters, visibility: { kind: 'psm', visible: false, reason, ...(fix ? { fix } : {}) } };
  }
}
