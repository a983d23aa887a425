// What /proc shows of a PSM writer blocked in the user SDMA request (hfi1_user_sdma_process_request, user_sdma.c,
// reached by a writev on /dev/hfi1_<N> through hfi1_write_iter, file_ops.c; on hfi2 a writev on its SDMA handle): its fd links, its kernel stack
// (proc_pid_stack, fs/proc/base.c), its syscall (proc_pid_syscall), its wchan (proc_pid_wchan) and comm.
// Pure: each input is a file's text, or null when it is absent or unreadable (permission is modelled as absence).
import { type ProcArch, USER_SDMA_REQUEST_FN, userSdmaRequestFn, WRITEV_NR } from '../../progress/kernel-names.js';
import { boundedText, errorAt } from './text.js';

export { type ProcArch, USER_SDMA_REQUEST_FN, userSdmaRequestFn, WRITEV_NR };

/** The modules whose writers are looked for. */
export type PsmModule = 'hfi1' | 'hfi2';

/**
 * Whether an fd link target is a user-SDMA handle of `module`: hfi1 `/dev/hfi1_<N>` (its unit N); hfi2 has no
 * per-unit device: v2 hands out an anonymous `hfi2-sdma` file (shown as `anon_inode:hfi2-sdma`, the name
 * anon_inode_getfd gives by convention: a choice), v1 and the March 2026 postings write on the uverbs fd
 * (`/dev/infiniband/uverbs<N>`). Neither names the unit by itself: the result is 'any', and the scanner ties the
 * handle to a unit through the process's uverbs fds (hfi2HandleUnits). null when the target is not such a handle.
 */
export function deviceFdUnit(target: string, module: PsmModule): number | 'any' | null {
  if (module === 'hfi1') return hfi1DeviceUnit(target);
  return /^anon_inode:\[?hfi2-sdma\]?$/.test(target) || uverbsIndex(target) !== null ? 'any' : null;
}

/** N of a `/dev/infiniband/uverbs<N>` link target (with ` (deleted)`), or null. */
export function uverbsIndex(target: string): number | null {
  const m = /^\/dev\/infiniband\/uverbs(0|[1-9][0-9]{0,2})(?: \(deleted\))?$/.exec(target);
  return m ? Number(m[1]) : null;
}

/**
 * Which hfi2 units one process's SDMA handles belong to, from its fd targets and what each uverbs<N> is (the RDMA
 * device named by sys/class/infiniband_verbs/uverbs<N>/ibdev; null when that cannot be read). A uverbs fd of an
 * hfi2 unit is a handle of that unit; one of another device (mlx5_0) is no handle; one whose device is unknown is a
 * handle of any unit. The anonymous hfi2-sdma file was handed out through one of the process's uverbs fds, so it
 * belongs to the hfi2 units those name, or to any unit when they name none. 'any': the unit cannot be told.
 */
export function hfi2HandleUnits(targets: readonly string[], ibdevOf: (uverbs: number) => string | null): Set<string> | 'any' {
  const named = new Set<string>();
  let unknown = false;
  let anon = false;
  for (const t of targets) {
    const n = uverbsIndex(t);
    if (n === null) {
      if (deviceFdUnit(t, 'hfi2') === 'any') anon = true;
      continue;
    }
    const dev = ibdevOf(n);
    if (dev === null) unknown = true;
    else if (/^hfi2_(0|[1-9][0-9]{0,2})$/.test(dev)) named.add(dev);
  }
  if (unknown) return 'any';
  if (anon && named.size === 0) return 'any';
  return named;
}

/** The unit of a `/dev/hfi1_<N>` link target (with the ` (deleted)` d_path adds for an unlinked node), or null. */
export function hfi1DeviceUnit(target: string): number | null {
  const m = /^\/dev\/hfi1_(0|[1-9][0-9]{0,2})(?: \(deleted\))?$/.exec(target);
  return m ? Number(m[1]) : null;
}

/** One frame of a kernel stack: `[<addr>] symbol+0xoff/0xsize [module]`, or a raw address. */
export interface StackFrame {
  symbol: string | null;
  offset: number | null;
  module: string | null;
}

const FRAME =
  /^\[<([0-9a-f]{1,16})>\] (?:([A-Za-z_.$][\w.$]*)\+0x([0-9a-f]{1,8})\/0x[0-9a-f]{1,8}(?: \[([\w-]+)\])?|0x[0-9a-f]{1,16})$/;

/** Parse /proc/<pid>/stack (`[<0>] %pB` per frame since the addresses were hidden; `[<%pK>] %pS` before). */
export function parseProcStack(text: string, file = 'stack'): StackFrame[] {
  const frames: StackFrame[] = [];
  let at = 0;
  for (const line of text.split('\n')) {
    if (line === '' && at + 1 >= text.length) break;
    const m = FRAME.exec(line);
    if (!m) throw errorAt(file, text, at, "expected a stack frame '[<address>] symbol+0xoffset/0xsize [module]'");
    frames.push({ symbol: m[2] ?? null, offset: m[3] === undefined ? null : Number.parseInt(m[3], 16), module: m[4] ?? null });
    at += line.length + 1;
  }
  return frames;
}

/** /proc/<pid>/syscall: `running`, or the number with its six arguments (or, when blocked outside a syscall, -1). */
export type ProcSyscall = { running: true } | { running: false; nr: number; args: bigint[] };

/** Parse /proc/<pid>/syscall (proc_pid_syscall, fs/proc/base.c). */
export function parseProcSyscall(text: string, file = 'syscall'): ProcSyscall {
  const line = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (line === 'running') return { running: true };
  const parts = line.split(' ');
  const nr = /^-?(0|[1-9][0-9]{0,5})$/.test(parts[0] ?? '') ? Number(parts[0]) : null;
  const hexes = parts.slice(1);
  const ok = nr !== null && hexes.every((h) => /^0x[0-9a-f]{1,16}$/.test(h)) && hexes.length === (nr < 0 ? 2 : 8);
  if (!ok || line.includes('\n')) {
    throw errorAt(file, text, 0, "expected 'running', '<nr> 0x<sp> 0x<pc>' (nr < 0) or '<nr>' and eight 0x values");
  }
  return { running: false, nr, args: nr < 0 ? [] : hexes.slice(0, 6).map((h) => BigInt(h)) };
}

/** What /proc shows of one thread (each field null when its file is absent or unreadable). */
export interface PsmProcInput {
  pid: number;
  /** /proc/<pid>/comm. */
  comm: string | null;
  /** readlink of each /proc/<pid>/fd/<n>. */
  fds: readonly { fd: number; target: string }[] | null;
  /** /proc/<pid>/task/<tid>/stack (root only since the kernel-stack restriction). */
  stack: string | null;
  /** /proc/<pid>/task/<tid>/syscall. */
  syscall: string | null;
  /** /proc/<pid>/wchan (no newline; `0` when hidden or on kernels whose unwinder cannot tell). */
  wchan: string | null;
  arch?: ProcArch;
  /** The process directory, for messages (e.g. /proc/4711). */
  dir?: string;
  /** The module whose writers are looked for (hfi1 by default). */
  module?: PsmModule;
  /** The unit scanned: an hfi2 handle does not name its unit, so it is taken to be this one. */
  unit?: number;
}

/** The verdict: blocked in the user SDMA request on hfi1_<unit>, not blocked, or cannot tell (what is missing). */
export type PsmVerdict = {
  pid: number;
  command: string | null;
  /** Units whose /dev/hfi1_<N> it holds open. */
  units: number[];
  evidence: string[];
} & (
  | { blocked: true; unit: number | null; fd: number | null }
  | { blocked: false; why: string }
  | { blocked: null; missing: string[] }
);

/** Decide whether a thread is a PSM writer blocked in the user SDMA request. Throws ParseError on a malformed file. */
export function psmVerdict(input: PsmProcInput): PsmVerdict {
  const dir = input.dir ?? `/proc/${input.pid}`;
  // Any process may name itself (PR_SET_NAME): its control characters are escaped, never printed as they are.
  const command = input.comm === null ? null : boundedText(input.comm.replace(/\n$/, ''), 64);
  const base = { pid: input.pid, command, units: [] as number[], evidence: [] as string[] };
  if (input.fds === null) return { ...base, blocked: null, missing: [`${dir}/fd`] };
  const module = input.module ?? 'hfi1';
  const fn = userSdmaRequestFn(module);
  const handleName = module === 'hfi1' ? '/dev/hfi1_N' : 'hfi2 SDMA handle (anon_inode:hfi2-sdma, /dev/infiniband/uverbsN)';
  const hfi1 = input.fds.flatMap(({ fd, target }) => {
    const found = deviceFdUnit(target, module);
    if (found === null) return [];
    return [{ fd, unit: found === 'any' ? (input.unit ?? null) : found, target }];
  });
  base.units = [...new Set(hfi1.flatMap((h) => (h.unit === null ? [] : [h.unit])))].sort((a, b) => a - b);
  if (hfi1.length === 0) return { ...base, blocked: false, why: `holds no ${handleName} open` };
  base.evidence.push(...hfi1.map((h) => `fd ${h.fd} -> ${h.target}`));
  let unit: number | null = base.units.length === 1 ? (base.units[0] as number) : null;
  let fd: number | null = hfi1.length === 1 ? (hfi1[0]?.fd ?? null) : null;
  const missing: string[] = [];
  if (input.syscall === null) missing.push(`${dir}/syscall`);
  else {
    const sc = parseProcSyscall(input.syscall, `${dir}/syscall`);
    if (sc.running) return { ...base, blocked: false, why: 'running (not blocked in a system call)' };
    const writev = WRITEV_NR[input.arch ?? 'x86_64'];
    if (sc.nr !== writev) return { ...base, blocked: false, why: `blocked in system call ${sc.nr}, not writev (${writev})` };
    const argFd = Number(sc.args[0] ?? -1n);
    const on = hfi1.find((h) => h.fd === argFd);
    if (!on) return { ...base, blocked: false, why: `in writev on fd ${argFd}, which is not a ${handleName}` };
    base.evidence.push(`syscall: writev on fd ${argFd}`);
    unit = on.unit;
    fd = on.fd;
  }
  if (input.stack !== null) {
    const frames = parseProcStack(input.stack, `${dir}/stack`);
    const top = frames.find((f) => f.module === module || f.symbol?.startsWith(`${module}_`));
    if (top?.symbol === fn) {
      base.evidence.push(`stack: ${fn}+0x${(top.offset ?? 0).toString(16)}`);
      return { ...base, blocked: true, unit, fd };
    }
    return {
      ...base,
      blocked: false,
      why: top ? `the top ${module} frame is ${top.symbol}` : `no ${module} frame on the kernel stack`,
    };
  }
  missing.push(`${dir}/stack`);
  const wchan = input.wchan?.trim() ?? null;
  if (wchan === null) missing.push(`${dir}/wchan`);
  else if (wchan === fn) {
    base.evidence.push(`wchan: ${wchan}`);
    return { ...base, blocked: true, unit, fd };
  } else if (wchan !== '0' && wchan !== '') return { ...base, blocked: false, why: `sleeping in ${wchan}` };
  else missing.push(`${dir}/wchan (reads 0: hidden, or an unwinder that cannot tell)`);
  return { ...base, blocked: null, missing };
}
